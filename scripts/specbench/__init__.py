"""specbench: the pipeline's logic, one sub-package per stage, dependencies pointing from the measurement towards the
report: core (shared), llama_cpp, models, tasks, tiny (preparation), contention and measure (the cells), analysis (the
table and everything derived from it), claims, report; preflight (what the Snakefile's onstart runs, no rule's code)."""
