"""Importing the cell records of a run made elsewhere (specbench.analysis.imports) from a directory or an archive."""

from __future__ import annotations

import json
import tarfile
import zipfile
from pathlib import Path

import pytest

from specbench.analysis.imports import ImportRefused, import_cells
from specbench.core.records.version import RECORD_VERSION
from specbench.core.steps.files import sha256_file

CONFIG = {"tasks": ["essay", "gsm8k"], "conditions": ["off", "mtp"], "temperatures": [0.0, 1.0]}


def _write(
    root: Path,
    task: str,
    condition: str,
    repeat: int,
    *,
    machine: str = "local",
    version: int = RECORD_VERSION,
    temperature: float = 0.0,
) -> Path:
    folder = root / machine / task / condition / f"t{temperature}"
    folder.mkdir(parents=True, exist_ok=True)
    record = {
        "record_version": version,
        "cell": {
            "machine": machine,
            "task": task,
            "condition": condition,
            "temperature": temperature,
            "repeat": repeat,
        },
    }
    path = folder / f"r{repeat}.json"
    path.write_text(json.dumps(record, indent=1))
    path.with_name(f"r{repeat}.server.log").write_text(f"server log of {task} {condition} {repeat}\n")
    return path


@pytest.fixture
def other_run(tmp_path: Path) -> Path:
    cells = tmp_path / "other" / "results" / "cells"
    for condition in ("off", "mtp"):
        for repeat in (1, 2):
            _write(cells, "essay", condition, repeat)
    _write(cells, "file-rewrite", "off", 1)  # a task this config does not have
    (cells / "local" / "notes.json").write_text("[1, 2]")  # JSON that is not a record: ignored
    return cells


def _check(index: dict, dest: Path, source_root: Path) -> None:
    assert index["label"] == "lab-box" and index["measured_as"] == "local"
    assert len(index["records"]) == 4
    for entry in index["records"]:
        copy = Path(entry["file"])
        assert copy.is_relative_to(dest) and copy.relative_to(dest).parts[0] == "essay"
        original = source_root / entry["source_file"]
        assert copy.read_bytes() == original.read_bytes()  # kept byte for byte
        assert entry["sha256"] == sha256_file(copy)
        assert copy.with_name(copy.stem + ".server.log").read_text().startswith("server log of essay")
    assert ["file-rewrite" in s["file"] for s in index["skipped"]] == [True]
    assert "not in this config" in index["skipped"][0]["reason"]


def test_a_directory_is_imported_as_a_machine(other_run: Path, tmp_path: Path) -> None:
    dest = tmp_path / "work" / "results" / "imports" / "lab-box"
    dest.parent.mkdir(parents=True)
    index = import_cells(other_run / "local", dest, "lab-box", CONFIG)
    _check(index, dest, other_run / "local")
    assert index["source_sha256"] is None
    assert [p.name for p in dest.parent.iterdir()] == ["lab-box"]  # no scratch left behind
    # importing again replaces the folder whole
    (other_run / "local" / "essay" / "mtp" / "t0.0" / "r2.json").unlink()
    assert len(import_cells(other_run / "local", dest, "lab-box", CONFIG)["records"]) == 3
    assert len(list(dest.rglob("r*.json"))) == 3


@pytest.mark.parametrize("kind", ["tar.gz", "zip"])
def test_an_archive_is_imported_the_same_way(other_run: Path, tmp_path: Path, kind: str) -> None:
    archive = tmp_path / f"cells.{kind}"
    if kind == "zip":
        with zipfile.ZipFile(archive, "w") as out:
            for path in other_run.rglob("*"):
                out.write(path, path.relative_to(other_run.parent))
    else:
        with tarfile.open(archive, "w:gz") as out:
            out.add(other_run, arcname="cells")
    dest = tmp_path / "imports" / "lab-box"
    dest.parent.mkdir()
    index = import_cells(archive, dest, "lab-box", CONFIG)
    assert len(index["records"]) == 4 and index["source_sha256"] == sha256_file(archive)
    assert all(
        Path(e["file"]).read_bytes() == (other_run.parent / e["source_file"]).read_bytes() for e in index["records"]
    )


def test_what_cannot_be_imported_is_refused_naming_the_file(other_run: Path, tmp_path: Path) -> None:
    dest = tmp_path / "imports" / "x"
    dest.parent.mkdir()
    with pytest.raises(ImportRefused, match="several machines"):
        _write(other_run, "essay", "off", 1, machine="h200")
        import_cells(other_run, dest, "x", CONFIG)
    old = tmp_path / "old"
    _write(old, "essay", "off", 1, version=5)
    refused = r"a record version this workflow cannot read \(it reads 6, 7, 8, 9, 10\).*essay/off/t0.0/r1.json"
    with pytest.raises(ImportRefused, match=refused):
        import_cells(old, dest, "x", CONFIG)
    twice = tmp_path / "twice"
    _write(twice / "a", "essay", "off", 1)
    _write(twice / "b", "essay", "off", 1)
    with pytest.raises(ImportRefused, match="two records of cell"):
        import_cells(twice, dest, "x", CONFIG)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ImportRefused, match="no cell records"):
        import_cells(tmp_path / "empty", dest, "x", CONFIG)
    evil = tmp_path / "evil.tar"
    with tarfile.open(evil, "w") as out:
        out.add(other_run / "local" / "essay" / "off" / "t0.0" / "r1.json", arcname="../../escape.json")
    with pytest.raises(ImportRefused, match="cannot unpack"):
        import_cells(evil, dest, "x", CONFIG)
    assert not (tmp_path / "escape.json").exists() and not dest.exists()


def test_a_source_of_several_targets_is_refused_and_a_run_with_its_draft_is_not(tmp_path: Path) -> None:
    """A run's machine folder holds its target's cells and, for the conditions that load one, the target's with its
    draft: one import. Two targets' cells in one source are two runs: refused, naming both."""
    source = tmp_path / "cells"

    def served(path: Path, target: str, draft: str | None) -> None:
        record = json.loads(path.read_text())
        record["provenance"] = {
            "model": {"path": f"{target}.gguf", "sha256": target * 64},
            "draft": {"path": "d.gguf", "sha256": draft * 64} if draft else None,
        }
        path.write_text(json.dumps(record))

    served(_write(source, "essay", "off", 1), "1", None)
    served(_write(source, "essay", "mtp", 1), "1", "3")
    dest = tmp_path / "imports" / "x"
    dest.parent.mkdir()
    assert len(import_cells(source / "local", dest, "x", CONFIG)["records"]) == 2
    served(_write(source, "essay", "off", 2), "2", None)
    with pytest.raises(ImportRefused, match=r"several targets \(1.gguf \(sha256 1111.*\); 2.gguf \(sha256 2222"):
        import_cells(source / "local", dest, "x", CONFIG)
