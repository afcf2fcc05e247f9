"""The report's sections, each built from the summary tables, the claims and the run's facts (run holds
the order: build_report)."""
