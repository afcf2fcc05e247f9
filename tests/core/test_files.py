"""Atomic writes: a result file is either complete or absent, with ordinary permissions."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from specbench.core.steps.files import read_json, write_atomic, write_json_atomic


def test_atomic_write_makes_complete_readable_files(tmp_path: Path) -> None:
    target = tmp_path / "cells" / "r1.json"
    write_json_atomic(target, {"a": 1})
    assert read_json(target) == {"a": 1}
    mask = os.umask(0)
    os.umask(mask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~mask


def test_failed_write_keeps_the_old_file_and_leaves_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "r1.json"
    write_json_atomic(target, {"a": 1})
    with pytest.raises(TypeError):
        write_atomic(target, "not bytes")  # type: ignore[arg-type]
    assert read_json(target) == {"a": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["r1.json"]
