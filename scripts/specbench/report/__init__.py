"""The report: a document as data (document), its sections (sections) and figures (figures) built from the summaries
and the judged claims, the numbers' provenance, rendered as Markdown and HTML (markdown, html), assembled and written
by the report rule (assemble)."""
