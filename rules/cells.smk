# One cell = one fresh llama-server on 127.0.0.1, one request, one atomically written record. Every cell rule
# reads its condition's setup (condition_setup: build, models, measurement code, server argv, settings) and its
# tasks' prompt manifests; its outputs are its cells, in the order its server answers them (run_cells.py measures
# them in that order).
# A "warm" condition runs several cells on one server, in order (each cell still its own file): per its warm_scope
# (the condition's own, else the config's), a task's repeats at one temperature (cell_sequence) or every selected
# cell of the condition (condition_sequence); a scope no warm condition runs with has no rule (its many outputs
# would slow planning).
# Their functions (setup_inputs, server_resources, ...) are in rules/common.smk.

# What a cell job reads: its condition's setup (made by condition_setup: the build, the verified models, the
# measurement code, the settings) and its tasks' prompt manifests. Two plain patterns - no input function and no
# per-job params - so planning a large matrix stays fast. A setup is per models folder too, so another model's run
# never remakes this one's setups (and so never makes its cells out of date).
SETUP_STEM = (
    "{build}/{models}/{condition}" if BUILDS_DECLARED else "{models}/{condition}"
)
CONDITION_SETUP = f"results/setup/{SETUP_STEM}.json"


# The conditions of the selected cells, in config order: those the cell rules' jobs serve
SELECTED_CONDITIONS = [
    c for c in config["conditions"] if c in {cell.condition for cell in CELLS}
]


rule cell:
    input:
        setup=CONDITION_SETUP,
        prompt=PROMPT_MANIFEST,
    output:
        CELL_PATTERN,
    log:
        server=f"{CELL_STEM}.server.log",
        gpu=f"{CELL_STEM}.gpu.jsonl",
        run=f"logs/{CELL_STEM}.log",
    benchmark:
        f"benchmarks/{CELL_STEM}.tsv"
    wildcard_constraints:
        condition=conditions_regex("fresh"),
    priority: cell_priority
    conda:
        "../envs/pipeline.yaml"
    resources:
        **server_resources("fresh"),
    script:
        "../scripts/run_cells.py"


if "task" in WARM_SCOPES:

    use rule cell as cell_sequence with:
        output:
            expand(CELL_PATTERN, repeat=REPEATS, allow_missing=True),
        log:
            server=f"{SEQUENCE_STEM}.server.log",
            gpu=f"{SEQUENCE_STEM}.gpu.jsonl",
            run=f"logs/{SEQUENCE_STEM}.log",
        benchmark:
            f"benchmarks/{SEQUENCE_STEM}.tsv"
        wildcard_constraints:
            condition=conditions_regex("warm", "task"),
        resources:
            **server_resources("task"),


if "condition" in WARM_SCOPES:

    use rule cell as condition_sequence with:
        input:
            setup=CONDITION_SETUP,
            prompt=expand(PROMPT_MANIFEST, prompt=SELECTED_PROMPT_KEYS),
        output:
            CONDITION_SEQUENCE_FILES,
        log:
            server=f"{CONDITION_STEM}.server.log",
            gpu=f"{CONDITION_STEM}.gpu.jsonl",
            run=f"logs/{CONDITION_STEM}.log",
        benchmark:
            f"benchmarks/{CONDITION_STEM}.tsv"
        wildcard_constraints:
            condition=conditions_regex("warm", "condition"),
        resources:
            **server_resources("condition"),


rule condition_setup:
    # What every cell of a condition is served with, resolved once: the binary and its build manifest, the verified
    # models, the measurement code's fingerprint, the server's argv and the measurement settings. A change to any
    # of them makes it again, and so reruns the condition's cells.
    input:
        unpack(setup_inputs),
    output:
        CONDITION_SETUP,
    log:
        f"logs/setup/{SETUP_STEM}.log",
    benchmark:
        f"benchmarks/setup/{SETUP_STEM}.tsv"
    priority: PREPARE_PRIORITY
    conda:
        "../envs/pipeline.yaml"
    params:
        settings=setup_settings,
        cells=setup_cells,
    script:
        "../scripts/condition_setup.py"


rule code_manifest:
    # The code of a rule that runs many jobs (the cells, the explanations) as one file: an edit of any of its modules
    # reruns every one of those jobs.
    input:
        code=lambda wildcards: code(f"{wildcards.entry}.py"),
        own=code("code_manifest.py"),
    output:
        CODE_MANIFEST,
    log:
        "logs/code_manifest/{entry}.log",
    benchmark:
        "benchmarks/code_manifest/{entry}.tsv"
    wildcard_constraints:
        entry="run_cells|explain_divergence",
    priority: PREPARE_PRIORITY
    conda:
        "../envs/pipeline.yaml"
    params:
        entry=lambda wildcards: f"{wildcards.entry}.py",
    script:
        "../scripts/code_manifest.py"
