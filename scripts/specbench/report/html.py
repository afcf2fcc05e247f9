"""The HTML renderer of the report (see report.py for the sections): one self-contained document, figures as data
URIs, every number that has a provenance entry linked to it (ids from provenance.row_id)."""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Mapping
from typing import Any

from specbench.report.document import Column, Note, Report, Row, Section, Table, fmt
from specbench.report.provenance import row_id

STYLE = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;
color:#111;line-height:1.45}
table{border-collapse:collapse;margin:.6em 0 1.4em;font-size:.9em}
th,td{border:1px solid #bbb;padding:.25em .55em;text-align:right;vertical-align:top}
th{background:#eee}td.t,th.t{text-align:left}
.banner{border:2px solid #b35c00;background:#fff4e5;padding:.6em 1em;font-weight:600}
.ok{color:#005a9c}.warn{color:#b35c00}.bad{color:#a00}
td.good{background:#e3f2e6}td.warn{background:#fff1dc;color:inherit}td.bad{background:#fbe3e3;color:inherit}
a.n{color:inherit;text-decoration:none;border-bottom:1px dotted #777}
img{max-width:100%;border:1px solid #ddd}
code{font-size:.88em}
details summary{cursor:pointer;color:#005a9c}dl{margin:.3em 0;max-width:40em}dt{font-weight:600}dd{margin:0 0 .3em 1em}
@media print{a.n{border:none}}
"""
_INLINE = [
    (re.compile(r"\*\*(.+?)\*\*"), r"<b>\1</b>"),
    (re.compile(r"\*(.+?)\*"), r"<i>\1</i>"),
    (re.compile(r"`(.+?)`"), r"<code>\1</code>"),
]


def esc(value: Any) -> str:
    """HTML-escaped text."""
    return html.escape(str(value))


def inline(text: str) -> str:
    """Escaped text with the notes' Markdown emphasis and code as HTML."""
    out = esc(text)
    for pattern, replacement in _INLINE:
        out = pattern.sub(replacement, out)
    return out


def linked(value: Any, key: str, numbers: Mapping[str, Any], show: Callable[[Any], str] = fmt) -> str:
    """A number that links to its provenance entry (and carries its id)."""
    if key not in numbers:
        return esc(show(value))
    return f'<a class="n" id="n-{esc(key)}" href="#p-{esc(key)}" title="provenance: {esc(key)}">{esc(show(value))}</a>'


def _rel(cell_file: str) -> str:
    """A cell file's link relative to the report (which sits in results/)."""
    return cell_file.removeprefix("results/")


def _cell(column: Column, row: Row, numbers: Mapping[str, Any]) -> str:
    value = column.get(row)
    if column.files:
        return ", ".join(
            f"<a href='{esc(_rel(f))}'>{esc(f)}</a>" for f in ([value] if isinstance(value, str) else value)
        )
    if column.link:
        return linked(value, row_id(column.link, row), numbers, column.show)
    return esc(column.show(value))


def _classes(align: str, column: Column, row: Row) -> str:
    tone = column.tone(column.get(row)) if column.tone else ""
    return " ".join(c for c in (align, tone) if c)


def _folded(data: Table, row: Row, numbers: Mapping[str, Any]) -> str:
    """The row's folded columns as one cell: a <details> whose list opens on a click."""
    if not data.folded:
        return ""
    shown = [(c.header, _cell(c, row, numbers)) for c in data.folded]
    items = "".join(f"<dt>{esc(header)}</dt><dd>{value}</dd>" for header, value in shown if value)
    return f'<td class="t"><details><summary>detail</summary><dl>{items}</dl></details></td>'


def table(data: Table, numbers: Mapping[str, Any]) -> str:
    """An HTML table; text columns left-aligned, an anchored row carries its provenance id, folded columns in a
    last cell of <details>."""
    align = ["t" if c.text else "" for c in data.columns]
    head = "".join(f'<th class="{a}">{esc(c.header)}</th>' for a, c in zip(align, data.columns, strict=True))
    head += '<th class="t">detail</th>' if data.folded else ""
    body = "".join(
        (f"<tr id='p-{esc(row[data.anchor])}'>" if data.anchor else "<tr>")
        + "".join(
            f'<td class="{_classes(a, c, row)}">{_cell(c, row, numbers)}</td>'
            for a, c in zip(align, data.columns, strict=True)
        )
        + _folded(data, row, numbers)
        + "</tr>"
        for row in data.rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _paragraph(note: Note, tag: str = "p") -> str:
    tone = f" class='{note.tone}'" if note.tone else ""
    return f"<{tag}{tone}>{inline(note.text)}</{tag}>"


def section(part: Section, numbers: Mapping[str, Any]) -> str:
    """One section: heading, notes, list, figures, table."""
    out = [f"<h2 id='{esc(part.id)}'>{esc(part.title)}</h2>", *(_paragraph(n) for n in part.notes)]
    if part.items:
        out.append("<ul>" + "".join(_paragraph(n, "li") for n in part.items) + "</ul>")
    out += [
        f"<figure><img src='{f.uri}' alt='{esc(f.caption)}'><figcaption>{esc(f.caption)}</figcaption></figure>"
        for f in part.figures
    ]
    if part.table is not None:
        out.append(table(part.table, numbers))
    return "".join(out)


def render_html(report: Report) -> str:
    """The whole report as one HTML document."""
    parts = [
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{esc(report.name)}</title>"
        f"<style>{STYLE}</style></head><body><h1>{esc(report.name)}</h1>"
    ]
    if report.banner:
        parts.append(f"<p class='banner' id='not-study'>{inline(report.banner.text)}</p>")
    parts.append(_paragraph(report.lead))
    parts += [section(s, report.numbers) for s in report.sections]
    parts.append("</body></html>")
    return "\n".join(parts)
