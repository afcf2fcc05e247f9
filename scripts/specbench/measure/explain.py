"""Explaining a divergence, after the cells and outside any timed window: a temperature-0 cell whose tokens differ
from its reference's (the baseline's cell of the same repeat; for the baseline's control, its first repeat) is asked
about on a fresh server of the baseline condition's setup. Requests: the prompt's token ids; (a) the reference's
own request again with ``n_probs``, just past the difference (the probabilities as the baseline computed them, token
by token); (b) the prompt and the reference's tokens before the difference as one token prompt, one token (as a
batched evaluation computes them); the texts around the difference. The record holds each request exactly as sent,
its sha256 and the answer; what they mean is the table's (analysis.divergence). The cell files are only read."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

from specbench.core.records.explanations import (
    BATCHED,
    EXPLANATION_VERSION,
    SEQUENTIAL,
    TOKENIZE,
    TOP_K,
    first_difference,
    text_segments,
)
from specbench.core.steps.entry import fail, logged_to
from specbench.core.steps.files import read_json, sha256_file, sha256_text, write_json_atomic
from specbench.core.steps.guard import Interrupted, interrupt_guard
from specbench.engines.client import RequestRefused, check_response
from specbench.engines.server_process import ServerError, check_identity, start_server


def canonical(body: dict[str, Any]) -> str:
    """A request body as sent (UTF-8): canonical JSON (sorted keys, no spaces), so that its sha256 can be checked
    again from the recorded body."""
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def request_sha256(body: dict[str, Any]) -> str:
    """The sha256 of a request body's bytes as sent (``canonical``)."""
    return sha256_text(canonical(body))


def explanation_requests(
    url: str, completion: dict[str, Any], tokens: Sequence[int], reference: Sequence[int], at: int, timeout_s: float
) -> list[dict[str, Any]]:
    """Ask the server at ``url`` about the difference at ``at`` between ``tokens`` and the reference's tokens (whose
    ``/completion`` body was ``completion``); each exchange as {name, endpoint, body, sha256, response}."""
    exchanges: list[dict[str, Any]] = []
    with httpx.Client(timeout=timeout_s) as client:

        def ask(name: str, endpoint: str, body: dict[str, Any]) -> dict[str, Any]:
            sent = client.post(
                f"{url}{endpoint}",
                content=canonical(body).encode("utf-8"),
                headers={"Content-Type": "application/json"},
            )
            check_response(sent, f"{url}{endpoint}")
            response = sent.json()
            exchanges.append(
                {"name": name, "endpoint": endpoint, "body": body, "sha256": request_sha256(body), "response": response}
            )
            return response

        prompt = ask(
            TOKENIZE, "/tokenize", {"content": completion["prompt"], "add_special": True, "parse_special": True}
        )["tokens"]
        ask(SEQUENTIAL, "/completion", {**completion, "stream": False, "n_probs": TOP_K, "n_predict": at + 1})
        ask(
            BATCHED,
            "/completion",
            {
                "prompt": [*prompt, *reference[:at]],
                "n_predict": 1,
                "n_probs": TOP_K,
                "temperature": completion["temperature"],
                "seed": completion["seed"],
                "cache_prompt": False,
                "return_tokens": True,
                "stream": False,
            },
        )
        for name, segment in text_segments(tokens, reference, at).items():
            ask(f"detokenize:{name}", "/detokenize", {"tokens": segment})
    return exchanges


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")


def explain(cell: Path, reference: Path, setup: dict[str, Any], server_log: Path) -> dict[str, Any]:
    """The explanation record of ``cell`` against ``reference`` (both cell files): where their tokens first differ
    and, when they do, the answers of a server of the baseline's ``setup``; no server when they are identical."""
    own, base = read_json(cell), read_json(reference)
    tokens, reference_tokens = own["response"]["tokens"], base["response"]["tokens"]
    at = first_difference(tokens, reference_tokens)
    record: dict[str, Any] = {
        "explanation_version": EXPLANATION_VERSION,
        "started_at": _now(),
        "cell": {"path": str(cell), "sha256": sha256_file(cell)},
        "reference": {"path": str(reference), "sha256": sha256_file(reference)},
        "first_difference": at,
        "top_k": TOP_K,
        "server": None,
        "requests": [],
    }
    if at is not None:
        with start_server(
            Path(setup["server_binary"]),
            setup["server_args"],
            server_log,
            setup["startup_timeout_s"],
            env=setup.get("server_env"),
        ) as server:
            check_identity(server)  # the port is this server's
            record["server"] = {
                "condition": setup["condition"],
                "pid": server.pid,
                "argv": server.argv,
                "log": str(server_log),
                "server_sha256": setup["build_manifest"]["binaries"]["llama-server"]["sha256"],
                "model_sha256": setup["model_manifest"]["sha256"],
            }
            record["requests"] = explanation_requests(
                server.url, base["request"]["completion"], tokens, reference_tokens, at, setup["request_timeout_s"]
            )
    return {**record, "ended_at": _now()}


def explain_step(cell: Path, reference: Path, setup: Path, out: Path, *, server_log: Path, log: Path) -> None:
    """Rule explain_divergence / explain_control: the explanation record of one cell, written atomically; a failure
    is one line naming the cell and the log, with no record written."""
    label = f"explanation of {cell}"
    with logged_to(log), interrupt_guard():
        try:
            record = explain(cell, reference, read_json(setup), server_log)
        except (ServerError, RequestRefused, httpx.HTTPError, OSError, ValueError, KeyError) as error:
            fail(f"{label}: {type(error).__name__}: {error}; read {server_log}", log)
        except (Interrupted, KeyboardInterrupt) as stop:
            fail(f"{label}: stopped ({stop or 'interrupted'}); the server was stopped and nothing was written", log)
        write_json_atomic(out, record)
        at = record["first_difference"]
        print(
            f"{label}: "
            + (
                "identical to its reference, nothing to explain"
                if at is None
                else f"first difference at token {at}; {len(record['requests'])} requests answered"
            )
        )
