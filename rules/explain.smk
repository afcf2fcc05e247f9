# Why a temperature-0 output differs from its reference's (the baseline's cell of the same repeat; for the
# baseline's own repeats, its first): one job per compared cell, after the cells and outside any timed window. It
# reads the two cell files (never writes them) and, where their tokens differ, asks a fresh server of the baseline
# condition's setup for the model's own log-probabilities there (specbench.measure.explain); where they are
# identical it starts no server. The table reads the answers (specbench.analysis.divergence).


rule explain_divergence:
    input:
        cell=GREEDY_CELL,
        reference=SAME_REPEAT_REFERENCE,
        setup=BASELINE_SETUP,
        code=EXPLAIN_CODE_MANIFEST,
    output:
        EXPLANATION_PATTERN,
    log:
        server=f"{EXPLANATION_STEM}.server.log",
        run=f"logs/{EXPLANATION_STEM}.log",
    benchmark:
        f"benchmarks/{EXPLANATION_STEM}.tsv"
    wildcard_constraints:
        condition=OTHER_CONDITIONS_REGEX,
    conda:
        "../envs/pipeline.yaml"
    threads: rule_threads("explain_divergence")
    resources:
        **rule_resources("explain_divergence"),
    script:
        "../scripts/explain_divergence.py"


rule explain_control:
    input:
        cell=GREEDY_CELL,
        reference=FIRST_REPEAT_REFERENCE,
        setup=BASELINE_SETUP,
        code=EXPLAIN_CODE_MANIFEST,
    output:
        EXPLANATION_PATTERN,
    log:
        server=f"{EXPLANATION_STEM}.server.log",
        run=f"logs/{EXPLANATION_STEM}.log",
    benchmark:
        f"benchmarks/{EXPLANATION_STEM}.tsv"
    wildcard_constraints:
        condition=re.escape(BASELINE),
        repeat=LATER_REPEATS_REGEX,
    conda:
        "../envs/pipeline.yaml"
    threads: rule_threads("explain_control")
    resources:
        **rule_resources("explain_control"),
    script:
        "../scripts/explain_divergence.py"
