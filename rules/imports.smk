# Cell records of runs made elsewhere (config 'imports'): copied in as further machines, never measured again.


rule import_cells:
    input:
        source=import_source,
        code=code("import_cells.py"),
    output:
        cells=directory(f"{IMPORTS_DIR}/{{imported}}"),
        index=f"{IMPORTS_DIR}/{{imported}}.json",
    log:
        "logs/imports/{imported}.log",
    benchmark:
        "benchmarks/imports/{imported}.tsv"
    wildcard_constraints:
        imported=IMPORTS_REGEX,
    conda:
        "../envs/pipeline.yaml"
    threads: rule_threads("import_cells")
    resources:
        **rule_resources("import_cells"),
    params:
        source=import_source,
        label=lambda wc: wc.imported,
        names={
            "tasks": list(config["tasks"]),
            "conditions": list(config["conditions"]),
            "temperatures": config["temperatures"],
            "prompts": {t: sb_matrix.task_prompts(config, t) for t in config["tasks"]},
        },
    script:
        "../scripts/import_cells.py"
