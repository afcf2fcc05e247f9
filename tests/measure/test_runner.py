"""The cell runner's attempt loop: a contended attempt is rejected, recorded, and the cell measured again.

GPU contention cannot happen on these machines (no NVIDIA GPU), so the attempt itself is replaced by recorded
outcomes; the decision on real sample sequences is tested in contention/test_watch.py."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from specbench.contention.quiet import QuietWait
from specbench.contention.samples import Verdict
from specbench.core.plan.cells import Cell
from specbench.core.records.counters import counts_of, request_counts
from specbench.engines import llama_server as serving_module
from specbench.engines.client import Exchange, Generation
from specbench.measure import runner as cell_module
from specbench.measure.condition_setup import Setup, condition_setup, job_setup
from specbench.measure.requests import WARMUP_PROMPT, CellError
from specbench.measure.runner import run_cells
from support.paths import TEST_DATA
from support.runner import CELL, TIMINGS, outcome, setup_of


def test_contended_attempt_is_rejected_then_measured_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outcomes = iter([outcome(True, 11, 52.0), outcome(False, 12, 126.0)])
    monkeypatch.setattr(cell_module, "_attempt", lambda setup, cells, attempt: next(outcomes))
    (tmp_path / "server.log").write_text("main: server is listening\n")
    [record] = run_cells(setup_of(tmp_path), [CELL])
    assert record["attempt"] == 2
    assert record["response"]["timings"]["predicted_per_second"] == 126.0
    assert record["rejected_attempts"] == [
        {
            "attempt": 1,
            "outcome": "contended",
            "reason": "pid 7781 in 3 sample(s) (during)",
            "foreign_pids": [7781],
            "busiest": "GPU process pid 7781 on the cell's GPU",
            "server_pid": 11,
            "tokens_per_s": [52.0],
        }
    ]
    assert record["contention"]["contended"] is False and record["quiet_waits"] == []  # quiet_timeout_s 0: no wait


def test_a_killed_run_s_samples_scratch_is_removed_when_the_cell_is_measured_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cell killed with SIGKILL (slurmd past its time limit) left '.gpu.jsonl.attempt1' beside the cell."""
    leftover = tmp_path / ".gpu.jsonl.attempt1"
    leftover.write_text('{"phase": "during"}\n')
    other = tmp_path / ".other.jsonl.attempt1"  # another cell's: not this cell's to remove
    other.write_text("")
    monkeypatch.setattr(cell_module, "_attempt", lambda setup, cells, attempt: outcome(False, 12, 126.0))
    [record] = run_cells(setup_of(tmp_path), [CELL])
    assert record["attempt"] == 1
    assert not leftover.exists() and other.exists()


def test_every_attempt_contended_fails_naming_the_foreign_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cell_module, "_attempt", lambda setup, cells, attempt: outcome(True, 10 + attempt, 50.0))
    with pytest.raises(CellError) as caught:
        run_cells(setup_of(tmp_path, attempts=2), [CELL])
    message = str(caught.value)
    assert message.startswith(
        "cell essay/off/t0.0/r1: all 2 attempts were contended; busiest other processes in "
        "the last: GPU process pid 7781 on the cell's GPU (pid 7781 in 3 sample(s) (during))"
    )
    assert str(tmp_path / "gpu.jsonl") in message


CLEAN = Verdict(contended=False, reason="clean", foreign_pids=[], samples=3, failed_samples=0, nvml="ok")


def _waits(monkeypatch: pytest.MonkeyPatch, *quiet: bool) -> list[dict]:
    """Replace the wait for a quiet machine by outcomes in order (12.5 s each); returns the calls' arguments."""
    calls: list[dict] = []
    outcomes = iter(quiet)

    def wait(take: object, decide: object, **kwargs: Any) -> QuietWait:
        calls.append(kwargs)
        last = (
            CLEAN
            if quiet[len(calls) - 1]
            else Verdict(
                contended=True,
                reason="contended: other processes used 0.49 of the CPU time > 0.25",
                foreign_pids=[],
                samples=3,
                failed_samples=0,
                nvml="ok",
                foreign_cpu={
                    "share": 0.49,
                    "cpu_s": 9.8,
                    "window_s": 10.0,
                    "cpu_count": 2,
                    "top": [{"pid": 4321, "comm": "pip", "command": "pip install torch", "cpu_s": 7.4}],
                },
            )
        )
        return QuietWait(kwargs["after_attempt"], kwargs["why"], 12.5, next(outcomes), kwargs["window_s"], 3, last)

    monkeypatch.setattr(cell_module, "wait_for_quiet", wait)
    return calls


