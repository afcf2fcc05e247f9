"""Command line: ``python -m specbench provenance ID`` prints the chain behind one reported number.

Run from the repository root with ``PYTHONPATH=scripts`` (the workflow itself needs no installation)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from specbench.core.steps.files import read_json
from specbench.report.provenance import describe, unresolved


def main(argv: list[str] | None = None) -> int:
    """Parse arguments and run the sub-command."""
    parser = argparse.ArgumentParser(prog="python -m specbench", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    prov = sub.add_parser("provenance", help="print the cells, logs, binaries and models behind one number")
    prov.add_argument(
        "id", nargs="?", help="a number id from the report (e.g. speedup-essay-mtp-t0.0); without it, list the ids"
    )
    prov.add_argument(
        "--file",
        type=Path,
        default=Path("results/provenance.json"),
        help="the run's provenance.json (default: %(default)s)",
    )
    prov.add_argument("--check", action="store_true", help="verify that every id resolves to existing cell files")
    args = parser.parse_args(argv)
    if not args.file.is_file():
        print(f"no {args.file}: run the workflow's report first (snakemake all)", file=sys.stderr)
        return 2
    provenance = read_json(args.file)
    if args.check:
        bad = unresolved(provenance, args.file.parent.parent)
        print(f"{len(provenance['numbers'])} numbers, {len(bad)} unresolved" + (f": {', '.join(bad)}" if bad else ""))
        return 1 if bad else 0
    if not args.id:
        print("\n".join(provenance["numbers"]))
        return 0
    try:
        print(describe(provenance, args.id))
    except KeyError as error:
        print(error.args[0], file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
