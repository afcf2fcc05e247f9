# Cell records of runs made elsewhere (config 'imports'): copied in as further machines, never measured again.

IMPORTS_DIR = "results/imports"
IMPORTS = {entry["label"]: config_path(entry["path"]) for entry in config["imports"]}
IMPORTS_REGEX = (
    "|".join(re.escape(label) for label in sorted(IMPORTS, key=len, reverse=True))
    or "(?!)"
)
# Every machine of the report, in order: those measured here, then the imported ones
MACHINE_LABELS = sb_back_half.report_machines(config)


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
    params:
        source=import_source,
        label=lambda wc: wc.imported,
        names={
            "tasks": list(config["tasks"]),
            "conditions": list(config["conditions"]),
            "temperatures": config["temperatures"],
            "prompts": {t: sb_cells.task_prompts(config, t) for t in config["tasks"]},
        },
    script:
        "../scripts/import_cells.py"
