"""The cell record's version: the one number the cell runner writes and the table and the imports read.

8: ``quiet_waits``, the waits for a quiet machine between contended attempts (how long, why, how each ended), and a
contended attempt's ``busiest`` other processes in words. 7: the record holds only what was measured (``timing`` instead
of derived ``figures``, the speculative lines of the server log as ``server.log_lines``, the GSM8K ``references`` it was
asked about); GSM8K scores and log-derived figures are computed when the table is built. 6: ``server.scope``. 5:
``cell.machine``."""

RECORD_VERSION = 8
