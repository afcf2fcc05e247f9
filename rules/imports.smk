# Cell records of runs made elsewhere (config 'imports'): copied in as further machines, never measured again.

IMPORTS_REGEX = (
    "|".join(re.escape(label) for label in sorted(PLAN.imports, key=len, reverse=True))
    or "(?!)"
)


rule import_cells:
    input:
        source=PLAN.import_source,
        code=PLAN.code("import_cells.py"),
    output:
        cells=directory("results/imports/{imported}"),
        index="results/imports/{imported}.json",
    log:
        "logs/imports/{imported}.log",
    benchmark:
        "benchmarks/imports/{imported}.tsv"
    wildcard_constraints:
        imported=IMPORTS_REGEX,
    conda:
        "../envs/pipeline.yaml"
    params:
        source=PLAN.import_source,
        label=lambda wc: wc.imported,
        names={
            "tasks": list(config["tasks"]),
            "conditions": list(config["conditions"]),
            "temperatures": config["temperatures"],
            "prompts": PLAN.task_prompts,
        },
    script:
        "../scripts/import_cells.py"
