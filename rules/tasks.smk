# Task prompts as data: template + input files (+ dataset rows) -> a prompt manifest per prompt key (a task's one
# prompt, or each member of its prompt set).


rule render_prompt:
    input:
        unpack(prompt_inputs),
    output:
        PROMPT_MANIFEST,
    log:
        "logs/prompts/{prompt}.log",
    benchmark:
        "benchmarks/prompts/{prompt}.tsv"
    priority: PREPARE_PRIORITY
    conda:
        "../envs/pipeline.yaml"
    threads: rule_threads("render_prompt")
    resources:
        **rule_resources("render_prompt"),
    params:
        task=prompt_spec,
        max_tokens=lambda wc: prompt_spec(wc).get("max_tokens", config["max_tokens"]),
    script:
        "../scripts/render_prompt.py"


rule hf_dataset:
    input:
        code=code("hf_dataset.py"),
    output:
        "resources/datasets/{task}.jsonl",
    log:
        "logs/datasets/{task}.log",
    benchmark:
        "benchmarks/datasets/{task}.tsv"
    wildcard_constraints:
        task=TASK_NAMES_REGEX,
    priority: PREPARE_PRIORITY
    retries: 3
    conda:
        "../envs/pipeline.yaml"
    threads: rule_threads("hf_dataset")
    resources:
        **rule_resources("hf_dataset"),
    params:
        dataset=lambda wc: config["tasks"][wc.task]["dataset"],
    script:
        "../scripts/hf_dataset.py"
