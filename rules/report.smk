# Every cell -> results/runs.csv and results/summary.csv (pandas) -> results/report.md.


rule aggregate:
    input:
        cells=cell_files(),
    output:
        runs="results/runs.csv",
        summary="results/summary.csv",
        acceptance="results/acceptance.csv",
        identity="results/identity.csv",
        identity_summary="results/identity_summary.csv",
    log:
        "logs/aggregate.log",
    benchmark:
        "benchmarks/aggregate.tsv"
    conda:
        "../envs/pipeline.yaml"
    params:
        baseline=config["baseline"],
    script:
        "../scripts/aggregate.py"


rule report:
    input:
        runs="results/runs.csv",
        summary="results/summary.csv",
        acceptance="results/acceptance.csv",
        identity_summary="results/identity_summary.csv",
        build=LLAMA_BIN_DIR,
        model=model_manifest("target"),
    output:
        "results/report.md",
    log:
        "logs/report.log",
    benchmark:
        "benchmarks/report.tsv"
    conda:
        "../envs/pipeline.yaml"
    params:
        name=config["name"],
        baseline=config["baseline"],
        is_study_setup=config["is_study_setup"],
    script:
        "../scripts/report.py"
