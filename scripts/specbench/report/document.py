"""The report as data: ``Report``, a list of ``Section``s, each a title, notes, figures and at most one ``Table``
whose ``Column``s name the row value they show and the formatter that turns it into text; the shared columns and
formatters. Values stay typed; only a renderer (markdown.py, html.py) calls the formatters."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from specbench.core.results.judged import Comparability

Row = Mapping[str, Any]


def is_missing(value: Any) -> bool:
    """None, NaN, NaT or pandas' NA (not a list)."""
    return not isinstance(value, (list, tuple)) and (value is None or bool(pd.isna(value)))


def fmt(value: Any, digits: int = 2) -> str:
    """Numbers with fixed digits, flags as yes/no; missing values as n/a."""
    if is_missing(value):
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def digits(n: int) -> Callable[[Any], str]:
    """A formatter with ``n`` decimals."""
    return lambda value: fmt(value, n)


def percent(value: Any) -> str:
    return "n/a" if is_missing(value) else f"{100 * value:.1f}%"


def joined(values: Sequence[Any], separator: str = ", ") -> str:
    return separator.join(str(v) for v in values)


@dataclass(frozen=True)
class Column:
    """One table column: its header, the row field it shows (or a function of the row), the formatter, and whether
    the HTML report links the value to its provenance entry (``link``: the number's kind, see provenance.row_id),
    links it as cell file(s) (``files``), aligns it as text, or colours it (``tone``: value -> a CSS class)."""

    header: str
    value: str | Callable[[Row], Any]
    show: Callable[[Any], str] = fmt
    link: str | None = None
    files: bool = False
    text: bool = False
    tone: Callable[[Any], str] | None = None

    def get(self, row: Row) -> Any:
        return row[self.value] if isinstance(self.value, str) else self.value(row)


@dataclass(frozen=True)
class Table:
    """Rows (typed values) and the columns that show them; ``anchor``: the row field holding the number id that the
    row is the provenance entry of; ``folded``: columns of long detail, shown folded beside each row (HTML) or as a
    list after the table (Markdown), each row named by its first column."""

    columns: Sequence[Column]
    rows: Sequence[Row]
    anchor: str | None = None
    folded: Sequence[Column] = ()


@dataclass(frozen=True)
class Note:
    """A paragraph (or list item); ``**bold**`` and ``*italic*`` as in Markdown; tone: '', 'warn' or 'bad'."""

    text: str
    tone: str = ""


@dataclass(frozen=True)
class Figure:
    """A figure: its caption, the image as a data URI (the self-contained HTML) and its file beside the Markdown
    report (relative to it), when it was written as one."""

    caption: str
    uri: str
    file: str | None = None


@dataclass(frozen=True)
class Section:
    id: str
    title: str
    notes: Sequence[Note] = ()
    table: Table | None = None
    items: Sequence[Note] = ()
    figures: Sequence[Figure] = ()
    markdown: bool = True


@dataclass(frozen=True)
class Report:
    """Everything both renderers show; ``numbers``: the provenance numbers by id (the HTML links to them)."""

    name: str
    banner: Note | None
    lead: Note
    sections: Sequence[Section]
    numbers: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Facts:
    """What the report shows besides the tables: the run's name and setup, and what the manifests say."""

    name: str
    baseline: str
    comparability: Comparability
    environment: Mapping[str, str]
    device: Mapping[str, Any]
    model_bytes: int
    missing_cells: Sequence[str] = ()
    stand_in_tasks: Sequence[str] = ()
    run_context: Mapping[str, Any] = field(default_factory=dict)
    predictions: pd.DataFrame | None = None
    predictions_integrity: Mapping[str, Any] | None = None
    model_note: str | None = None
    endpoint_note: str | None = None  # cells served by a server this run did not start: what that gives up
    prompt_set: Sequence[Mapping[str, Any]] = ()  # the public prompt set's questions the tasks are made of


TASK = Column("task", "task", text=True)


CONDITION = Column("condition", "condition", text=True)


TEMPERATURE = Column("temp", "temperature", digits(1))


