"""Predictions written down before measuring: a stamp of the file (sha256, modification time) taken before the
first cell starts, and, at report time, whether the file still is what was stamped and was stamped in time."""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path
from typing import Any

from specbench.core.steps.entry import logged_to
from specbench.core.steps.files import write_json_atomic


def _utc(timestamp: float) -> str:
    return dt.datetime.fromtimestamp(timestamp, dt.UTC).isoformat(timespec="milliseconds")


def stamp(path: Path) -> dict[str, Any]:
    """The file's identity now: path, sha256, size, modification time, and when the stamp was taken."""
    data = path.read_bytes()
    return {
        "path": str(path),
        "sha256": hashlib.sha256(data).hexdigest(),
        "size": len(data),
        "modified_at": _utc(path.stat().st_mtime),
        "stamped_at": _utc(dt.datetime.now(dt.UTC).timestamp()),
    }


def integrity(recorded: dict[str, Any], path: Path, first_cell_started: dt.datetime | None) -> dict[str, Any]:
    """Whether the predictions file changed after it was stamped, and whether the stamp preceded every cell."""
    now = stamp(path)
    stamped = dt.datetime.fromisoformat(recorded["stamped_at"])
    return {
        "recorded_sha256": recorded["sha256"],
        "current_sha256": now["sha256"],
        "changed_after_stamp": now["sha256"] != recorded["sha256"],
        "stamped_at": recorded["stamped_at"],
        "modified_at": recorded["modified_at"],
        "stamped_before_measuring": first_cell_started is None or stamped <= first_cell_started,
    }


def stamp_step(path: Path, out: Path, log: Path) -> None:
    """Rule record_predictions: the predictions file's stamp, taken before the first cell starts."""
    with logged_to(log):
        record = stamp(path)
        write_json_atomic(out, record)
        print("predictions stamped:", record)
