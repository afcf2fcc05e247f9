"""How many tokens a speculative server is set to draft per verification step, whatever the engine: what the server
reported with its answer (vLLM's per-request ``num_spec_tokens``), else its argv (llama-server's draft-length flag,
the last one given; vLLM's ``--speculative-config`` ``num_speculative_tokens``), else what it said of itself
(SGLang's ``/server_info``), else what its log said (``n_max``)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from typing import Any

# llama-server's flags for the most tokens a draft may hold (b11223: --spec-draft-n-max; older builds the others)
LLAMA_DRAFT_MAX = ("--draft-max", "--draft", "--draft-n", "--spec-draft-n-max")
SPECULATIVE_CONFIG = "--speculative-config"  # vLLM's flag: a JSON object with num_speculative_tokens
VLLM_DRAFT_LENGTH = "num_speculative_tokens"


def argv_draft_length(argv: Sequence[str]) -> int | None:
    """The draft length a server's argv sets (the last flag that sets it), None where it sets none."""
    found: int | None = None
    for flag, value in itertools.pairwise(argv):
        if flag in LLAMA_DRAFT_MAX:
            found = int(value)
        elif flag == SPECULATIVE_CONFIG:
            try:
                spec = json.loads(value)
            except ValueError:
                continue  # the server refused it at start-up: no cell measured it
            if isinstance(spec, dict) and spec.get(VLLM_DRAFT_LENGTH) is not None:
                found = int(spec[VLLM_DRAFT_LENGTH])
    return found


def draft_length(record: Mapping[str, Any], logged_n_max: int | None) -> tuple[int | None, str | None]:
    """A cell's draft length and where it was read: 'response', 'argv' or 'log' (``logged_n_max``: the n_max its
    server logged); (None, None) where none says it (a baseline, or an engine's default it did not log)."""
    spec = ((record["response"].get("metrics") or {}).get("speculative_decoding")) or {}
    if spec.get("num_spec_tokens") is not None:
        return int(spec["num_spec_tokens"]), "response"
    from_argv = argv_draft_length(list((record.get("server") or {}).get("argv") or []))
    if from_argv is not None:
        return from_argv, "argv"
    from_info = info_draft_length(((record.get("server") or {}).get("endpoint") or {}).get("reported") or {})
    if from_info is not None:
        return from_info, "server info"
    return (int(logged_n_max), "log") if logged_n_max is not None else (None, None)


def info_draft_length(reported: Mapping[str, Any]) -> int | None:
    """The drafted tokens per verification step an SGLang server's ``/server_info`` (or ``/get_server_info``) says
    it verifies: ``speculative_num_draft_tokens`` - 1 (the tree's nodes past its root; SGLang counts its drafted
    tokens so), None where it says none."""
    for route in ("/server_info", "/get_server_info"):
        info = reported.get(route)
        if isinstance(info, Mapping) and info.get("speculative_num_draft_tokens") is not None:
            return int(info["speculative_num_draft_tokens"]) - 1
    return None
