"""The files the back half's rules hand each other, readable by any tool and by code that imports none of the code
that computed them: typed tables as Parquet, verdicts and indexes as JSON checked against the JSON Schemas in
``schemas/`` (values: the JSON form of a cell's Python value; frames: a table as Parquet or as a JSON document;
documents: schema-checked JSON files; tables: the summaries of every build and machine as one folder; judged: the claims judged and
the setup they were judged under)."""
