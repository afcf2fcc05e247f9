"""Reading cell records of every readable version as the current one (specbench.analysis.record_reader)."""

from __future__ import annotations

import pytest

from specbench.analysis.record_reader import READABLE_VERSIONS, RecordVersionError, as_current
from specbench.analysis.record_rows import cell_row
from specbench.core.records.version import RECORD_VERSION

V6 = {
    "record_version": 6,
    "code_fingerprint": "c0de",
    "cell": {
        "machine": "h200",
        "task": "gsm8k",
        "condition": "dflash",
        "temperature": 0.0,
        "repeat": 1,
        "label": "h200:gsm8k/dflash/t0.0/r1",
    },
    "seed": 1,
    "attempt": 1,
    "rejected_attempts": [],
    "contention": {"reason": "clean"},
    "task_check": {
        "correct": 9,
        "total": 2,
        "per_problem": [  # what version 6 scored itself (9: never re-read)
            {"problem": 1, "extracted": "3", "reference": "3", "correct": True},
            {"problem": 2, "extracted": "5", "reference": "7", "correct": False},
        ],
    },
    "gpu_samples": "g.jsonl",
    "server": {
        "pid": 7,
        "argv": ["llama-server"],
        "log": "s.log",
        "scope": "fresh",
        "shared": False,
        "position": 1,
        "speculative": {
            "implementations": ["bogus"],
            "settings": {},
            "acceptance": [],
            "lines": [
                "common_speculative_impl_draft_dflash: adding speculative implementation 'draft-dflash'",
                "common_speculative_impl_draft_dflash: - n_max=15, n_min=0, p_min=0.75",
            ],
        },
    },
    "request": {},
    "response": {
        "content": "Answer 1: 3\nAnswer 2: 7",
        "tokens": [1, 2],
        "stop_type": "eos",
        "timings": {
            "predicted_per_second": 80.0,
            "predicted_n": 2,
            "predicted_ms": 25.0,
            "prompt_n": 10,
            "prompt_ms": 5.0,
            "draft_n": 4,
            "draft_n_accepted": 1,
        },
        "client_timing": {"decode_tokens_per_s": 79.0},
    },
    "figures": {
        "tokens_per_s": 1.0,
        "cell_wall_s": 2.0,
        "server_ready_s": 0.5,
        "request_wall_s": 0.1,
        "loadavg_1m_at_end": 0.3,
        "overhead_s": 99.0,
    },
    "provenance": {"server_binary": {"sha256": "s"}, "model": {"sha256": "m"}, "draft": None, "prompt_sha256": "p"},
    "started_at": "2026-11-30T10:00:00+00:00",
    "ended_at": "2026-11-30T10:00:01+00:00",
}


def test_a_version_6_record_is_read_from_its_raw_facts() -> None:
    """Version 6 kept every raw fact version 7 keeps; what it derived itself is computed again, never reused."""
    record = as_current(V6)
    assert record["record_version"] == RECORD_VERSION and RECORD_VERSION in READABLE_VERSIONS
    assert "task_check" not in record and "figures" not in record and "speculative" not in record["server"]
    assert [r["reference"] for r in record["references"]] == ["3", "7"]
    assert record["timing"]["cell_wall_s"] == 2.0
    row = cell_row(record, "c.json")
    assert (row["gsm8k_correct"], row["gsm8k_total"]) == (2, 2)  # scored again from the text, not the stored 9
    assert row["tokens_per_s"] == 80.0 and row["overhead_s"] == pytest.approx(2.0 - 0.03)  # from the timings
    assert row["spec_n_max"] == 15 and row["spec_implementations"] == ["draft-dflash"]  # parsed from its lines
    assert V6["task_check"]["correct"] == 9  # the record itself is not changed


def test_a_current_record_is_read_as_it_is_and_older_ones_are_refused() -> None:
    current = {**as_current(V6)}
    assert as_current(current) is current
    with pytest.raises(RecordVersionError, match="record version 5 cannot be read"):
        as_current({**V6, "record_version": 5})


def test_a_version_7_record_is_read_with_the_backend_its_build_recorded() -> None:
    """Version 7 named only `cuda`: read as version 8 with that backend, the watch it implies, no device list."""
    v7 = {**as_current(V6), "record_version": 7}
    v7["provenance"] = {**v7["provenance"], "llama_cpp": {"cmake_args": ["-DGGML_CUDA=ON"], "cuda": True}}
    v7["contention"] = {"reason": "clean", "nvml": "ok"}
    v7.pop("machine", None)
    record = as_current(v7)
    assert record["record_version"] == RECORD_VERSION
    assert record["provenance"]["llama_cpp"] == {"cmake_args": ["-DGGML_CUDA=ON"], "backend": "cuda"}
    assert (record["machine"]["backend"], record["machine"]["llama_devices"]) == ("cuda", None)
    assert record["contention"]["gpu_watch"] == "nvml"
    row = cell_row(record, "c.json")
    assert (row["backend"], row["gpu_watch"]) == ("cuda", "nvml")
    cpu = {
        **v7,
        "provenance": {**v7["provenance"], "llama_cpp": {"cuda": False}},
        "contention": {"reason": "accepted: NVML unavailable", "nvml": "unavailable"},
    }
    assert cell_row(as_current(cpu), "c.json")["gpu_watch"] == "cpu"


def test_a_version_7_record_made_no_quiet_waits() -> None:
    """Version 8 added the waits for a quiet machine; a version 7 record is read with none (it never waited)."""
    v7 = {k: v for k, v in as_current(V6).items() if k != "quiet_waits"} | {"record_version": 7}
    record = as_current(v7)
    assert record["record_version"] == RECORD_VERSION and record["quiet_waits"] == []
    row = cell_row(record, "c.json")
    assert row["quiet_waits"] == 0 and row["quiet_wait_s"] == 0.0
    assert "quiet_waits" not in v7  # the record itself is not changed


def test_a_version_8_record_is_read_without_counters_or_arrivals() -> None:
    """Version 9 added the server's counters around the request and the chunk arrivals: a version 8 record is read
    with neither, and its row leaves what they give empty."""
    current = as_current(V6)
    v8 = {**current, "record_version": 8, "server": {k: v for k, v in current["server"].items() if k != "metrics"}}
    record = as_current(v8)
    assert record["record_version"] == RECORD_VERSION and record["server"]["metrics"] is None
    row = cell_row(record, "c.json")
    assert row["verification_steps"] is None and row["accepted_per_position"] == []
    assert row["mean_accepted_length"] is None and row["ttft_ms"] is None and row["chunk_ms"] == []
    assert "metrics" not in v8["server"]  # the record itself is not changed


def test_a_version_9_record_was_served_by_llama_cpp_through_completion() -> None:
    """Version 10 names the engine and the API that answered; a version 9 record had only llama.cpp's /completion."""
    v9 = {**as_current(V6), "record_version": 9}
    v9["provenance"] = {k: v for k, v in v9["provenance"].items() if k != "engine"}
    v9["response"] = {k: v for k, v in v9["response"].items() if k != "api"}
    record = as_current(v9)
    assert record["record_version"] == RECORD_VERSION
    assert (record["provenance"]["engine"], record["response"]["api"]) == ("llama.cpp", "completion")
    row = cell_row(record, "c.json")
    assert (row["engine"], row["timings_source"], row["token_ids"]) == ("llama.cpp", "server", True)
    assert row["tokens_per_s"] == record["response"]["timings"]["predicted_per_second"]
