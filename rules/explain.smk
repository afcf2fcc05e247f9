# Why a temperature-0 output differs from its reference's (the baseline's cell of the same repeat; for the
# baseline's own repeats, its first): one job per compared cell, after the cells and outside any timed window. It
# reads the two cell files (never writes them) and, where their tokens differ, asks a fresh server of the baseline
# condition's setup for the model's own log-probabilities there (specbench.measure.explain); where they are
# identical it starts no server. The table reads the answers (specbench.analysis.divergence).

# The baseline's setup, and the cells compared (temperature 0), with their build's folder in a run with builds
BASELINE = PLAN.baseline
BASELINE_MODELS = PLAN.models_folders[BASELINE]
BASELINE_SETUP = (
    f"results/setup/{{build}}/{BASELINE_MODELS}/{BASELINE}.json"
    if PLAN.builds_declared
    else f"results/setup/{BASELINE_MODELS}/{BASELINE}.json"
)
# The compared cell, its explanation and its two possible references, from the declared coordinates (as the cell
# files': results/cells/{machine}/{models}/{prompt}/{condition}/t0.0/r{repeat}.json, with {build} and c{concurrency}
# where the run has them). A non-baseline cell's reference is the baseline's cell of the same repeat; the baseline's
# own (its control), the baseline's first repeat (specbench.core.records.explanations.reference_repeat says the same)
GREEDY_CELL = PLAN.greedy_cell_pattern
EXPLANATION_STEM = PLAN.explanation_pattern.removesuffix(".json")
SAME_REPEAT_REFERENCE = PLAN.reference_pattern
FIRST_REPEAT_REFERENCE = PLAN.first_reference_pattern
OTHER_CONDITIONS_REGEX = (
    "|".join(
        re.escape(c)
        for c in sorted(config["conditions"], key=len, reverse=True)
        if c != BASELINE
    )
    or "(?!)"
)
LATER_REPEATS_REGEX = "|".join(str(r) for r in PLAN.repeats if r != 1) or "(?!)"


rule explain_divergence:
    input:
        cell=GREEDY_CELL,
        reference=SAME_REPEAT_REFERENCE,
        setup=BASELINE_SETUP,
        code="results/code/explain_divergence.json",
    output:
        f"{EXPLANATION_STEM}.json",
    log:
        server=f"{EXPLANATION_STEM}.server.log",
        run=f"logs/{EXPLANATION_STEM}.log",
    benchmark:
        f"benchmarks/{EXPLANATION_STEM}.tsv"
    wildcard_constraints:
        condition=OTHER_CONDITIONS_REGEX,
    conda:
        "../envs/pipeline.yaml"
    resources:
        **PLAN.server_resources("fresh", serving=BASELINE),
    script:
        "../scripts/explain_divergence.py"


use rule explain_divergence as explain_control with:
    input:
        cell=GREEDY_CELL,
        reference=FIRST_REPEAT_REFERENCE,
        setup=BASELINE_SETUP,
        code="results/code/explain_divergence.json",
    wildcard_constraints:
        condition=re.escape(BASELINE),
        repeat=LATER_REPEATS_REGEX,
