"""The files a run writes and later reads back: the cell record's version, the server log lines it keeps,
explanation records, and whose measurement a cell file holds."""
