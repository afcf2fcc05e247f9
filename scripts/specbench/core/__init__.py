"""The shared core every stage uses: file helpers, entry-script helpers, external commands, config validation,
prompt templates, the cell matrix, the record version and the code closure of each rule."""