REPEAT = Column("rep", "repeat")

# The columns that name a row of a table per task, condition and temperature (analysis.cell_table.GROUP)
GROUP_COLUMNS = (TASK, CONDITION, TEMPERATURE)


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return frame.to_dict("records")


VERDICT_TONES = {  # a verdict not listed (too few runs, not separated, another model's answers) has no colour
    "reproduced": "good",
    "not reproduced": "bad",
    "not reproduced (size)": "bad",
    "not reproduced (direction)": "bad",
    "contradicted": "bad",
    "agrees": "good",
    "differs": "warn",
    "faster": "good",
    "slower": "bad",
}


def verdict_tone(value: Any) -> str:
    return VERDICT_TONES.get(str(value), "")


def fmt_multiplier(value: Any) -> str:
    return "n/a" if is_missing(value) else f"{value:.2f}x"


def fmt_interval(pair: tuple[Any, Any]) -> str:
    low, high = pair
    return "n/a" if is_missing(low) or is_missing(high) else f"{low:.2f}-{high:.2f}"


def fmt_outputs(row: Row, baseline: str) -> str:
    """A summary row's outputs against the baseline's at temperature 0: '' where none was compared, else how many
    differ, with the token counts (own vs the baseline's) and what each explanation calls the difference."""
    compared, differ = row.get("outputs_compared"), row.get("outputs_differ")
    if is_missing(compared) or not compared:
        return ""
    if not differ:
        return f"identical to {baseline} ({compared}/{compared})"
    counts = "; ".join(f"{own} vs {base}" for own, base in row["differing_token_counts"])
    kinds = ", ".join(dict.fromkeys(k or "not explained" for k in row["divergence_kinds"]))
    return f"differs from {baseline} in {differ}/{compared} ({counts} tokens; {kinds})"


def multiplier_cell(row: Any, baseline: str) -> str:
    """A multiplier as the opening matrix shows it: value, 95 % interval, the verdict rule, and where it was
    measured on outputs that differ from the baseline's, that fact."""
    if not isinstance(row, Mapping):
        return ""
    noisy = " (noisy)" if row.get("noisy") is True else ""
    outputs = fmt_outputs(row, baseline)
    where = outputs.removeprefix(f"differs from {baseline} ")
    return (
        f"{fmt_multiplier(row['speedup'])} [{fmt_interval((row['speedup_ci_low'], row['speedup_ci_high']))}] "
        f"{row['verdict']}{noisy}" + (f"; ≠ {baseline}: outputs differ {where}" if where != outputs else "")
    )


def _quoted(text: Any) -> str:
    return "(end)" if is_missing(text) else repr(str(text))


def fmt_divergence(divergence: Mapping[str, Any], top_k: int) -> str:
    """One differing repeat, explained: 'r1 differs at token 236 (' Regression' vs '/person', after '...'): token by
    token 0.009 nats apart, order flipped when batched: near-tie'."""
    d = divergence
    head = (
        f"r{d['repeat']} differs at token {d['position']} ({_quoted(d['text'])} vs {_quoted(d['reference_text'])}"
        + ("" if is_missing(d["before"]) else f", after {_quoted(d['before'])}")
        + ")"
    )
    if is_missing(d["kind"]):
        return f"{head}: not explained"
    if d["kind"] == "length":
        return f"{head}: one output ended there (length)"
    seq, rank, batched = d["margin_sequential"], d["rank_sequential"], d["margin_batched"]
    views = [
        "its token not ranked token by token"
        if is_missing(seq)
        else f"token by token the baseline's token leads by more than {seq:.2f} nats (the other beyond its top {top_k})"
        if is_missing(rank)
        else f"token by token {seq:.3f} nats apart (rank {rank})"
    ]
    views.append(
        "order flipped when batched"
        if d["flipped"]
        else ""
        if is_missing(batched)
        else f"batched {batched:.3f} nats apart"
    )
    if d["replay_matches"] is False:
        views.append("the baseline's replay did not reproduce its tokens")
    return f"{head}: " + ", ".join(v for v in views if v) + f": {d['kind']}"
