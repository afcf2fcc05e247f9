# Task prompts as data: template + input files (+ dataset rows) -> a prompt manifest per prompt key (a task's one
# prompt, or each member of its prompt set).

PROMPT_MANIFEST = "results/prompts/{prompt}.json"
# Task names, for what is per task whatever its prompts (a hub dataset's split)
TASK_NAMES_REGEX = "|".join(
    re.escape(t) for t in sorted(config["tasks"], key=len, reverse=True)
)


rule render_prompt:
    input:
        unpack(PLAN.prompt_inputs),
    output:
        PROMPT_MANIFEST,
    log:
        "logs/prompts/{prompt}.log",
    benchmark:
        "benchmarks/prompts/{prompt}.tsv"
    priority: PLAN.prepare_priority
    conda:
        "../envs/pipeline.yaml"
    params:
        task=PLAN.prompt_spec,
        max_tokens=PLAN.prompt_max_tokens,
    script:
        "../scripts/render_prompt.py"


rule hf_dataset:
    input:
        code=PLAN.code("hf_dataset.py"),
    output:
        "resources/datasets/{task}.jsonl",
    log:
        "logs/datasets/{task}.log",
    benchmark:
        "benchmarks/datasets/{task}.tsv"
    wildcard_constraints:
        task=TASK_NAMES_REGEX,
    priority: PLAN.prepare_priority
    retries: 3
    conda:
        "../envs/pipeline.yaml"
    params:
        dataset=lambda wc: config["tasks"][wc.task]["dataset"],
    script:
        "../scripts/hf_dataset.py"


if PLAN.prompt_set:

    rule prompt_set:
        # A public prompt set (tasks: {from: ...}): fetched at its pinned revision, its sha256 checked, k questions per
        # category chosen and written one per line (rule render_prompt makes each question's manifest from it).
        input:
            unpack(PLAN.prompt_set_inputs),
        output:
            "resources/prompt_sets/{source}.jsonl",
        log:
            "logs/prompt_sets/{source}.log",
        benchmark:
            "benchmarks/prompt_sets/{source}.tsv"
        wildcard_constraints:
            source="spec-bench|speed-bench|mt-bench",
        priority: PLAN.prepare_priority
        retries: 3
        conda:
            "../envs/pipeline.yaml"
        params:
            spec=PLAN.prompt_set_spec,
        script:
            "../scripts/prompt_set.py"
