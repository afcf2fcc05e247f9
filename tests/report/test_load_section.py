"""The report's load section (report.sections.load_section): absent from a run without a load dimension; in one
with, every point's row with its multiplier, interval, reading against 1.0x and N*, its cells folded beside it."""

from __future__ import annotations

from specbench.analysis.load import load_table
from specbench.report.markdown import markdown_table
from specbench.report.sections.load_section import load_sections
from support.load_points import point_rows


def test_a_run_without_load_has_no_load_section() -> None:
    assert load_sections(None, "off") == [] and load_sections(load_table(point_rows({}), "off"), "off") == []


def test_each_point_shows_its_multiplier_its_reading_and_n_star() -> None:
    speeds = {("off", n): [[100.0 + r] * n for r in range(3)] for n in (1, 2)}
    speeds |= {("mtp", 1): [[150.0 + r] * 1 for r in range(3)], ("mtp", 2): [[60.0 + r] * 2 for r in range(3)]}
    table = load_table(point_rows(speeds), "off")
    (section,) = load_sections(table, "off")
    text = markdown_table(section.table)
    rows = [line for line in text.splitlines() if line.startswith("| essay | mtp")]
    assert len(rows) == 2
    assert "| 1 | 3 | 151.0 | 1.50x |" in rows[0] and "above 1.0x | 2 |" in rows[0]
    assert "| 2 | 3 | 61.0 | 0.60x |" in rows[1] and "below 1.0x | 2 |" in rows[1]
    assert "results/cells/local/m/essay/mtp/c2/t0.0/r1.json" in text  # the folded cells, listed after the table


def test_acceptances_change_from_one_request_is_shown_in_points_with_its_interval() -> None:
    speeds = {(c, n): [[100.0] * n] * 3 for c in ("off", "mtp") for n in (1, 2)}
    table = load_table(point_rows(speeds, accepted={("mtp", 2): [6, 6, 6]}), "off")
    text = markdown_table(load_sections(table, "off")[0].table)
    (row,) = [line for line in text.splitlines() if line.startswith("| essay | mtp | 0.0 | 2 |")]
    assert "| 60.0% | -10.0 (-10.0 to -10.0) |" in row  # 7 of 10 alone, 6 of 10 at two, every repeat alike
