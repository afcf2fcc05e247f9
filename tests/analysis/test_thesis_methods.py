"""The methods the run's thesis compares (analysis.summaries.methods): the study's three, never a setting of one of
them (the warm n-gram server, DFlash at 15) counted as a method of its own."""

from __future__ import annotations

import pandas as pd

from specbench.analysis.summaries import methods
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
    [row] = tables_of(multipliers)["thesis"].to_dict("records")
    assert sorted(row["methods"]) == ["dflash", "mtp", "ngram-mod"]
