"""What a cell sends its server: the cell's own request and the server's discarded warm-up, and the two ways a
request ends badly (CellError: the cell fails; AttemptFailed: a new server may do better)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import httpx

from specbench.core.config import sampling
from specbench.core.config.chat_template import describe
from specbench.core.plan.cells import Cell
from specbench.engines.client import Exchange, Generation, ReasoningNotOff, RequestRefused
from specbench.engines.registry import engine
from specbench.measure.condition_setup import Setup

if TYPE_CHECKING:
    from specbench.engines.engine import Server


class CellError(RuntimeError):
    """A cell failed; the message is one line naming the cell and the log to read."""


class AttemptFailed(RuntimeError):
    """One attempt failed in a way a new server may not (it died, the port was taken, the connection broke)."""

    def __init__(self, reason: str, server_pid: int | None) -> None:
        super().__init__(reason)
        self.reason, self.server_pid = reason, server_pid


def reasoning_refusal(setup: Setup, label: str, problem: str) -> str:
    """One line: the cell, how its prompt ends, and the template that rendered it."""
    template = describe(setup.chat_template, setup.model_manifest.get("chat_template"))
    return (
        f"cell {label}: reasoning is off (config reasoning: false), but {problem}; the chat template that rendered it: "
        f"{template}. Give the target a template that renders reasoning off (models.target.chat_template)"
    )


@contextlib.contextmanager
def asking(setup: Setup, server: Server, label: str, what: str = "") -> Iterator[None]:
    """Requests to ``server`` for cell ``label`` (``what``: which request, where it is not the cell's own), their
    failures as CellError (a refusal, reasoning not off: any server would answer so) or AttemptFailed (the server
    died or broke off)."""
    which = f"{what}: " if what else ""
    try:
        yield
    except RequestRefused as error:
        raise CellError(f"cell {label}: {which}{error}; read {setup.server_log}") from error
    except ReasoningNotOff as error:
        raise CellError(reasoning_refusal(setup, label, str(error))) from error
    except (httpx.HTTPError, ValueError, OSError) as error:
        raise AttemptFailed(which + engine(setup.engine).request_failure(error, server), server.pid) from error


def ask(setup: Setup, server: Server, cell: Cell, served: str | None) -> Exchange:
    """The cell's one request to its engine's server (``served``: the model the server lists, where it asks by name),
    with its prompt's messages and its generation settings."""
    generation = Generation(
        setup.reasoning,
        setup.max_tokens[cell.key],
        cell.temperature,
        cell.seed(setup.base_seed),
        sampling.values(setup.sampling),
    )
    messages = setup.prompt_manifests[cell.key]["messages"]
    return engine(setup.engine).ask(setup, server, messages, generation, served)


# The warm-up's one message: no task's prompt begins so (its first tokens are no prefix a server could reuse)
WARMUP_PROMPT = "Warm-up request, not measured: count from one to twenty in words."


def warm_up(setup: Setup, server: Server, served: str | None, label: str) -> dict[str, Any] | None:
    """The server's discarded warm-up request (``setup.warmup_tokens`` tokens of WARMUP_PROMPT at temperature 0,
    before its first cell, ``label``; its lazy start-up is not timed), as the record keeps it; None where there is
    none. Fails as the cell's own request would (``asking``)."""
    if setup.warmup_tokens <= 0:
        return None
    generation = Generation(setup.reasoning, setup.warmup_tokens, 0.0, setup.base_seed, sampling.values(setup.sampling))
    t0 = time.perf_counter()
    with asking(setup, server, label, "the warm-up request"):
        messages = [{"role": "user", "content": WARMUP_PROMPT}]
        exchange = engine(setup.engine).ask(setup, server, messages, generation, served)
    response = exchange.response
    return {
        "prompt": WARMUP_PROMPT,
        "max_tokens": setup.warmup_tokens,
        "content": response.get("content"),
        "tokens": len(response.get("tokens") or []) or (response.get("usage") or {}).get("completion_tokens"),
        "wall_s": time.perf_counter() - t0,
    }
