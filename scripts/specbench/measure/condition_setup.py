"""What every cell of a condition is served with (``Setup``): resolved once per condition by the workflow
(``condition_setup``, rule condition_setup) and completed per cell job with its prompts and logs (``job_setup``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from specbench.core.config import sampling
from specbench.core.config.builds import DEFAULT_ENGINE
from specbench.core.config.chat_template import GGUF
from specbench.core.plan.cells import prompt_key
from specbench.core.records.ownership import OtherModelsCell, check_cells, setup_models
from specbench.core.steps.entry import fail, logged_to
from specbench.core.steps.files import file_manifest, read_json, write_json_atomic
from specbench.engines.registry import engine


@dataclass(frozen=True)
class Setup:
    """What every cell of one condition needs, resolved by the workflow (``server_args``: the argv after the
    binary, model and draft paths included; the cell adds only the loopback host and the port). Prompts and
    max_tokens are keyed by prompt key (``Cell.key``), so one server can answer cells of several tasks and prompts;
    ``scope`` says what one server answers: 'fresh' (one cell), 'task' (a prompt's repeats at one temperature) or
    'condition' (every cell of it)."""

    condition: str
    server_binary: Path | None  # llama-server, or a vLLM environment's python; None for an endpoint (not started here)
    build_manifest: dict[str, Any]
    model_path: Path
    model_manifest: dict[str, Any]
    draft_path: Path | None
    draft_manifest: dict[str, Any] | None
    prompt_manifests: dict[str, dict[str, Any]]  # prompt key -> its prompt manifest
    server_args: list[str]
    requires: list[str]
    max_tokens: dict[str, int]  # prompt key -> its max_tokens
    reasoning: bool
    base_seed: int
    startup_timeout_s: float
    request_timeout_s: float
    server_log: Path
    gpu_samples: Path
    code_fingerprint: str
    sample_interval_s: float = 2.0
    max_attempts: int = 3
    max_load_per_cpu: float | None = None
    max_foreign_cpu: float | None = None
    quiet_window_s: float = 10.0  # after a contended attempt: how long the machine must be measured quiet
    quiet_timeout_s: float = 600.0  # ... and how long a cell waits for that at most, in all (0: no waiting)
    scope: str = "fresh"
    chat_template: str = GGUF  # how prompts are rendered (models.target.chat_template; core.config.chat_template)
    watched_devices: tuple[str, ...] | None = None  # UUIDs of the cell's GPUs (None: all), set by run_cells
    gpu_watch: str = "nvml"  # how the GPU is watched (core.config.backends.watch_of), set by run_cells
    endpoint: str | None = None  # an endpoint build's server for this condition (its base URL): measured, not started
    engine: str = DEFAULT_ENGINE  # what serves the condition (specbench.engines.registry: its name)
    # what every request states (core.config.sampling): per setting its value and where it came from
    sampling: dict[str, dict[str, Any]] = field(default_factory=dict)
    warmup_tokens: int = 0  # a discarded warm-up request of this many tokens before a server's first cell (0: none)
    server_env: dict[str, str] = field(default_factory=dict)  # variables its build sets for the server (its env)
    # the Hugging Face checkpoints a vLLM server loads, by role: folder, Hub repo and commit, each file's sha256
    checkpoints: dict[str, dict[str, Any]] = field(default_factory=dict)


# The Setup fields resolved once per condition (rule condition_setup writes them as JSON); a cell job adds its
# tasks' prompt manifests (which carry max_tokens), its logs and its scope.
_PATH_FIELDS = ("server_binary", "model_path", "draft_path")


def condition_setup(
    condition: str,
    build: Path | None,
    model_manifest: dict[str, Any],
    draft_manifest: dict[str, Any] | None,
    code_manifest: dict[str, Any],
    settings: dict[str, Any],
) -> dict[str, Any]:
    """What every cell of a condition is served with, as JSON: the server's executable and what it is (``build``: a
    llama.cpp build's folder of binaries, a vLLM build's environment manifest; None for an endpoint, whose URL is in
    ``settings``), the verified models, the code's fingerprint, and ``settings`` (engine, server_args, requires and
    the measurement settings of Setup)."""
    return {
        "condition": condition,
        **engine(settings.get("engine", DEFAULT_ENGINE)).executable(build, settings.get("endpoint")),
        "model_path": model_manifest["path"],
        "model_manifest": model_manifest,
        "draft_path": draft_manifest["path"] if draft_manifest else None,
        "draft_manifest": draft_manifest,
        "code_fingerprint": code_manifest["fingerprint"],
        **settings,
        "sampling": sampling.resolve(settings.get("sampling") or {}, model_manifest.get("sampling") or {}),
    }


def job_setup(
    served: dict[str, Any], prompt_manifests: list[dict[str, Any]], *, scope: str, server_log: Path, gpu_samples: Path
) -> Setup:
    """A cell job's Setup: its condition's setup file, the prompt manifests of its tasks, its own logs."""
    fields = {k: Path(v) if k in _PATH_FIELDS and v is not None else v for k, v in served.items()}
    keyed = {prompt_key(m["task"], m.get("prompt", "")): m for m in prompt_manifests}
    return Setup(
        **fields,
        prompt_manifests=keyed,
        max_tokens={key: m["max_tokens"] for key, m in keyed.items()},
        scope=scope,
        server_log=server_log,
        gpu_samples=gpu_samples,
    )


SNAKEMAKE_MARK = ".snakemake_timestamp"  # what Snakemake leaves in a directory() output: not the checkpoint's


def checkpoint_identity(folder: Path, download: dict[str, Any] | None) -> dict[str, Any]:
    """A checkpoint a server loads as its cells record it: the folder, the Hub repo and commit and each file's size
    and sha256 as its download recorded them (``download``), else its files hashed here (a local or tiny one)."""
    if download is not None:
        return {"path": str(folder), "repo": download["repo"], "commit": download["commit"], "files": download["files"]}
    files = [f for f in file_manifest(folder) if f["path"] != SNAKEMAKE_MARK]
    return {"path": str(folder), "repo": None, "commit": None, "files": files}


def condition_setup_step(
    condition: str,
    build_dir: Path | None,
    model_manifest: Path,
    draft_manifest: Path | None,
    code_manifest: Path,
    settings: dict[str, Any],
    out: Path,
    log: Path,
    cells: str | None = None,
    checkpoints: dict[str, tuple[Path, Path | None]] | None = None,
) -> None:
    """Rule condition_setup: what every cell of ``condition`` is served with, as one JSON file. ``cells`` (a glob,
    relative to the working directory) finds the condition's cell files that a new setup makes out of date: when one
    holds another model's measurement, no setup is written (so Snakemake remakes none of them) and one line says
    which."""
    with logged_to(log):
        setup = condition_setup(
            condition,
            build_dir,
            read_json(model_manifest),
            read_json(draft_manifest) if draft_manifest else None,
            read_json(code_manifest),
            dict(settings),
        )
        setup["checkpoints"] = {
            role: checkpoint_identity(folder, read_json(download) if download else None)
            for role, (folder, download) in (checkpoints or {}).items()
        }
        if cells:
            try:
                check_cells(Path().glob(cells), setup_models(setup))
            except OtherModelsCell as error:
                fail(f"condition {condition}: {error}", log)
        write_json_atomic(out, setup)
        served = setup["server_binary"] or f"endpoint {setup['endpoint']} (not started here)"
        print(f"condition {setup['condition']}: {served} {' '.join(setup['server_args'])}")
