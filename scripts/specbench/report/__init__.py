"""The report: the claims judged (judging, rule claims), the figures drawn (drawing, rule figures), and sections built
from the summaries and claims (document: the report as data; sections, machines, environment, comparability,
provenance, figures), rendered as Markdown and HTML (markdown, html) and written by rule report (assemble); each
rule's params from the config (rule_params)."""
