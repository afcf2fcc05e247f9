"""Assembling a streamed /completion response (chunks as llama-server b11223 sends them)."""

from __future__ import annotations

import pytest

from specbench.measure.client import assemble_stream, completion_request, sse_events

STREAM = [
    'data: {"index":0,"content":"Hel","tokens":[9707],"stop":false,"id_slot":0,"tokens_predicted":1}',
    "",
    'data: {"index":0,"content":"lo","tokens":[385],"stop":false,"id_slot":0,"tokens_predicted":2}',
    "",
    'data: {"index":0,"content":" world","tokens":[1879],"stop":false,"id_slot":0,"tokens_predicted":3}',
    "",
    'data: {"index":0,"content":"","tokens":[],"stop":true,"stop_type":"limit","tokens_predicted":3,'
    '"timings":{"prompt_n":5,"prompt_ms":2.0,"predicted_n":3,"predicted_ms":20.0,"predicted_per_second":150.0,'
    '"draft_n":4,"draft_n_accepted":2},"generation_settings":{"speculative.types":"ngram-mod"}}',
]


def test_stream_is_joined_into_one_response() -> None:
    times = [0.010, 0.020, 0.030, 0.031]
    response, timing = assemble_stream(zip(times, sse_events(STREAM), strict=True))
    assert response["content"] == "Hello world"
    assert response["tokens"] == [9707, 385, 1879]
    assert response["timings"]["draft_n_accepted"] == 2
    assert response["stop_type"] == "limit"
    assert response["generation_settings"] == {"speculative.types": "ngram-mod"}
    assert timing["tokens_received"] == 3
    assert timing["decode_tokens_per_s"] == pytest.approx(2 / 0.020)


def test_stream_without_final_chunk_is_an_error() -> None:
    with pytest.raises(ValueError, match="without a final chunk"):
        assemble_stream(zip([0.0, 0.1], sse_events(STREAM[:3]), strict=True))


def test_request_is_independent_of_server_state() -> None:
    body = completion_request("p", max_tokens=8, temperature=0.0, seed=3)
    assert body["cache_prompt"] is False and body["return_tokens"] is True and body["stream"] is True
    assert body["n_predict"] == 8 and body["seed"] == 3
