"""The shared core every stage uses, by job: reading and checking a study config (config), what the workflow
plans from it (plan: cells, models, resources, each rule's code), the files a run writes and reads back (records)
and the helpers every step runs with (steps: entry scripts, external commands, files, the hub, the repo)."""
