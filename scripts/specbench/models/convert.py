"""A checkpoint to GGUF with the pinned tree's own converter, and quantization with its llama-quantize."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from specbench.core.steps.commands import run_command
from specbench.core.steps.entry import logged_to
from specbench.models.preparation_error import PreparationError


def convert_checkpoint(llama_src: Path, checkpoint: Path, out: Path, outtype: str, extra: list[str]) -> None:
    """Run the pinned tree's own convert_hf_to_gguf.py (with its own gguf-py) into ``out`` atomically."""
    if "--no-mtp" in extra or "--no-nextn" in extra:
        print("warning: converting WITHOUT the MTP layer", file=sys.stderr)
    partial = out.with_name(out.name + ".part")
    env = {k: v for k, v in os.environ.items() if k != "NO_LOCAL_GGUF"}
    env["PYTHONPATH"] = os.pathsep.join([str(llama_src / "gguf-py"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    run_command(
        [
            sys.executable,
            str(llama_src / "convert_hf_to_gguf.py"),
            str(checkpoint),
            "--outtype",
            outtype,
            "--outfile",
            str(partial),
            *extra,
        ],
        env=env,
        error=PreparationError,
    )
    partial.replace(out)


def quantize(binary: Path, source: Path, out: Path, quant: str, threads: int) -> None:
    """``llama-quantize`` without an importance matrix, written atomically."""
    partial = out.with_name(out.name + ".part")
    run_command([str(binary), str(source), str(partial), quant, str(threads)], error=PreparationError)
    partial.replace(out)


def convert_step(source: Path, checkpoint: Path, out: Path, *, outtype: str, extra: list[str], log: Path) -> None:
    """The checkpoint converted with the pinned tree's own convert_hf_to_gguf.py."""
    with logged_to(log):
        convert_checkpoint(source, checkpoint, out, outtype, extra)


def quantize_step(build_dir: Path, bf16: Path, out: Path, *, quant: str, threads: int, log: Path) -> None:
    """The bf16 GGUF quantized with the pinned build's llama-quantize (no imatrix)."""
    with logged_to(log):
        quantize(build_dir / "llama-quantize", bf16, out, quant, threads)
