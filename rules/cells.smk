# One cell = one fresh llama-server on 127.0.0.1, one request, one atomically written record.
# A "warm" condition runs several cells on one server, in order (each cell still its own file): per config
# 'warm_scope', a task's repeats at one temperature (cell_sequence) or every selected cell of the condition
# (condition_sequence); the other warm rule's condition constraint matches nothing.


rule cell:
    input:
        unpack(cell_inputs),
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
    threads: rule_threads("cell")
    resources:
        **rule_resources("cell"),
    params:
        server_args=server_args,
        requires=lambda wc: config["conditions"][wc.condition]["requires"],
        cells=job_cells,
        max_tokens=task_max_tokens,
        reasoning=config["reasoning"],
        base_seed=config["seed"],
        startup_timeout_s=config["server"]["startup_timeout_s"],
        request_timeout_s=config["server"]["request_timeout_s"],
        sample_interval_s=config["measurement"]["sample_interval_s"],
        max_attempts=config["measurement"]["max_attempts"],
        max_load_per_cpu=config["measurement"]["max_load_per_cpu"],
        max_foreign_cpu=config["measurement"]["max_foreign_cpu"],
        scope="fresh",
    script:
        "../scripts/run_cells.py"


rule cell_sequence:
    input:
        unpack(cell_inputs),
    output:
        expand(CELL_PATTERN, repeat=REPEATS, allow_missing=True),
    log:
        server=f"{SEQUENCE_STEM}.server.log",
        gpu=f"{SEQUENCE_STEM}.gpu.jsonl",
        run=f"logs/{SEQUENCE_STEM}.log",
    benchmark:
        f"benchmarks/{SEQUENCE_STEM}.tsv"
    wildcard_constraints:
        condition=conditions_regex("warm", scope="task"),
    priority: cell_priority
    conda:
        "../envs/pipeline.yaml"
    threads: rule_threads("cell_sequence")
    resources:
        **rule_resources("cell_sequence"),
    params:
        server_args=server_args,
        requires=lambda wc: config["conditions"][wc.condition]["requires"],
        cells=job_cells,
        max_tokens=task_max_tokens,
        reasoning=config["reasoning"],
        base_seed=config["seed"],
        startup_timeout_s=config["server"]["startup_timeout_s"],
        request_timeout_s=config["server"]["request_timeout_s"],
        sample_interval_s=config["measurement"]["sample_interval_s"],
        max_attempts=config["measurement"]["max_attempts"],
        max_load_per_cpu=config["measurement"]["max_load_per_cpu"],
        max_foreign_cpu=config["measurement"]["max_foreign_cpu"],
        scope="task",
    script:
        "../scripts/run_cells.py"


rule condition_sequence:
    input:
        unpack(cell_inputs),
    output:
        expand(
            CELL_PATTERN,
            task=SELECTED_TASKS,
            temperature=TEMPERATURES,
            repeat=REPEATS,
            allow_missing=True,
        ),
    log:
        server=f"{CONDITION_STEM}.server.log",
        gpu=f"{CONDITION_STEM}.gpu.jsonl",
        run=f"logs/{CONDITION_STEM}.log",
    benchmark:
        f"benchmarks/{CONDITION_STEM}.tsv"
    wildcard_constraints:
        condition=conditions_regex("warm", scope="condition"),
    priority: cell_priority
    conda:
        "../envs/pipeline.yaml"
    threads: rule_threads("condition_sequence")
    resources:
        **rule_resources("condition_sequence"),
    params:
        server_args=server_args,
        requires=lambda wc: config["conditions"][wc.condition]["requires"],
        cells=job_cells,
        max_tokens=task_max_tokens,
        reasoning=config["reasoning"],
        base_seed=config["seed"],
        startup_timeout_s=config["server"]["startup_timeout_s"],
        request_timeout_s=config["server"]["request_timeout_s"],
        sample_interval_s=config["measurement"]["sample_interval_s"],
        max_attempts=config["measurement"]["max_attempts"],
        max_load_per_cpu=config["measurement"]["max_load_per_cpu"],
        max_foreign_cpu=config["measurement"]["max_foreign_cpu"],
        scope="condition",
    script:
        "../scripts/run_cells.py"
