"""Analysis: the cell records read into one typed per-cell table (cell_table), with what is derived from them computed
here, not in the measurement: the server's figures (derived), its log (server_log), GSM8K answers (gsm8k), identity;
the summaries and intervals every report number comes from, written by rule tables (tabulate); the cell index;
records of other versions and runs (record_reader, imports); each prompt's spread (prompt_spread)."""
