"""Tasks: prompt manifests rendered from templates, input files and dataset rows (render), and dataset rows from
the hub (datasets)."""
