"""What every step runs with: entry-script helpers, external commands, atomic file writes, hub snapshots
and the workflow's root folder."""
