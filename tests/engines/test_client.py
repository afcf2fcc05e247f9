"""Assembling a streamed /completion response (chunks as llama-server b11223 sends them), and which endpoints a
cell's exchange asks under each chat template setting."""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import ClassVar

import pytest

from specbench.engines.client import (
    Generation,
    ReasoningNotOff,
    assemble_stream,
    completion_request,
    run_exchange,
    sse_events,
)
from support.loopback import serving

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
    body = completion_request("p", Generation(reasoning=False, max_tokens=8, temperature=0.0, seed=3))
    assert body["cache_prompt"] is False and body["return_tokens"] is True and body["stream"] is True
    assert body["n_predict"] == 8 and body["seed"] == 3
    sampling = {"top_k": 20, "top_p": 0.8, "min_p": 0.0, "repeat_penalty": 1.05}
    stated = completion_request("p", Generation(False, 8, 1.0, 3, sampling))
    assert {k: stated[k] for k in sampling} == sampling  # llama-server's own names


CHATML = "<|im_start|>user\nWrite.<|im_end|>\n<|im_start|>assistant\n"


class _Recorder(BaseHTTPRequestHandler):
    """Answers /apply-template and a streamed /completion with recorded chunks; keeps every request's path and body."""

    requests: ClassVar[list[tuple[str, dict]]] = []
    # what /apply-template renders with enable_thinking false and true (a template without a switch: the same)
    renders: ClassVar[dict[bool, str]] = {}

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.requests.append((self.path, body))
        self.send_response(200)
        self.end_headers()
        if self.path == "/apply-template":
            thinking = body["chat_template_kwargs"]["enable_thinking"]
            self.wfile.write(json.dumps({"prompt": self.renders[thinking]}).encode())
        else:
            self.wfile.write("\n".join(STREAM).encode() + b"\n")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def recorder() -> Iterator[str]:
    _Recorder.requests = []
    _Recorder.renders = dict.fromkeys((False, True), CHATML)
    with serving(_Recorder) as url:
        yield url


@pytest.mark.parametrize("setting", ["gguf", "chatml"])
def test_a_template_setting_renders_on_the_server(recorder: str, setting: str) -> None:
    messages = [{"role": "user", "content": "Write."}]
    exchange = run_exchange(recorder, messages, Generation(False, 3, 0.0, 1), timeout_s=10, chat_template=setting)
    assert [path for path, _ in _Recorder.requests] == ["/apply-template", "/apply-template", "/completion"]
    assert exchange.template_request == {"messages": messages, "chat_template_kwargs": {"enable_thinking": False}}
    assert exchange.prompt == CHATML == _Recorder.requests[2][1]["prompt"]
    # a template without a thinking switch (ChatML): reasoning off is its only way; nothing to switch
    assert exchange.reasoning_check == {"thinking_switch": False, "empty_think_block": False}


def test_none_sends_the_prompts_text_as_it_is(recorder: str) -> None:
    messages = [{"role": "user", "content": "Once upon a time"}]
    exchange = run_exchange(recorder, messages, Generation(False, 3, 0.0, 1), timeout_s=10, chat_template="none")
    assert [path for path, _ in _Recorder.requests] == ["/completion"]  # no template asked for
    assert exchange.template_request is None and exchange.reasoning_check is None
    assert exchange.prompt == "Once upon a time" == _Recorder.requests[0][1]["prompt"]
    assert exchange.response["content"] == "Hello world"


def _exchange(url: str, *, reasoning: bool = False):
    messages = [{"role": "user", "content": "Write."}]
    return run_exchange(url, messages, Generation(reasoning, 3, 0.0, 1), timeout_s=10, chat_template="gguf")


def test_qwen3_5s_switch_renders_reasoning_off_as_the_empty_think_block(recorder: str) -> None:
    """What llama-server renders for the Qwen3.5 template (off: the empty think block; on: an open one)."""
    _Recorder.renders = {False: CHATML + "<think>\n\n</think>\n\n", True: CHATML + "<think>\n"}
    exchange = _exchange(recorder)
    kwargs = [body.get("chat_template_kwargs") for path, body in _Recorder.requests if path == "/apply-template"]
    assert kwargs == [{"enable_thinking": False}, {"enable_thinking": True}]
    assert exchange.prompt.endswith("<think>\n\n</think>\n\n") and _Recorder.requests[-1][0] == "/completion"
    assert exchange.reasoning_check == {"thinking_switch": True, "empty_think_block": True}


@pytest.mark.parametrize(
    ("off", "on", "says"),
    [
        (CHATML, CHATML + "<think>\n", "not with an empty think block"),  # a switch that renders off as nothing
        (CHATML + "<think>\n", CHATML + "<think>\n", "it opens a think block"),  # no switch, always thinks
        (CHATML + "<think>\n", CHATML + "<think>\nmore", "not with an empty think block"),
    ],
)
def test_a_template_that_does_not_render_reasoning_off_is_refused_before_generating(
    recorder: str, off: str, on: str, says: str
) -> None:
    _Recorder.renders = {False: off, True: on}
    with pytest.raises(ReasoningNotOff, match=says) as refused:
        _exchange(recorder)
    assert "\n" not in str(refused.value) and repr(off[-40:]) in str(refused.value)  # one line, how it ends
    assert "/completion" not in [path for path, _ in _Recorder.requests]  # nothing generated


def test_reasoning_on_is_not_checked(recorder: str) -> None:
    _Recorder.renders = {False: CHATML + "<think>\n\n</think>\n\n", True: CHATML + "<think>\n"}
    exchange = _exchange(recorder, reasoning=True)
    assert [path for path, _ in _Recorder.requests] == ["/apply-template", "/completion"]
    assert exchange.prompt.endswith("<think>\n") and exchange.reasoning_check is None


def test_the_refusal_names_the_cell_and_the_template() -> None:
    from types import SimpleNamespace

    from specbench.measure.requests import reasoning_refusal

    facts = {
        "present": True,
        "chars": 7756,
        "sha256": "a4aee8afcf2e0711942cf848899be66016f8d14a889ff9ede07bca099c28f715",
    }
    setup = SimpleNamespace(chat_template="gguf", model_manifest={"chat_template": facts})
    line = reasoning_refusal(setup, "essay/off/t0.0/r1", "the prompt rendered with enable_thinking false ends 'x'")
    assert line.startswith("cell essay/off/t0.0/r1: reasoning is off (config reasoning: false), but the prompt")
    assert "the GGUF's own (tokenizer.chat_template, 7,756 characters, sha256 a4aee8afcf2e)" in line
    assert "models.target.chat_template" in line and "\n" not in line
