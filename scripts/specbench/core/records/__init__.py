"""The files a run writes and later reads back: the cell record's version, explanation records, and whose
measurement a cell file holds."""
