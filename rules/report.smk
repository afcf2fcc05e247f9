# Every cell and its explanation -> the per-cell table (aggregate) -> its summaries (tables) -> the claims judged
# (claims) and the figures (figures) -> the report (HTML + Markdown) and provenance.json (report).


rule aggregate:
    input:
        cells=cell_files(),
        explanations=explanation_files(),
        imports=import_indexes(),
        code=code("aggregate.py"),
    output:
        table="results/cells.parquet",
        runs="results/runs.csv",
        cells_index="results/cells_index.json",
    log:
        "logs/aggregate.log",
    benchmark:
        "benchmarks/aggregate.tsv"
    conda:
        "../envs/pipeline.yaml"
    params:
        baseline=config["baseline"],
        machines=MACHINE_LABELS,
        builds=BUILD_LABELS,
        code_fingerprint=fingerprint(code("run_cells.py")),
    script:
        "../scripts/aggregate.py"


rule record_predictions:
    # No input on purpose: the stamp is taken once, before the first cell, and never redone because the file changed.
    output:
        PREDICTIONS_STAMP,
    log:
        "logs/predictions.log",
    benchmark:
        "benchmarks/predictions.tsv"
    conda:
        "../envs/pipeline.yaml"
    params:
        path=PREDICTIONS,
    script:
        "../scripts/record_predictions.py"


rule tables:
    input:
        table="results/cells.parquet",
        code=code("tables.py"),
        schema=RESULT_SCHEMAS["tables"],
    output:
        # a folder: index.json and each build's and machine's summaries as Parquet (specbench.core.results.tables)
        tables=directory(TABLES),
        # the summaries as CSV, every machine's and build's in one file (specbench.analysis.tabulate.SUMMARY_FILES)
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
        # inside the requests: acceptance by draft position, time to first token and inter-token latency
        positions="results/positions.csv",
        latency="results/latency.csv",
        # per prompt of a prompt set: its multipliers, and the spread across prompts beside that across repeats
        prompts="results/prompts.csv",
        spread="results/prompt_spread.csv",
        # per temperature and view: the task side against the method side (the study's thesis, analysis.thesis)
        thesis="results/thesis.csv",
    log:
        "logs/tables.log",
    benchmark:
        "benchmarks/tables.tsv"
    conda:
        "../envs/pipeline.yaml"
    params:
        **sb_back_half.tables_params(config),
    script:
        "../scripts/tables.py"


rule claims:
    input:
        unpack(claims_inputs),
    output:
        claims=report(
            "results/claims.csv",
            caption="../report/claims.rst",
            category="Claims",
        ),
        judged=JUDGED,
    log:
        "logs/claims.log",
    benchmark:
        "benchmarks/claims.tsv"
    conda:
        "../envs/pipeline.yaml"
    params:
        **sb_back_half.claims_params(config),
    script:
        "../scripts/claims.py"


rule figures:
    input:
        table="results/cells.parquet",
        tables=TABLES,
        # the thesis figure draws the thesis claim's published multipliers beside this run's
        claims=config_path(config["claims"]),
        claims_schema=config_path("config/claims.schema.yaml"),
        code=code("figures.py"),
        schemas=[RESULT_SCHEMAS["tables"], RESULT_SCHEMAS["figures"]],
    output:
        index=FIGURES_INDEX,
        # in snakemake --report, and linked from report.md (the HTML report embeds them, and a sweep's figures)
        figures=[
            report(
                "results/figures/multipliers.png",
                caption="../report/multipliers.rst",
                category="Figures",
            ),
            report(
                "results/figures/acceptance.png",
                caption="../report/acceptance-figure.rst",
                category="Figures",
            ),
            report(
                "results/figures/timeline.png",
                caption="../report/timeline.rst",
                category="Figures",
            ),
            report(
                "results/figures/thesis.png",
                caption="../report/thesis.rst",
                category="Figures",
            ),
            report(
                "results/figures/positions.png",
                caption="../report/positions.rst",
                category="Figures",
            ),
            report(
                "results/figures/arrivals.png",
                caption="../report/arrivals.rst",
                category="Figures",
            ),
        ],
    log:
        "logs/figures.log",
    benchmark:
        "benchmarks/figures.tsv"
    conda:
        "../envs/pipeline.yaml"
    params:
        **sb_back_half.figures_params(config),
    script:
        "../scripts/figures.py"


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
    log:
        "logs/report.log",
    benchmark:
        "benchmarks/report.tsv"
    conda:
        "../envs/pipeline.yaml"
    params:
        **sb_back_half.report_params(
            config,
            expected_cells=cell_files(),
            config_sha256=CONFIG_SHA256,
            workflow_commit=WORKFLOW_COMMIT,
        ),
    script:
        "../scripts/report.py"
