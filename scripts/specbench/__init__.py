"""specbench: the pipeline's logic, one sub-package per stage, dependencies pointing from the measurement towards the
report: core (shared), build, models, tasks, tiny (preparation), contention and measure (the cells), analysis (the
table and everything derived from it), claims, report."""
