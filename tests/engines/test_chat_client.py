"""An endpoint's chat stream joined into one response (chunks as vLLM 0.32 and llama-server b11223 send them), the
timings the table reads from it, and an endpoint that does not answer."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from specbench.core.records.counters import reported_counts
from specbench.core.records.timings import CLIENT, SERVER, record_timings
from specbench.engines.chat_client import assemble_chat_stream, chat_request
from specbench.engines.client import Generation, sse_events
from specbench.engines.endpoint import local_pids, open_endpoint, served_model
from specbench.engines.server_process import ServerError, free_port
from specbench.measure.cell_record import response_fields

M = "/models/tiny"


def _chunk(delta: dict | None = None, finish: str | None = None, ids: list[int] | None = None, **top: object) -> str:
    """One ``data:`` line of a chat stream: one choice (its delta, finish reason, token ids), or none (``delta``
    None), with ``top`` beside it."""
    choice = {"index": 0, "delta": delta, "finish_reason": finish, **({"token_ids": ids} if ids is not None else {})}
    return "data: " + json.dumps(
        {"object": "chat.completion.chunk", "choices": [choice] if delta is not None else [], **top}
    )


# vLLM 0.32 (CPU), MTP with 2 draft tokens, per-request metrics 'summary': a role chunk with the prompt's ids, chunks
# of 1 then 3 tokens (one verification step each), the finish chunk, then usage and metrics with no choices
SPEC = {
    "mean_acceptance_length": 3.0,
    "draft_acceptance_rate": 1.0,
    "acceptance_histogram": [0, 0, 2],
    "num_spec_steps": 2,
    "num_accepted_draft_tokens": 4,
    "num_draft_tokens": 4,
    "num_spec_tokens": 2,
}
VLLM_MTP = [
    _chunk({"role": "assistant", "content": ""}, model=M, prompt_token_ids=[248045, 846, 198], prompt_text=None),
    _chunk({"content": " geren"}, ids=[190090]),
    _chunk({"content": " sells fiyat casting"}, ids=[1, 2, 3]),
    _chunk({"content": " hecha biome dialect"}, "length", ids=[4, 5, 6]),
    _chunk(
        usage={"prompt_tokens": 3, "total_tokens": 10, "completion_tokens": 7},
        system_fingerprint="vllm-0.32.0-871f44a1",
        metrics={"speculative_decoding": SPEC},
    ),
    "data: [DONE]",
]
# llama-server b11223's /v1/chat/completions: one token per chunk, no ids, its timings on the last (usage) chunk
TIMINGS = {"prompt_n": 20, "prompt_ms": 13.0, "predicted_n": 2, "predicted_ms": 5.0, "predicted_per_second": 400.0}
LLAMA = [
    _chunk({"role": "assistant", "content": None}),
    _chunk({"content": "geren"}),
    _chunk({"content": " sells"}),
    _chunk({}, "length"),
    _chunk(
        usage={"completion_tokens": 2, "prompt_tokens": 20, "total_tokens": 22},
        timings={**TIMINGS, "draft_n": 3, "draft_n_accepted": 1},
    ),
    "data: [DONE]",
]


def _record(lines: list[str], times: list[float]) -> dict:
    response, timing = assemble_chat_stream(zip(times, sse_events(lines), strict=False))
    return {"response": {**response_fields(response), "client_timing": timing}}


def test_a_vllm_stream_keeps_its_ids_its_usage_and_its_per_request_acceptance() -> None:
    record = _record(VLLM_MTP, [0.010, 0.020, 0.030, 0.040, 0.041])
    response = record["response"]
    assert response["api"] == "chat-completions" and response["finish_reason"] == "length"
    assert response["content"] == " geren sells fiyat casting hecha biome dialect"
    assert response["tokens"] == [190090, 1, 2, 3, 4, 5, 6] and response["token_ids_sent"]
    assert response["prompt_token_ids"] == [248045, 846, 198] and response["timings"] is None
    assert response["metrics"]["speculative_decoding"]["num_spec_steps"] == 2
    assert response["client_timing"]["chunk_tokens"] == [[0, 1], [1, 1], [3, 2], [0, 1]]
    timings = record_timings(record)
    assert timings["source"] == CLIENT and timings["predicted_n"] == 7 and timings["prompt_n"] == 3
    assert timings["draft_n"] == timings["draft_n_accepted"] == 4
    # six tokens after the first chunk's one, from its arrival (20 ms) to the last text chunk's (40 ms)
    assert timings["predicted_ms"] == pytest.approx(20.0) and timings["predicted_per_second"] == pytest.approx(300.0)
    assert timings["prompt_ms"] == pytest.approx(20.0)  # the first text chunk: the time to first token


def test_a_llama_server_chat_stream_keeps_the_servers_own_timings() -> None:
    record = _record(LLAMA, [0.001, 0.010, 0.012, 0.013, 0.014])
    response = record["response"]
    assert response["content"] == "geren sells" and response["tokens"] == [] and not response["token_ids_sent"]
    assert response["client_timing"]["chunk_tokens"] == [[0, 1], [1, 2], [0, 2]]  # one per text chunk without ids
    timings = record_timings(record)
    assert timings["source"] == SERVER and timings["predicted_per_second"] == 400.0 and timings["draft_n"] == 3


def test_a_stream_without_a_finish_reason_is_an_error() -> None:
    with pytest.raises(ValueError, match="without a finish reason"):
        assemble_chat_stream(zip([0.1, 0.2], sse_events(VLLM_MTP[:3]), strict=False))


def test_the_request_states_its_sampling_under_each_servers_name_for_it() -> None:
    """An endpoint may be llama-server or vLLM: the penalty goes under both names; a vLLM server's under its own."""
    sampling = {"top_k": 20, "top_p": 0.8, "min_p": 0.0, "repeat_penalty": 1.05}
    body = chat_request(M, [], Generation(False, 8, 1.0, 3, sampling))
    assert {k: body[k] for k in ("top_k", "top_p", "min_p")} == {"top_k": 20, "top_p": 0.8, "min_p": 0.0}
    assert body["repetition_penalty"] == body["repeat_penalty"] == 1.05
    vllm = chat_request(M, [], Generation(False, 8, 1.0, 3, sampling), ("repetition_penalty",))
    assert vllm["repetition_penalty"] == 1.05 and "repeat_penalty" not in vllm
    assert not {"top_k", "repetition_penalty"} & set(chat_request(M, [], Generation(False, 8, 1.0, 3)))


