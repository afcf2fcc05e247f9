"""The files a run writes and later reads back: the cell record's version, the server log lines it keeps,
explanation records, whose measurement a cell file holds, and the
run's setup in words (run_setup: the devices its server used, where a model file came from)."""
