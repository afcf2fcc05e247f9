"""The methods the run's thesis compares (analysis.summaries.methods): the study's three, never a setting of one of
them (the warm n-gram server, DFlash at 15) counted as a method of its own; those settings shown beside the figure
(analysis.thesis.settings_beside), each in place of its method, under each view."""

from __future__ import annotations

import pandas as pd

from specbench.analysis.summaries import methods
from specbench.analysis.thesis import in_place_of, settings_beside
from specbench.analysis.thesis_fit import MAIN_EFFECTS, VIEWS
from specbench.report.sections.thesis_section import thesis_section
from support.counterfactuals import tables_of


def test_variants_of_a_method_are_not_methods_of_their_own() -> None:
    conditions = ["off", "ngram-mod", "ngram-mod-warm", "mtp", "dflash", "dflash-n15"]
    cells = pd.DataFrame({"condition": conditions})
    assert methods(cells, "off") == ["ngram-mod", "mtp", "dflash"]
    alone = pd.DataFrame({"condition": ["off", "dflash-n15", "mtp"]})  # no dflash: its setting is the method here
    assert methods(alone, "off") == ["dflash-n15", "mtp"]


def test_the_runs_thesis_leaves_the_warm_server_and_dflash_n15_out() -> None:
    multipliers = {
        task: {"ngram-mod": 1.0 + i, "ngram-mod-warm": 9.0, "mtp": 1.5, "dflash": 2.0, "dflash-n15": 0.1}
        for i, task in enumerate(["file-rewrite", "todo-app", "essay"])
    }
    rows = tables_of(multipliers)["thesis"].to_dict("records")
    assert [r["view"] for r in rows] == list(VIEWS)
    assert all(sorted(r["methods"]) == ["dflash", "mtp", "ngram-mod"] for r in rows)


def test_a_setting_is_shown_beside_the_runs_thesis_in_place_of_its_method_never_in_it() -> None:
    """The warm server and DFlash at 15 stay out of the run's figure (the study's three methods); beside it, each is
    the figure again with the setting in place of its method, labelled as a setting, not the run's figure."""
    multipliers = {
        task: {"ngram-mod": 1.0 + i, "ngram-mod-warm": 9.0, "mtp": 1.5, "dflash": 2.0, "dflash-n15": 0.1}
        for i, task in enumerate(["file-rewrite", "todo-app", "essay"])
    }
    tables = tables_of(multipliers, temperatures=(0.0, 1.0))
    cells = tables["cells"]
    beside = settings_beside(cells, "off", methods(cells, "off"))
    assert sorted(set(zip(beside.setting, beside.in_place_of, strict=True))) == [
        ("dflash-n15", "dflash"),
        ("ngram-mod-warm", "ngram-mod"),
    ]
    assert len(beside) == 2 * 2 * 2  # two settings, two temperatures, two views
    main = beside[beside.view == MAIN_EFFECTS]
    warm = main[(main.setting == "ngram-mod-warm") & (main.temperature == 0.0)].iloc[0]
    assert sorted(warm["methods"]) == ["dflash", "mtp", "ngram-mod-warm"]
    thesis = tables["thesis"]
    own = thesis[(thesis.temperature == 0.0) & (thesis.view == MAIN_EFFECTS)].iloc[0]
    assert sorted(own["methods"]) == ["dflash", "mtp", "ngram-mod"]  # the run's figure as before
    # n-gram's 1x-3x by task against the warm server's flat 9x: the task effect shrinks with the setting in place
    assert warm["task_effect"] < own["task_effect"]
    assert in_place_of(["ngram-mod", "mtp"], "ngram-mod-warm-all") == "ngram-mod"
    assert in_place_of(["ngram-mod", "mtp"], "dflash-n15") is None
    [section] = thesis_section(tables["thesis"], None, None, beside=beside)
    labels = [(row["figure"], row["view"]) for row in section.table.rows]
    assert labels[:4] == [("this run, each method (its settings left out)", v) for v in VIEWS] * 2
    assert labels[4:] == [
        (f"a setting, not the run's figure: {setting} in place of {method}", view)
        for setting, method in (("dflash-n15", "dflash"), ("ngram-mod-warm", "ngram-mod"))
        for _temperature in (0.0, 1.0)
        for view in VIEWS
    ]
    assert any("Beside the run's figure, not in it" in note.text for note in section.notes)
    assert not any("study's figure" in label for label, _ in labels)
    [plain] = thesis_section(tables["thesis"], None, None)
    assert len(plain.table.rows) == 4 and not any("Beside" in note.text for note in plain.notes)
