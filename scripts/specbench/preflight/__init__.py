"""The preflight: before any job of a run, what the planned jobs need (disk, toolkit, GPU, the hub, write access)
against what this machine has, as one table, and a stop naming each problem with what to do."""
