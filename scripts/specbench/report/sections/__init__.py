"""The report's sections, each built from the summary tables, the claims and the run's facts (report.contents puts
them in order: build_report)."""
