# One cell = one fresh llama-server on 127.0.0.1, one request, one atomically written record. Every cell rule
# reads its condition's setup (condition_setup: build, models, measurement code, server argv, settings) and its
# tasks' prompt manifests; its outputs are its cells, in the order its server answers them (run_cells.py measures
# them in that order).
# A "warm" condition runs several cells on one server, in order (each cell still its own file): per its warm_scope
# (the condition's own, else the config's), a task's repeats at one temperature (cell_sequence) or every selected
# cell of the condition (condition_sequence); a scope no warm condition runs with has no rule (its many outputs
# would slow planning).
# Their functions (setup_inputs, server_resources, ...) are specbench.workflow.plan.Plan's.

# A cell's path without its suffix, from the declared coordinates (specbench.core.plan.coordinates):
# results/cells/{machine}/{models}/{prompt}/{condition}/t{temperature}/r{repeat}, with {build} after the machine in a
# run with builds and c{concurrency} after the condition in a run with a load dimension (config load)
CELL_STEM = PLAN.cell_stem
CELL_PATTERN = f"{CELL_STEM}.json"
# A warm sequence's logs (rule cell_sequence): one server for a task's repeats at one temperature (a run with a load
# dimension has no warm condition: the config check refuses one)
SEQUENCE_STEM = (
    "results/cells/{machine}/{build}/{models}/{prompt}/{condition}/t{temperature}/warm"
    if PLAN.builds_declared
    else "results/cells/{machine}/{models}/{prompt}/{condition}/t{temperature}/warm"
)
# One server for the whole condition (rule condition_sequence): its logs under a folder no task can be named ('_',
# see schema $defs.name)
CONDITION_STEM = (
    "results/cells/{machine}/{build}/{models}/_all-tasks/{condition}/warm"
    if PLAN.builds_declared
    else "results/cells/{machine}/{models}/_all-tasks/{condition}/warm"
)
# What a cell job reads: its condition's setup (made by condition_setup: the build, the verified models, the
# measurement code, the settings) and its tasks' prompt manifests. Two plain patterns - no input function and no
# per-job params - so planning a large matrix stays fast. A setup is per models folder too, so another model's run
# never remakes this one's setups (and so never makes its cells out of date).
SETUP_STEM = (
    "{build}/{models}/{condition}" if PLAN.builds_declared else "{models}/{condition}"
)
CONDITION_SETUP = f"results/setup/{SETUP_STEM}.json"


rule cell:
    input:
        setup=CONDITION_SETUP,
        prompt="results/prompts/{prompt}.json",
    output:
        CELL_PATTERN,
    log:
        server=f"{CELL_STEM}.server.log",
        gpu=f"{CELL_STEM}.gpu.jsonl",
        run=f"logs/{CELL_STEM}.log",
    benchmark:
        f"benchmarks/{CELL_STEM}.tsv"
    wildcard_constraints:
        condition=PLAN.conditions_regex("fresh"),
    priority: PLAN.cell_priority
    conda:
        "../envs/pipeline.yaml"
    resources:
        **PLAN.server_resources("fresh"),
    script:
        "../scripts/run_cells.py"


if "task" in PLAN.warm_scopes:

    use rule cell as cell_sequence with:
        output:
            expand(CELL_PATTERN, repeat=PLAN.repeats, allow_missing=True),
        log:
            server=f"{SEQUENCE_STEM}.server.log",
            gpu=f"{SEQUENCE_STEM}.gpu.jsonl",
            run=f"logs/{SEQUENCE_STEM}.log",
        benchmark:
            f"benchmarks/{SEQUENCE_STEM}.tsv"
        wildcard_constraints:
            condition=PLAN.conditions_regex("warm", "task"),
        resources:
            **PLAN.server_resources("task"),


if "condition" in PLAN.warm_scopes:

    use rule cell as condition_sequence with:
        input:
            setup=CONDITION_SETUP,
            prompt=expand(
                "results/prompts/{prompt}.json", prompt=PLAN.selected_prompt_keys
            ),
        output:
            PLAN.condition_sequence_files,
        log:
            server=f"{CONDITION_STEM}.server.log",
            gpu=f"{CONDITION_STEM}.gpu.jsonl",
            run=f"logs/{CONDITION_STEM}.log",
        benchmark:
            f"benchmarks/{CONDITION_STEM}.tsv"
        wildcard_constraints:
            condition=PLAN.conditions_regex("warm", "condition"),
        resources:
            **PLAN.server_resources("condition"),


rule condition_setup:
    # What every cell of a condition is served with, resolved once: the binary and its build manifest, the verified
    # models, the measurement code's fingerprint, the server's argv and the measurement settings. A change to any
    # of them makes it again, and so reruns the condition's cells.
    input:
        unpack(PLAN.setup_inputs),
    output:
        CONDITION_SETUP,
    log:
        f"logs/setup/{SETUP_STEM}.log",
    benchmark:
        f"benchmarks/setup/{SETUP_STEM}.tsv"
    priority: PLAN.prepare_priority
    conda:
        "../envs/pipeline.yaml"
    params:
        settings=PLAN.setup_settings,
        cells=PLAN.setup_cells,
    script:
        "../scripts/condition_setup.py"


rule code_manifest:
    # The code of a rule that runs many jobs (the cells, the explanations) as one file: an edit of any of its modules
    # reruns every one of those jobs.
    input:
        code=lambda wildcards: PLAN.code(f"{wildcards.entry}.py"),
        own=PLAN.code("code_manifest.py"),
    output:
        "results/code/{entry}.json",
    log:
        "logs/code_manifest/{entry}.log",
    benchmark:
        "benchmarks/code_manifest/{entry}.tsv"
    wildcard_constraints:
        entry="run_cells|explain_divergence",
    priority: PLAN.prepare_priority
    conda:
        "../envs/pipeline.yaml"
    params:
        entry=lambda wildcards: f"{wildcards.entry}.py",
    script:
        "../scripts/code_manifest.py"
