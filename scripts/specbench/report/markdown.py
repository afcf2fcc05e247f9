"""The Markdown renderer: the report's sections marked for Markdown, as one document."""

from __future__ import annotations

from specbench.report.document import Note, Report, Table

# A list item's tone, marked where Markdown has no colour: a difference from the study apart from a failure
MARKS = {"warn": "⚠ ", "bad": "✗ "}


def _markdown_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_table(table: Table) -> str:
    """A GitHub-flavoured Markdown table (and its folded columns as a list after it)."""
    lines = ["| " + " | ".join(c.header for c in table.columns) + " |", "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(_markdown_cell(c.show(c.get(row))) for c in table.columns) + " |" for row in table.rows]
    return "\n".join(lines + _folded(table))


def _folded(table: Table) -> list[str]:
    """The folded columns as a list after the table: one item per row, named by its first column."""
    if not table.folded:
        return []
    lines = [""]
    for row in table.rows:
        shown = [(c.header, c.show(c.get(row))) for c in table.folded]
        detail = "; ".join(f"{header}: {value}" for header, value in shown if value)
        lines.append(f"- **{table.columns[0].show(table.columns[0].get(row))}**: {_markdown_cell(detail)}")
    return lines


def _item(note: Note) -> str:
    """A list item, marked by its tone."""
    return f"- {MARKS.get(note.tone, '')}{note.text}"


def render_markdown(report: Report) -> str:
    """The report's Markdown sections as one document."""
    parts = [f"# {report.name}", ""]
    if report.banner:
        parts += [f"> {report.banner.text}", ""]
    for section in report.sections:
        if not section.markdown:
            continue
        parts += [f"## {section.title}", ""]
        parts += [line for note in section.notes for line in (note.text, "")]
        parts += [_item(item) for item in section.items] + ([""] if section.items else [])
        parts += [
            line
            for figure in section.figures
            if figure.file
            for line in (f"![{figure.caption}]({figure.file})", "", f"*{figure.caption}*", "")
        ]
        if section.table is not None:
            parts += [markdown_table(section.table), ""]
    return "\n".join(parts)
