# Why a temperature-0 output differs from its reference's (the baseline's cell of the same repeat; for the
# baseline's own repeats, its first): one job per compared cell, after the cells and outside any timed window. It
# reads the two cell files (never writes them) and, where their tokens differ, asks a fresh server of the baseline
# condition's setup for the model's own log-probabilities there (specbench.measure.explain); where they are
# identical it starts no server. The table reads the answers (specbench.analysis.divergence).

from specbench.core.records import explanations as sb_explanations

EXPLAIN_CODE_MANIFEST = CODE_MANIFEST.format(entry="explain_divergence")

BASELINE = config["baseline"]
BASELINE_MODELS = MODELS_FOLDERS[BASELINE]
BASELINE_SETUP = CONDITION_SETUP.replace("{condition}", BASELINE).replace(
    "{models}", BASELINE_MODELS
)
GREEDY_CELL = CELL_PATTERN.replace("{temperature}", sb_cells.format_temperature(0.0))
EXPLANATION_PATTERN = (
    sb_explanations.BUILD_EXPLANATION_PATTERN
    if BUILDS_DECLARED
    else sb_explanations.EXPLANATION_PATTERN
)
EXPLANATION_STEM = EXPLANATION_PATTERN.removesuffix(".json")
# A non-baseline cell's reference is the baseline's cell of the same repeat; the baseline's own (its control), the
# baseline's first repeat: two plain patterns (specbench.core.records.explanations.reference_repeat says the same)
SAME_REPEAT_REFERENCE = GREEDY_CELL.replace("{condition}", BASELINE).replace(
    "{models}", BASELINE_MODELS
)
FIRST_REPEAT_REFERENCE = SAME_REPEAT_REFERENCE.replace("{repeat}", "1")
OTHER_CONDITIONS_REGEX = (
    "|".join(
        re.escape(c)
        for c in sorted(config["conditions"], key=len, reverse=True)
        if c != BASELINE
    )
    or "(?!)"
)
LATER_REPEATS_REGEX = "|".join(str(r) for r in REPEATS if r != 1) or "(?!)"


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
    resources:
        **server_resources("fresh", serving=BASELINE),
    script:
        "../scripts/explain_divergence.py"


use rule explain_divergence as explain_control with:
    input:
        cell=GREEDY_CELL,
        reference=FIRST_REPEAT_REFERENCE,
        setup=BASELINE_SETUP,
        code=EXPLAIN_CODE_MANIFEST,
    wildcard_constraints:
        condition=re.escape(BASELINE),
        repeat=LATER_REPEATS_REGEX,
