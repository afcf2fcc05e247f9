"""The external commands a step runs (git, pip, cmake, the converter, llama-quantize): echoed, their output in the
rule's log, a failure raised as the step's own error."""

from __future__ import annotations

import subprocess
import sys


class CommandFailed(RuntimeError):
    """A command exited non-zero; the message gives its exit code and command line."""


def run_command(
    argv: list[str], *, capture: bool = False, env: dict[str, str] | None = None, error: type[Exception] = CommandFailed
) -> str:
    """Run ``argv``, echoing it; its output streams to stderr (the log), or is returned with ``capture``. A non-zero
    exit raises ``error`` naming the command."""
    print("+", " ".join(argv), file=sys.stderr, flush=True)
    sys.stderr.flush()
    result = subprocess.run(
        argv, stdout=subprocess.PIPE if capture else sys.stderr, stderr=sys.stderr, text=True, env=env
    )
    if result.returncode != 0:
        raise error(f"command failed ({result.returncode}): {' '.join(argv)}")
    return result.stdout if capture else ""
