"""The thesis with a setting of a method in place of that method (analysis.thesis.settings_beside) is one of the
typed tables rule tables writes (``thesis_settings``), and the report's thesis section reads it back from the folder
as it would show the table computed from the cells."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from specbench.analysis.summaries import methods, tables_by_build
from specbench.analysis.tabulate import parts
from specbench.analysis.thesis import settings_beside
from specbench.core.results.tables import first_tables, read_table_folder, write_table_folder
from specbench.report.document import Note, Report
from specbench.report.markdown import render_markdown
from specbench.report.sections.thesis_section import thesis_section
from support.counterfactuals import BASELINE, tables_of

CONDITIONS = ["ngram-mod", "ngram-mod-warm", "mtp", "dflash", "dflash-n15"]


def _thesis_markdown(thesis: pd.DataFrame, beside: pd.DataFrame) -> str:
    sections = thesis_section(thesis, None, None, [BASELINE, *CONDITIONS], beside)
    return render_markdown(Report("thesis", None, Note(""), sections))


def test_the_report_shows_the_settings_table_it_reads_as_the_one_computed_from_the_cells(tmp_path: Path) -> None:
    multipliers = {
        task: {"ngram-mod": 1.0 + i, "ngram-mod-warm": 9.0, "mtp": 1.5, "dflash": 2.0, "dflash-n15": 0.1}
        for i, task in enumerate(["file-rewrite", "todo-app", "essay"])
    }
    cells = tables_of(multipliers, temperatures=(0.0, 1.0))["cells"]
    write_table_folder(tmp_path / "tables", parts(tables_by_build(cells, BASELINE), cells))
    read = first_tables(read_table_folder(tmp_path / "tables", cells))
    computed = settings_beside(cells, BASELINE, methods(cells, BASELINE))
    assert len(read["thesis_settings"]) == len(computed) == 2 * 2 * 2  # two settings, two temperatures, two views
    shown = _thesis_markdown(read["thesis"], read["thesis_settings"])
    assert "a setting, not the run's figure: ngram-mod-warm in place of ngram-mod" in shown
    assert shown == _thesis_markdown(read["thesis"], computed)
