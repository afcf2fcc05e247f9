# Every cell -> the aggregate tables (pandas) -> the report (HTML + Markdown), claims check and provenance.json.


rule aggregate:
    input:
        cells=cell_files(),
    output:
        table="results/cells.parquet",
        cells="results/runs.csv",
        summary=report(
            "results/summary.csv",
            caption="../report/summary.rst",
            category="Tables",
        ),
        acceptance=report(
            "results/acceptance.csv",
            caption="../report/acceptance.rst",
            category="Tables",
        ),
        identity="results/identity.csv",
        cells_index="results/cells_index.json",
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
        unpack(report_inputs),
    output:
        markdown="results/report.md",
        html=report(
            "results/report.html",
            caption="../report/report.rst",
            category="Report",
        ),
        provenance="results/provenance.json",
        claims=report(
            "results/claims.csv",
            caption="../report/claims.rst",
            category="Claims",
        ),
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
        expected_cells=cell_files(),
        config=config,
        workflow_commit=WORKFLOW_COMMIT,
    script:
        "../scripts/report.py"
