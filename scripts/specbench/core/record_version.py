"""The cell record's version: the one number the cell runner writes and the table and the imports read.

8: the build's backend (``machine.backend``, ``provenance.llama_cpp.backend`` instead of ``cuda``), the devices
``llama-server --list-devices`` listed where the cell ran (``machine.llama_devices``) and how its GPU was watched
(``contention.gpu_watch``, ``contention.backend``); ``quiet_waits``, the waits for a quiet machine between contended
attempts (how long, why, how each ended), and a contended attempt's ``busiest`` other processes in words; the cell's
``prompt``, the member of its task's prompt set ('' for a task of one prompt).
7: the record holds only what was measured (``timing`` instead of derived ``figures``, the speculative lines of the
server log as ``server.log_lines``, the GSM8K ``references`` it was asked about); GSM8K scores and log-derived
figures are computed when the table is built. 6: ``server.scope``. 5: ``cell.machine``."""

RECORD_VERSION = 8
