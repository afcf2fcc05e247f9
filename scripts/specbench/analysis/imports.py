"""Cell records of a run made elsewhere, brought in as one more machine without measuring them again.

The source is a directory (the other run's ``results/cells``, or one machine's folder of it) or an archive of one
(.tar, .tar.gz, .tgz, .tar.xz, .zip). Every cell record in it is kept byte for byte (with its server log and GPU
samples when they sit beside it) under ``results/imports/<label>/`` in the cell layout, and an index lists each
record's coordinates, sha256 and where it came from. A record of another record version, two records of one cell,
or records of several machines, targets or drafts in one source are refused, naming the files or models; cells of
tasks, conditions or temperatures this config does not have are skipped and listed."""

from __future__ import annotations

import shutil
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from specbench.analysis.record_reader import READABLE_VERSIONS
from specbench.core.config.builds import ONE_BUILD
from specbench.core.plan.cells import DEFAULT_MACHINE, Cell
from specbench.core.plan.coordinates import LAYOUT
from specbench.core.records.ownership import ROLES, describe, served
from specbench.core.steps.entry import fail, logged_to
from specbench.core.steps.files import read_json, sha256_file, write_json_atomic

ARCHIVES = (".tar", ".tar.gz", ".tgz", ".tar.xz", ".tar.bz2", ".zip")
SIBLINGS = (".server.log", ".gpu.jsonl")  # a cell's logs beside its record: r1.json -> r1.server.log, ...


class ImportRefused(RuntimeError):
    """The source cannot be imported; the message names the file and what to do."""


def is_archive(path: Path) -> bool:
    return path.is_file() and path.name.endswith(ARCHIVES)


def _unpacked(source: Path, scratch: Path) -> Path:
    """The directory to read records from: the source itself, or the archive unpacked into ``scratch``."""
    if source.is_dir():
        return source
    if not is_archive(source):
        raise ImportRefused(f"{source}: neither a directory nor an archive ({', '.join(ARCHIVES)})")
    try:
        if source.name.endswith(".zip"):
            with zipfile.ZipFile(source) as archive:
                for member in archive.namelist():  # no member may leave the scratch folder
                    if Path(member).is_absolute() or ".." in Path(member).parts:
                        raise ImportRefused(f"{source}: member '{member}' points outside the archive")
                archive.extractall(scratch)
        else:
            with tarfile.open(source, "r:*") as archive:
                archive.extractall(scratch, filter="data")
    except (tarfile.TarError, zipfile.BadZipFile, OSError) as error:
        raise ImportRefused(f"{source}: cannot unpack: {error}") from error
    return scratch


def _records(root: Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    """Every JSON file under ``root`` that is a cell record (it has 'cell' and 'record_version')."""
    for path in sorted(root.rglob("*.json")):
        try:
            record = read_json(path)
        except (ValueError, OSError):
            continue
        if isinstance(record, dict) and "cell" in record and "record_version" in record:
            yield path, record


def import_cells(source: Path, dest: Path, label: str, config: dict[str, Any]) -> dict[str, Any]:
    """Copy the cell records of ``source`` into ``dest`` (replaced whole) as machine ``label``; return the index."""
    with tempfile.TemporaryDirectory(prefix=f".{label}.", dir=dest.parent) as scratch_dir:
        scratch = Path(scratch_dir)
        root = _unpacked(source, scratch / "unpacked")
        found = list(_records(root))
        if not found:
            raise ImportRefused(f"{source}: no cell records (JSON files with 'cell' and 'record_version') in it")
        old = [
            f"{p.relative_to(root)} (version {r['record_version']})"
            for p, r in found
            if r["record_version"] not in READABLE_VERSIONS
        ]
        if old:
            readable = ", ".join(map(str, READABLE_VERSIONS))
            raise ImportRefused(
                f"{source}: {len(old)} record(s) of a record version this workflow cannot read (it "
                f"reads {readable}), e.g. {old[0]}: measure them again with this version of the "
                "workflow"
            )
        measured_as = sorted({r["cell"].get("machine", DEFAULT_MACHINE) for _, r in found})
        if len(measured_as) > 1:
            raise ImportRefused(
                f"{source}: records of several machines {measured_as}: import each machine's folder under its own label"
            )
        for role in ROLES:  # one target, and at most one draft for the cells that load one
            models = sorted({describe({"model": served(r)[role]}) for _, r in found if served(r)[role]})
            if len(models) > 1:
                raise ImportRefused(
                    f"{source}: records of several {'targets' if role == 'model' else 'drafts'} ({'; '.join(models)}):"
                    " import each one's models folders (results/cells/<machine>/<models>) under a label of its own"
                )
        staged = scratch / "staged"
        kept, skipped, seen = [], [], {}
        for path, record in found:
            coords = record["cell"]
            # under the import's machine label, in no build's folder (an imported cell's record names its models)
            cell = Cell(**{**LAYOUT.from_record(coords), "machine": label, "build": ONE_BUILD})
            unknown = [
                f"{kind} '{coords[kind]}'"
                for kind, known in (
                    ("task", config["tasks"]),
                    ("condition", config["conditions"]),
                    ("temperature", [float(t) for t in config["temperatures"]]),
                )
                if (float(coords[kind]) if kind == "temperature" else coords[kind]) not in known
            ]
            prompts = config.get("prompts", {}).get(cell.task)
            if not unknown and prompts is not None and cell.prompt not in prompts:
                unknown = [f"prompt '{cell.prompt}' of task '{cell.task}'"]
            if unknown:
                skipped.append({"file": str(path.relative_to(root)), "reason": f"not in this config: {unknown}"})
                continue
            if cell in seen:
                raise ImportRefused(
                    f"{source}: two records of cell {cell.label}: {seen[cell]} and {path.relative_to(root)}"
                )
            seen[cell] = path.relative_to(root)
            target = staged / LAYOUT.crossed_path(cell.values)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
            for suffix in SIBLINGS:
                sibling = path.with_name(path.stem + suffix)
                if sibling.is_file():
                    shutil.copy2(sibling, target.with_name(target.stem + suffix))
            kept.append(
                {
                    "file": str(dest / target.relative_to(staged)),
                    "source_file": str(path.relative_to(root)),
                    "sha256": sha256_file(target),
                    "task": cell.task,
                    "prompt": cell.prompt,
                    "condition": cell.condition,
                    "temperature": cell.temperature,
                    "repeat": cell.repeat,
                }
            )
        staged.mkdir(exist_ok=True)
        if dest.exists():
            shutil.rmtree(dest)
        staged.rename(dest)
    return {
        "label": label,
        "source": str(source),
        "source_sha256": sha256_file(source) if source.is_file() else None,
        "measured_as": measured_as[0],
        "records": kept,
        "skipped": skipped,
    }


def import_step(source: Path, dest: Path, index: Path, *, label: str, names: Mapping[str, Any], log: Path) -> None:
    """Another run's cell records copied in as machine ``label``, with their index; a refused source fails in one
    line."""
    with logged_to(log):
        try:
            found = import_cells(source, dest, label, dict(names))
        except ImportRefused as error:
            fail(f"import '{label}': {error}", log)
        write_json_atomic(index, found)
        print(
            f"import '{label}': {len(found['records'])} cell records from {source} (measured as "
            f"'{found['measured_as']}'), {len(found['skipped'])} skipped"
        )
        for skipped in found["skipped"]:
            print(f"  skipped {skipped['file']}: {skipped['reason']}")