def test_the_request_asks_for_ids_usage_and_thinking_as_configured() -> None:
    body = chat_request(M, [{"role": "user", "content": "hi"}], Generation(False, 8, 0.0, 3))
    assert body["model"] == M and body["stream"] and body["stream_options"] == {"include_usage": True}
    assert body["chat_template_kwargs"] == {"enable_thinking": False} and body["return_token_ids"]
    assert body["max_tokens"] == 8 and body["seed"] == 3 and body["cache_prompt"] is False
    assert "model" not in chat_request(None, [], Generation(True, 1, 1.0, 0))


@given(
    chunks=st.lists(st.tuples(st.floats(0.0, 5.0), st.integers(0, 16)), min_size=0, max_size=40),
    prompt=st.integers(0, 10_000),
    drafted=st.integers(0, 500),
)
def test_stream_timings_never_divide_by_zero_nor_go_negative(
    chunks: list[tuple[float, int]], prompt: int, drafted: int
) -> None:
    """Whatever chunks arrive when (ids in each, in order of arrival), the speed counts the tokens after the first
    chunk over the time from it to the last, and is never negative or infinite."""
    arrivals = sorted(at for at, _ in chunks)
    counts = [n for _, n in chunks]
    text_at = [at for at, n in zip(arrivals, counts, strict=True) if n]
    total = sum(counts)
    record = {
        "response": {
            "api": "chat-completions",
            "timings": None,
            "usage": {"completion_tokens": total, "prompt_tokens": prompt},
            "metrics": {"speculative_decoding": {"num_draft_tokens": drafted, "num_accepted_draft_tokens": drafted}},
            "client_timing": {
                "first_token_s": text_at[0] if text_at else None,
                "last_token_s": text_at[-1] if text_at else None,
                "chunk_tokens": [[n, 1] for n in counts],
            },
        }
    }
    timings = record_timings(record)
    assert timings["predicted_n"] == total and timings["draft_n"] == drafted and timings["prompt_n"] == prompt
    rate = timings["predicted_per_second"]
    assert rate >= 0.0 and rate != float("inf")
    span = text_at[-1] - text_at[0] if text_at else 0.0
    if span > 0:
        first = next(n for n in counts if n)
        assert rate == pytest.approx((total - first) / span)
    else:
        assert rate == 0.0


def test_an_endpoint_that_does_not_answer_fails_the_attempt_naming_its_log(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    log = tmp_path / "server.log"
    with pytest.raises(ServerError, match=rf"endpoint {url} did not list its model on /v1/models.*read {log}"):
        open_endpoint(url, log, 2.0, "--- specbench: attempt 1 of 3 ---")
    assert "not started by this run" in log.read_text()


def test_what_an_endpoint_says_about_itself_names_its_model_and_processes() -> None:
    assert served_model({"/v1/models": {"data": [{"id": M}]}}) == M
    assert served_model({"/v1/models": {"error": "answered 404"}}) is None
    assert local_pids("http://example.invalid:8080") == []  # not this machine: no process of it is watched


@given(histogram=st.lists(st.integers(0, 200), min_size=1, max_size=16), predicted=st.integers(0, 5000))
def test_a_reported_histogram_gives_the_acceptance_at_each_draft_position(histogram: list[int], predicted: int) -> None:
    """Steps by accepted drafts (vLLM's acceptance histogram) -> steps accepting at each position: the positions sum
    to the accepted tokens, never rise with the position, and the first counts every step that accepted any."""
    accepted, steps = sum(k * n for k, n in enumerate(histogram)), sum(histogram)
    spec = {
        "acceptance_histogram": histogram,
        "num_accepted_draft_tokens": accepted,
        "num_spec_steps": steps,
        "num_draft_tokens": steps * (len(histogram) - 1),
    }
    counts = reported_counts({"metrics": {"speculative_decoding": spec}, "usage": {"completion_tokens": predicted}})
    assert counts is not None and len(counts.per_position) == len(histogram) - 1
    assert sum(counts.per_position) == counts.accepted == accepted and counts.steps == steps
    assert all(a >= b for a, b in itertools.pairwise(counts.per_position))
    assert not counts.per_position or counts.per_position[0] == steps - histogram[0]
    assert reported_counts({"metrics": None}) is None
