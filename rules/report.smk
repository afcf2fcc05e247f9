# Every cell and its explanation -> the per-cell table (pandas) -> the report (HTML + Markdown), its summaries as CSV,
# the claims check and provenance.json.


rule aggregate:
    input:
        cells=cell_files(),
        explanations=explanation_files(),
        imports=import_indexes(),
        code=code("aggregate.py"),
    output:
        table="results/cells.parquet",
        cells="results/runs.csv",
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
        # the summaries the report shows, as CSV (specbench.report.assemble.SUMMARY_FILES)
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
        # per temperature: the task effect against the method effect (the study's thesis, analysis.thesis)
        thesis="results/thesis.csv",
        # The figures as files too (the HTML report embeds them): in snakemake --report, and linked from report.md
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
        "logs/report.log",
    benchmark:
        "benchmarks/report.tsv"
    conda:
        "../envs/pipeline.yaml"
    params:
        names={"tasks": list(config["tasks"]), "conditions": list(config["conditions"])},
        name=config["name"],
        machines=MACHINE_LABELS,
        machine_descriptions={
            m["label"]: m["description"]
            for m in [*config["machines"], *config["imports"]]
        },
        model_note=sb_plan.model_note(config),
        baseline=config["baseline"],
        study_setup=config["study_setup"],
        # the flags every condition shares: the config's and the chat template's (a built-in one by name)
        server_args=config["server"]["args"]
        + sb_chat.server_flags(sb_chat.setting(config)),
        task_order=list(config["tasks"]),
        condition_order=list(config["conditions"]),
        stand_in_tasks=[
            name
            for name, task in config["tasks"].items()
            if (task.get("dataset") or {}).get("stand_in")
        ],
        expected_cells=cell_files(),
        sweeps={n: c["swept"] for n, c in config["conditions"].items() if "swept" in c},
        builds=BUILD_LABELS,
        build_descriptions={
            b.label: "; ".join(
                text
                for text in (
                    b.description,
                    b.llama_cpp[b.llama_cpp["source"]].get("label"),
                )
                if text
            )
            for b in BUILDS
            if BUILDS_DECLARED
        },
        config_sha256=CONFIG_SHA256,
        workflow_commit=WORKFLOW_COMMIT,
    script:
        "../scripts/report.py"
