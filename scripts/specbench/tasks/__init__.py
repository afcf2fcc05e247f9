"""Tasks: prompt manifests rendered from templates, input files and dataset rows (prompts), and dataset rows from
the hub (datasets)."""