def test_after_a_contended_attempt_the_cell_waits_for_quiet_then_measures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outcomes = iter([outcome(True, 11, 52.0), outcome(False, 12, 126.0)])
    monkeypatch.setattr(cell_module, "_attempt", lambda setup, cells, attempt: next(outcomes))
    calls = _waits(monkeypatch, True)
    [record] = run_cells(setup_of(tmp_path, quiet_timeout_s=300.0), [CELL])
    assert record["attempt"] == 2 and record["contention"]["contended"] is False
    [wait] = record["quiet_waits"]
    assert wait == {
        "after_attempt": 1,
        "why": "pid 7781 in 3 sample(s) (during)",
        "waited_s": 12.5,
        "quiet": True,
        "window_s": 10.0,
        "windows_judged": 3,
        "last": CLEAN.to_json(),
    }
    assert calls[0]["timeout_s"] == 300.0 and calls[0]["window_s"] == 10.0


def test_a_machine_that_stays_busy_past_the_bound_fails_the_cell_naming_the_busiest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outcomes = iter([outcome(True, 11, 52.0), outcome(True, 12, 50.0)])
    monkeypatch.setattr(cell_module, "_attempt", lambda setup, cells, attempt: next(outcomes))
    calls = _waits(monkeypatch, True, False)
    with pytest.raises(CellError) as caught:
        run_cells(replace(setup_of(tmp_path, quiet_timeout_s=20.0), max_foreign_cpu=0.25), [CELL])
    assert [c["timeout_s"] for c in calls] == [20.0, 7.5]  # one budget for the cell: what the first wait left
    assert str(caught.value) == (
        "cell essay/off/t0.0/r1: the machine was not quiet for 10 s within measurement.quiet_timeout_s = 20 s of "
        "waiting after attempt 2 was contended: other processes used 0.49 of the CPU time in the last 10 s (limit "
        "0.25); busiest: pid 4321 pip (pip install torch) using 0.74 of a CPU. Stop them or wait, then run the same "
        f"snakemake command again; see {tmp_path / 'gpu.jsonl'}"
    )


def test_failed_attempt_is_recorded_then_measured_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def attempt(setup: Setup, cells: list[Cell], n: int) -> tuple[list[dict], Verdict]:
        if n == 1:
            raise cell_module.AttemptFailed("llama-server (pid 21) was killed by SIGKILL during the request", 21)
        return outcome(False, 22, 120.0)

    monkeypatch.setattr(cell_module, "_attempt", attempt)
    [record] = run_cells(setup_of(tmp_path), [CELL])
    assert record["attempt"] == 2
    assert record["rejected_attempts"] == [
        {
            "attempt": 1,
            "outcome": "failed",
            "reason": "llama-server (pid 21) was killed by SIGKILL during the request",
            "foreign_pids": [],
            "server_pid": 21,
            "tokens_per_s": [],
        }
    ]


def test_every_attempt_failed_names_the_cell_the_attempts_and_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def attempt(setup: Setup, cells: list[Cell], n: int) -> tuple[list[dict], Verdict]:
        raise cell_module.AttemptFailed("llama-server exited with code 1 before it became ready", None)

    monkeypatch.setattr(cell_module, "_attempt", attempt)
    with pytest.raises(CellError) as caught:
        run_cells(setup_of(tmp_path, attempts=2), [CELL])
    assert str(caught.value) == (
        "cell essay/off/t0.0/r1: llama-server exited with code 1 before it became ready "
        f"(attempt 2 of 2; earlier attempts failed the same way); read {tmp_path / 'server.log'}"
    )


def test_condition_needing_mtp_is_refused_before_any_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cell_module, "_attempt", lambda *a: pytest.fail("no server may start"))
    setup = setup_of(tmp_path)
    setup = Setup(**{**setup.__dict__, "condition": "mtp", "requires": ["mtp"]})
    with pytest.raises(CellError, match="needs the model's MTP layer"):
        run_cells(setup, [Cell("essay", "mtp", 0.0, 1)])


