"""Snakemake entry: every cell file -> runs.csv, summary.csv, acceptance.csv, identity tables."""

from pathlib import Path

from specbench.aggregate import cells_index, collect_runs, greedy_tokens, load_records, summarise
from specbench.entry import logged_to
from specbench.files import write_json_atomic
from specbench.measures import acceptance_summary, identity_summary, identity_table

snakemake = globals()["snakemake"]
out, baseline = snakemake.output, snakemake.params.baseline
with logged_to(snakemake.log[0]):
    records = load_records(list(snakemake.input.cells))
    runs = collect_runs(records)
    runs.to_csv(out.runs, index=False)
    summarise(runs, baseline).to_csv(out.summary, index=False)
    acceptance_summary(runs).to_csv(out.acceptance, index=False)
    identity = identity_table(greedy_tokens(records), baseline=baseline)
    identity.to_csv(out.identity, index=False)
    identity_summary(identity).to_csv(out.identity_summary, index=False)
    write_json_atomic(Path(out.cells_index), cells_index(records))
    print(f"{len(runs)} cells aggregated")
