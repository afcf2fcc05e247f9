# Every cell and its explanation -> the per-cell table (aggregate) -> its summaries (tables) -> the claims judged
# (claims) and the figures (figures) -> the report (HTML + Markdown) and provenance.json (report). Each rule's params
# are what its settings take (specbench.workflow.rule_params).

from specbench.core.plan import code as sb_code
from specbench.core.plan import models as sb_models
from specbench.workflow import rule_params as sb_params


rule aggregate:
    input:
        cells=PLAN.cell_files(),
        explanations=PLAN.explanation_files(),
        imports=PLAN.import_indexes(),
        code=PLAN.code("aggregate.py"),
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
        machines=PLAN.machine_labels,
        builds=PLAN.build_labels,
        code_fingerprint=sb_code.fingerprint(PLAN.code("run_cells.py")),
    script:
        "../scripts/aggregate.py"


rule record_predictions:
    # No input on purpose: the stamp is taken once, before the first cell, and never redone because the file changed.
    output:
        "results/predictions.stamp.json",
    log:
        "logs/predictions.log",
    benchmark:
        "benchmarks/predictions.tsv"
    conda:
        "../envs/pipeline.yaml"
    params:
        path=PLAN.predictions,
    script:
        "../scripts/record_predictions.py"


rule tables:
    input:
        table="results/cells.parquet",
        code=PLAN.code("tables.py"),
        schema=PLAN.result_schemas["tables"],
    output:
        # a folder: index.json and each build's and machine's summaries as Parquet (specbench.core.results.tables)
        tables=directory("results/tables"),
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
        # per task (a category of prompts): its multiplier and acceptance with intervals over prompts and repeats
        categories="results/categories.csv",
        # per temperature and view: the task side against the method side (the study's thesis, analysis.thesis)
        thesis="results/thesis.csv",
        # per concurrency N (config load): the multiplier at each load, N*, aggregate tokens/s, identity under load
        load="results/load.csv",
    log:
        "logs/tables.log",
    benchmark:
        "benchmarks/tables.tsv"
    conda:
        "../envs/pipeline.yaml"
    params:
        baseline=config["baseline"],
        machines=PLAN.machine_labels,
        builds=PLAN.build_labels,
    script:
        "../scripts/tables.py"


rule claims:
    input:
        unpack(PLAN.claims_inputs),
    output:
        claims=report(
            "results/claims.csv",
            caption="../report/claims.rst",
            category="Claims",
        ),
        judged="results/judged.json",
    log:
        "logs/claims.log",
    benchmark:
        "benchmarks/claims.tsv"
    conda:
        "../envs/pipeline.yaml"
    params:
        baseline=config["baseline"],
        names=sb_params.names(config),
        study_setup=config["study_setup"],
        server_args=sb_params.claims_server_args(config),
    script:
        "../scripts/claims.py"


rule figures:
    input:
        table="results/cells.parquet",
        tables="results/tables",
        # the thesis figure draws the thesis claim's published multipliers beside this run's
        claims=PLAN.config_path(config["claims"]),
        claims_schema=PLAN.config_path("config/claims.schema.yaml"),
        code=PLAN.code("figures.py"),
        schemas=[PLAN.result_schemas["tables"], PLAN.result_schemas["figures"]],
    output:
        index="results/figures/index.json",
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
        baseline=config["baseline"],
        names=sb_params.names(config),
        task_order=list(config["tasks"]),
        condition_order=list(config["conditions"]),
        sweeps=sb_params.sweeps(config),
    script:
        "../scripts/figures.py"


rule report:
    input:
        unpack(lambda wildcards: PLAN.report_inputs(rules.figures.output.figures)),
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
        name=config["name"],
        baseline=config["baseline"],
        study_setup=config["study_setup"],
        condition_order=list(config["conditions"]),
        expected_cells=PLAN.cell_files(),
        config_sha256=PLAN.config_sha256,
        workflow_commit=PLAN.workflow_commit,
        machine_descriptions=sb_params.machine_descriptions(config),
        stand_in_tasks=sb_params.stand_in_tasks(config),
        model_note=sb_models.model_note(config),
        sweeps=sb_params.sweeps(config),
        build_descriptions=sb_params.build_descriptions(config),
        left_out=sb_params.left_out(config),
    script:
        "../scripts/report.py"