class _QuietWatch:
    """A GPU watch that samples nothing (there is no GPU here)."""

    nvml_available = False

    def __init__(self, path: Path, interval_s: float, sampler: Any = None) -> None:
        self.samples: list = []

    def sample_now(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __enter__(self) -> _QuietWatch:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def _one_fake_server(monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    """Replace the server, the watch and the requests: every server start and request is recorded in order."""
    calls: list[dict] = []

    @contextlib.contextmanager
    def server(
        binary: Path, args: list[str], log: Path, timeout: float, *, log_header: str, name: str, env: Any
    ) -> Iterator:
        calls.append({"server": len([c for c in calls if "server" in c]) + 1})
        with open(log, "a") as out:
            out.write(log_header + "\n")
        yield SimpleNamespace(
            pid=4242, port=8080, argv=["llama-server", *args], started_at=0.0, url="http://127.0.0.1:8080"
        )

    def exchange(
        url: str, messages: list[dict], generation: Generation, *, timeout_s: float, chat_template: str
    ) -> Exchange:
        max_tokens = generation.max_tokens
        calls.append(
            {
                "prompt": messages[0]["content"],
                "max_tokens": max_tokens,
                "temperature": generation.temperature,
                "seed": generation.seed,
            }
        )
        timings = {**TIMINGS, "predicted_n": max_tokens}
        return Exchange(
            {},
            "p",
            {},
            {"content": "The answer is 42.", "tokens": list(range(max_tokens)), "stop_type": "eos", "timings": timings},
            {"request_wall_s": 0.1, "decode_tokens_per_s": 100.0},
        )

    monkeypatch.setattr(serving_module, "start_server", server)
    monkeypatch.setattr(cell_module, "check_identity", lambda server: None)
    monkeypatch.setattr(serving_module, "run_exchange", exchange)
    monkeypatch.setattr(cell_module, "GpuWatch", _QuietWatch)
    monkeypatch.setattr(cell_module, "judge", lambda *args, **kwargs: CLEAN)
    monkeypatch.setattr(cell_module, "device_info", lambda: {"nvml": "unavailable", "devices": []})
    monkeypatch.setattr(cell_module, "assigned_devices", lambda *args: [])
    return calls


def test_one_server_answers_cells_of_several_tasks_each_with_its_own_prompt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _one_fake_server(monkeypatch)
    prompts = {
        "essay": {"sha256": "e5", "messages": [{"role": "user", "content": "an essay"}]},
        "gsm8k": {
            "sha256": "95",
            "messages": [{"role": "user", "content": "three problems"}],
            "dataset": [{"reference": "42"}],
        },
    }
    setup = Setup(
        **{
            **setup_of(tmp_path).__dict__,
            "condition": "ngram-mod-warm",
            "prompt_manifests": prompts,
            "max_tokens": {"essay": 6, "gsm8k": 3},
            "scope": "condition",
        }
    )
    cells = [
        Cell("gsm8k", "ngram-mod-warm", 0.0, 1),
        Cell("gsm8k", "ngram-mod-warm", 0.0, 2),
        Cell("essay", "ngram-mod-warm", 0.0, 1),
    ]
    records = run_cells(setup, cells)
    assert calls == [
        {"server": 1},  # one server, then the requests in the order given, each with its task's prompt
        {"prompt": "three problems", "max_tokens": 3, "temperature": 0.0, "seed": 1},
        {"prompt": "three problems", "max_tokens": 3, "temperature": 0.0, "seed": 2},
        {"prompt": "an essay", "max_tokens": 6, "temperature": 0.0, "seed": 1},
    ]
    assert [r["cell"]["label"] for r in records] == [c.label for c in cells]
    assert [r["server"]["position"] for r in records] == [1, 2, 3]
    assert {r["server"]["pid"] for r in records} == {4242}
    assert all(r["server"]["scope"] == "condition" and r["server"]["shared"] for r in records)
    assert all(r["server"]["sequence_length"] == 3 for r in records)
    assert [r["provenance"]["prompt_sha256"] for r in records] == ["95", "95", "e5"]
    assert [len(r["response"]["tokens"]) for r in records] == [3, 3, 6]
    # the references it was asked about, not a score: scoring is the table's
    assert records[0]["references"] == [{"row": None, "reference": "42"}] and records[2]["references"] is None
    assert not any("task_check" in r or "figures" in r for r in records)


def test_each_server_answers_a_discarded_warm_up_before_its_first_cell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """server.warmup_tokens: one warm-up request per server (another prompt, temperature 0), before the counters'
    first scrape and outside every cell's timed figures; each record keeps it; 0: none, the first request is the
    cell's."""
    calls = _one_fake_server(monkeypatch)
    scraped: list[int] = []
    monkeypatch.setattr(cell_module, "scrape", lambda url: scraped.append(len(calls)) or {"lines": [], "error": None})
    setup = Setup(**{**setup_of(tmp_path).__dict__, "warmup_tokens": 5, "scope": "task"})
    cells = [Cell("essay", "off", 1.0, 1), Cell("essay", "off", 1.0, 2)]
    records = run_cells(setup, cells)
    assert calls[:3] == [
        {"server": 1},
        {"prompt": WARMUP_PROMPT, "max_tokens": 5, "temperature": 0.0, "seed": 0},
        {"prompt": "hi", "max_tokens": 4, "temperature": 1.0, "seed": 1},
    ]
    assert len(calls) == 4 and scraped[0] == 2  # one warm-up for the server; the first scrape after it
    for record in records:
        assert record["server"]["warmup"]["prompt"] == WARMUP_PROMPT and record["server"]["warmup"]["tokens"] == 5
        assert record["response"]["timings"]["predicted_n"] == 4  # the cell's own request was timed
    calls.clear()
    (bare,) = run_cells(setup_of(tmp_path), [CELL])
    assert calls[1]["prompt"] == "hi" and bare["server"]["warmup"] is None


def test_a_fresh_cell_records_its_scope(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _one_fake_server(monkeypatch)
    [record] = run_cells(setup_of(tmp_path), [CELL])
    assert record["server"]["scope"] == "fresh" and record["server"]["shared"] is False
    assert record["provenance"]["prompt_sha256"] == "ef"


def test_a_cell_of_a_task_without_a_prompt_is_refused_before_any_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cell_module, "_attempt", lambda *a: pytest.fail("no server may start"))
    with pytest.raises(CellError, match=r"no prompt or max_tokens given for prompt\(s\) \['todo-app'\]"):
        run_cells(setup_of(tmp_path), [CELL, Cell("todo-app", "off", 0.0, 1)])


def test_a_condition_s_setup_file_and_the_prompt_manifests_make_the_job_s_setup(tmp_path: Path) -> None:
    build = tmp_path / "bin"
    build.mkdir()
    (build / "manifest.json").write_text(json.dumps({"binaries": {"llama-server": {"sha256": "ab"}}}))
    model = {"path": str(tmp_path / "m.gguf"), "sha256": "cd", "mtp": {"present": True}}
    draft = {"path": str(tmp_path / "d.gguf"), "sha256": "ee"}
    settings = {
        "server_args": ["-m", "m.gguf", "--spec-type", "draft"],
        "requires": ["draft"],
        "reasoning": False,
        "base_seed": 7,
        "startup_timeout_s": 5,
        "request_timeout_s": 9,
        "sample_interval_s": 0.5,
        "max_attempts": 2,
        "max_load_per_cpu": None,
        "max_foreign_cpu": 0.25,
    }
    written = condition_setup("dflash", build, model, draft, {"fingerprint": "c0de"}, settings)
    on_disk = json.loads(json.dumps(written))  # what the rule writes is plain JSON
    prompts = [
        {"task": "essay", "sha256": "ef", "messages": [], "max_tokens": 64},
        {"task": "gsm8k", "sha256": "12", "messages": [], "max_tokens": 256},
    ]
    setup = job_setup(on_disk, prompts, scope="condition", server_log=tmp_path / "s.log", gpu_samples=tmp_path / "g")
    assert setup.server_binary == build / "llama-server" and setup.model_path == tmp_path / "m.gguf"
    assert setup.draft_path == tmp_path / "d.gguf" and setup.draft_manifest == draft
    assert setup.build_manifest["binaries"]["llama-server"]["sha256"] == "ab" and setup.code_fingerprint == "c0de"
    assert setup.max_tokens == {"essay": 64, "gsm8k": 256} and set(setup.prompt_manifests) == {"essay", "gsm8k"}
    assert (setup.scope, setup.max_attempts, setup.max_foreign_cpu, setup.base_seed) == ("condition", 2, 0.25, 7)
    no_draft = job_setup(
        json.loads(json.dumps(condition_setup("off", build, model, None, {"fingerprint": "c"}, settings))),
        prompts[:1],
        scope="fresh",
        server_log=tmp_path / "s.log",
        gpu_samples=tmp_path / "g",
    )
    assert no_draft.draft_path is None and no_draft.draft_manifest is None


def test_a_speculative_vllm_answer_without_its_acceptance_fails_the_cell_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """vLLM's answer, its acceptance as vLLM 0.32 reported it, once without ``metrics.speculative_decoding`` (a vLLM
    or a proxy that drops it): the cell fails at once, naming the version and the field, instead of recording 0
    drafted tokens; the same answer with it is recorded."""
    from specbench.engines import vllm_server

    @contextlib.contextmanager
    def server(
        binary: Path, args: list[str], log: Path, timeout: float, *, log_header: str, name: str, env: Any
    ) -> Iterator:
        log.write_text(log_header + "\n")
        yield SimpleNamespace(pid=4242, port=8080, argv=[str(binary), *args], started_at=0.0, url="http://127.0.0.1:1")

    # recorded from vLLM 0.32.0 (CPU build): the tiny MTP cell on the essay, temperature 0, repeat 1
    spec = {
        "acceptance_histogram": [0, 0, 85],
        "draft_acceptance_rate": 1.0,
        "mean_acceptance_length": 3.0,
        "num_accepted_draft_tokens": 170,
        "num_draft_tokens": 170,
        "num_spec_steps": 85,
        "num_spec_tokens": 2,
    }
    answer: dict[str, Any] = {"content": "x", "tokens": [1, 2, 3, 4], "finish_reason": "length"}
    answer["usage"] = {"completion_tokens": 4, "prompt_tokens": 3}

    def exchange(url: str, model: str | None, messages: list, generation: Generation, **kwargs: Any) -> Exchange:
        timing = {"request_wall_s": 0.06, "first_token_s": 0.01, "last_token_s": 0.05, "chunk_tokens": [[1, 4]]}
        return Exchange({}, "p", {}, dict(answer), timing)

    monkeypatch.setattr(vllm_server, "start_server", server)
    monkeypatch.setattr(vllm_server, "run_chat_exchange", exchange)
    monkeypatch.setattr(vllm_server, "reported_identity", lambda client, url: {"/v1/models": {"data": [{"id": "m"}]}})
    monkeypatch.setattr(vllm_server, "descendants", lambda pid: [])
    monkeypatch.setattr(cell_module, "check_identity", lambda server: None)
    monkeypatch.setattr(cell_module, "GpuWatch", _QuietWatch)
    monkeypatch.setattr(cell_module, "judge", lambda *args, **kwargs: CLEAN)
    monkeypatch.setattr(cell_module, "scrape", lambda url: {"lines": [], "error": None})
    setup = Setup(
        **{
            **setup_of(tmp_path).__dict__,
            "condition": "mtp",
            "engine": "vllm",
            "server_binary": tmp_path / "python",
            "build_manifest": {"python": str(tmp_path / "python"), "vllm_version": "0.32.0", "backend": "cpu"},
            "server_args": ["-m", "vllm.entrypoints.openai.api_server", "--speculative-config", "{}"],
        }
    )
    with pytest.raises(CellError) as caught:
        run_cells(setup, [Cell("essay", "mtp", 0.0, 1)])
    assert str(caught.value) == (
        "cell essay/mtp/t0.0/r1: vLLM 0.32.0 answered a speculative request without metrics.speculative_decoding, and "
        "its /metrics had no vllm:spec_decode_* counters: "
        "its acceptance would read as 0; start it with --per-request-spec-decode-metrics summary (vllm.conditions' "
        f"flags); read {tmp_path / 'server.log'}"
    )
    # its /metrics counters (vLLM 0.32.0's own lines around the same request) stand in for the missing field
    scrapes = json.loads((TEST_DATA / "metrics" / "vllm-mtp-essay.json").read_text())["metrics"]
    sides = iter([scrapes["before"], scrapes["after"]])
    monkeypatch.setattr(cell_module, "scrape", lambda url: next(sides))
    (counted,) = run_cells(setup, [Cell("essay", "mtp", 0.0, 1)])
    assert counts_of(counted) == (request_counts(scrapes), "/metrics") and counts_of(counted)[0].drafted == 170
    monkeypatch.setattr(cell_module, "scrape", lambda url: {"lines": [], "error": None})
    answer["metrics"] = {"speculative_decoding": spec}
    (record,) = run_cells(setup, [Cell("essay", "mtp", 0.0, 1)])
    assert record["response"]["metrics"]["speculative_decoding"] == spec
