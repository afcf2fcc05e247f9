"""Each condition's server: its argv after the binary, the measurement settings every cell records, its warm scope and
the regex of the conditions one cell rule serves."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from specbench.core.config import chat_template
from specbench.core.config.builds import DRAFT_FIELD, LLAMA_CPP, VLLM, Build
from specbench.core.plan.models import checkpoint_dir, model_gguf

VLLM_SERVER_MODULE = "vllm.entrypoints.openai.api_server"  # the module entry (the console script differs by package)


def server_args(config: dict, condition: str, base: Path) -> list[str]:
    """The server's argv after the binary: the model, the study's flags, the chat template's (a built-in one by
    name), the condition's flags (with the draft's path); the cell adds only --host 127.0.0.1 and the port it picks."""
    draft = model_gguf(config, "draft", base) if "draft" in config["models"] else None
    args = config["conditions"][condition]["args"]
    return [
        "-m",
        model_gguf(config, "target", base),
        *config["server"]["args"],
        *chat_template.server_flags(chat_template.setting(config)),
        *(a.replace("{draft}", draft) if draft else a for a in args),
    ]


def vllm_server_args(config: dict, build: Build, condition: str, base: Path) -> list[str]:
    """A vLLM server's argv after its interpreter: the module, the target's Hugging Face checkpoint, the build's flags
    and the condition's (with the draft's checkpoint for ``{draft}``); the cell adds --host 127.0.0.1 and the port."""
    draft = checkpoint_dir(config, "draft", base) if "draft" in config["models"] else None
    flags = build.vllm["conditions"][condition]
    return [
        "-m",
        VLLM_SERVER_MODULE,
        "--model",
        checkpoint_dir(config, "target", base),
        *build.vllm.get("args", []),
        *(f.replace(DRAFT_FIELD, draft) if draft else f for f in flags),
    ]


# llama-server's flags for its slots, context, batch and draft length (common/arg.cpp), and its default draft length
PARALLEL, CONTEXT = ("--parallel", "-np"), ("-c", "--ctx-size")
BATCH, UBATCH = ("-b", "--batch-size"), ("-ub", "--ubatch-size")
DRAFT_MAX = ("--draft-max", "--draft", "--draft-n", "--spec-draft-n-max")
DEFAULT_DRAFT_MAX = 16


def load_args(engine: str, args: list[str], clients: int) -> list[str]:
    """A condition's server argv for ``clients`` requests at once: llama-server with ``--parallel N`` and its context
    scaled by N (each slot keeps the per-slot context it had alone), refused where a set batch cannot hold N x (draft
    + 1) tokens; vLLM with ``--max-num-seqs N`` and prefix caching off; an endpoint's as it is (its limits are the
    user's)."""
    if engine == VLLM:
        return [*args, "--max-num-seqs", str(clients), "--no-enable-prefix-caching"]
    if engine != LLAMA_CPP:
        return list(args)
    out = list(args)
    context = _value(out, CONTEXT)
    if context is not None:
        out[context] = str(int(out[context]) * clients)
    draft_at = _value(out, DRAFT_MAX)
    needed = clients * ((int(out[draft_at]) if draft_at is not None else DEFAULT_DRAFT_MAX) + 1)
    for flags in (BATCH, UBATCH):
        at = _value(out, flags)
        if at is not None and int(out[at]) < needed:
            raise ValueError(
                f"{out[at - 1]} {out[at]} cannot hold {clients} requests' drafts at once ({clients} x (draft + 1) = "
                f"{needed} tokens): raise it, or leave it to llama-server's default"
            )
    parallel = _value(out, PARALLEL)
    if parallel is None:
        return [*out, PARALLEL[0], str(clients)]
    out[parallel] = str(clients)
    return out


def _value(args: list[str], flags: tuple[str, ...]) -> int | None:
    """The index of the value of the last of ``flags`` in ``args`` (llama-server reads the last), or None."""
    found = [i + 1 for i, arg in enumerate(args[:-1]) if arg in flags]
    return found[-1] if found else None


def measurement_settings(config: dict) -> dict[str, Any]:
    """The measurement settings every cell of a condition is served with (fields of
    specbench.measure.condition_setup.Setup)."""
    return {
        "reasoning": config["reasoning"],
        "base_seed": config["seed"],
        "startup_timeout_s": config["server"]["startup_timeout_s"],
        "request_timeout_s": config["server"]["request_timeout_s"],
        **{
            key: config["measurement"][key]
            for key in (
                "sample_interval_s",
                "max_attempts",
                "max_load_per_cpu",
                "max_foreign_cpu",
                "quiet_window_s",
                "quiet_timeout_s",
            )
        },
    }


def warm_scope(config: dict, condition: str) -> str:
    """What one server of a warm condition answers: the condition's own ``warm_scope``, else the config's."""
    return config["conditions"][condition].get("warm_scope") or config["warm_scope"]


def warm_scopes(config: dict, conditions: list[str]) -> set[str]:
    """The scopes the warm ones among ``conditions`` (the run's) run with: one cell rule each, defined only where a
    condition of the run needs it (a rule's outputs are matched against every file Snakemake plans, and one warm
    condition's server writes all its cells: thousands of output patterns in a large run)."""
    return {warm_scope(config, n) for n in conditions if config["conditions"][n]["server"] == "warm"}


def conditions_regex(config: dict, server: str, scope: str | None = None) -> str:
    """Wildcard regex of the conditions with this server mode ('fresh' or 'warm'; a warm one with this
    ``warm_scope`` where given); never matches if none."""
    names = [
        n
        for n, c in config["conditions"].items()
        if c["server"] == server and (scope is None or warm_scope(config, n) == scope)
    ]
    return "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) or "(?!)"
