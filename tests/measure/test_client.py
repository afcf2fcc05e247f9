"""Assembling a streamed /completion response (chunks as llama-server b11223 sends them), and which endpoints a
cell's exchange asks under each chat template setting."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from specbench.measure.client import assemble_stream, completion_request, run_exchange, sse_events

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


class _Recorder(BaseHTTPRequestHandler):
    """Answers /apply-template and a streamed /completion with recorded chunks; keeps every request's path and body."""

    requests: ClassVar[list[tuple[str, dict]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.requests.append((self.path, body))
        self.send_response(200)
        self.end_headers()
        if self.path == "/apply-template":
            self.wfile.write(json.dumps({"prompt": "<|im_start|>user\nWrite.<|im_end|>\n"}).encode())
        else:
            self.wfile.write("\n".join(STREAM).encode() + b"\n")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def recorder() -> Iterator[str]:
    _Recorder.requests = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.mark.parametrize("setting", ["gguf", "chatml"])
def test_a_template_setting_renders_on_the_server(recorder: str, setting: str) -> None:
    messages = [{"role": "user", "content": "Write."}]
    exchange = run_exchange(
        recorder, messages, reasoning=False, max_tokens=3, temperature=0.0, seed=1, timeout_s=10, chat_template=setting
    )
    assert [path for path, _ in _Recorder.requests] == ["/apply-template", "/completion"]
    assert exchange.template_request == {"messages": messages, "chat_template_kwargs": {"enable_thinking": False}}
    assert exchange.prompt == "<|im_start|>user\nWrite.<|im_end|>\n" == _Recorder.requests[1][1]["prompt"]


def test_none_sends_the_prompts_text_as_it_is(recorder: str) -> None:
    messages = [{"role": "user", "content": "Once upon a time"}]
    exchange = run_exchange(
        recorder, messages, reasoning=False, max_tokens=3, temperature=0.0, seed=1, timeout_s=10, chat_template="none"
    )
    assert [path for path, _ in _Recorder.requests] == ["/completion"]  # no template asked for
    assert exchange.template_request is None
    assert exchange.prompt == "Once upon a time" == _Recorder.requests[0][1]["prompt"]
    assert exchange.response["content"] == "Hello world"
