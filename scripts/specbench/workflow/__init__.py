"""The workflow layer: what the Snakefile and rules/*.smk plan from the validated config (paths, input and params
functions, resources), and the hooks that run before any job."""
