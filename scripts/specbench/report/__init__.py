"""The report: sections built from the summaries and claims (document: the report as data; sections, machines,
environment, comparability, provenance, figures), rendered as Markdown and HTML (markdown, html), assembled and
written by the report rule (assemble)."""
