"""What the Snakefile's onstart, onsuccess and onerror hooks run in the main Snakemake process: no rule's code."""
