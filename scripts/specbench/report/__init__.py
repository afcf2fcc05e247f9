"""The report: sections built from the summaries and claims (model, sections, machines, environment, comparability,
provenance, figures), rendered as Markdown and HTML (markdown, html), assembled and written by the report rule
(assemble)."""
