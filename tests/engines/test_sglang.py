"""SGLang as an engine (an sglang build: servers the user runs, measured as endpoints): the request asks for the
speculative details, the stream keeps them (``sglext``), they read as vLLM's per-request counts, a server that says it
speculates but answers without them fails the cell, and the config takes an sglang build. The answers are those of
tests/data/sglang (SGLang 0.5.23's shape; its README says where each comes from), served on 127.0.0.1."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from types import SimpleNamespace
from typing import Any, ClassVar

import httpx
import pytest
import yaml
from snakemake.utils import update_config

from specbench.core.config.builds import SGLANG, builds, left_out
from specbench.core.config.load import ConfigError, validate_config
from specbench.core.records.sglang_reply import REQUEST_FIELD, STATS, sglang_speculation, spec_details
from specbench.engines.chat_client import PENALTY_NAMES, assemble_chat_stream, chat_request
from specbench.engines.client import Generation, sse_events
from specbench.engines.engine import no_llama_cpp
from specbench.engines.registry import engine
from specbench.engines.sglang_server import SglangServer, sglang_body, speculates
from support.loopback import serving
from support.paths import REPO, TEST_DATA

FIXTURES = TEST_DATA / "sglang"
MODEL = "Qwen/Qwen3-8B"
SAMPLING = {"top_k": 20, "top_p": 0.8, "min_p": 0.0, "repeat_penalty": 1.05}
# The EAGLE fixture's steps, by how many drafted tokens each accepted (3 drafted per step: 4 draft tokens, 1 the root)
ACCEPTED_PER_STEP = [3, 1, 0, 2, 3]


def _lines(name: str) -> list[str]:
    return (FIXTURES / name).read_text().splitlines()


def _json(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def _assembled(name: str) -> dict[str, Any]:
    events = list(sse_events(_lines(name)))
    response, _ = assemble_chat_stream(zip([0.01 * i for i in range(1, len(events) + 1)], events, strict=True))
    return response


def _setup(url: str, log: Path) -> SimpleNamespace:
    """The fields an engine reads of a condition's setup (measure.condition_setup.Setup's), for an sglang build."""
    return SimpleNamespace(
        server_binary=None,
        server_args=[],
        server_log=log,
        startup_timeout_s=5.0,
        request_timeout_s=5.0,
        endpoint=url,
        build_manifest={"engine": SGLANG, "url": url, "backend": "endpoint"},
        chat_template="gguf",
    )


# --- the request and what the answer carries


def test_the_request_asks_for_the_speculative_details_and_leaves_out_what_sglang_refuses() -> None:
    generation = Generation(False, 15, 0.0, 3, SAMPLING)
    body = sglang_body(chat_request(MODEL, [{"role": "user", "content": "hi"}], generation, PENALTY_NAMES[:1]))
    assert body[REQUEST_FIELD] is True and REQUEST_FIELD == "return_spec_tokens_details"
    assert body["stream"] and body["stream_options"] == {"include_usage": True} and body["model"] == MODEL
    assert "return_token_ids" not in body and "cache_prompt" not in body  # refused in a stream / llama-server's
    assert body["repetition_penalty"] == 1.05 and "repeat_penalty" not in body and body["top_k"] == 20
    assert body["chat_template_kwargs"] == {"enable_thinking": False} and body["seed"] == 3


def test_the_stream_keeps_sglangs_speculative_details() -> None:
    response = _assembled("chat-stream-eagle.sse")
    assert response["content"] == "The harbor was quiet that morning, and the boats rocked"
    assert response["finish_reason"] == "length" and response["usage"]["completion_tokens"] == 15
    assert response["tokens"] == [] and not response["token_ids_sent"]
    assert response["sglext"]["spec_tokens_details"]["spec_verify_ct"] == 5
    assert "sglext" not in _assembled("chat-stream-off.sse")


def test_sglangs_details_read_as_vllms_per_request_counts() -> None:
    """By hand from the fixture's steps: 5 steps, 3 + 1 + 0 + 2 + 3 = 9 accepted, 5 * 3 = 15 drafted; one step
    accepted 0, one 1, one 2, two 3; and 15 completion tokens = the prefill's 1 + 5 bonus + 9 accepted."""
    response = _assembled("chat-stream-eagle.sse")
    counts = sglang_speculation(response)
    steps = len(ACCEPTED_PER_STEP)
    histogram = [ACCEPTED_PER_STEP.count(k) for k in range(4)]
    assert counts == {
        "num_draft_tokens": steps * 3,
        "num_accepted_draft_tokens": sum(ACCEPTED_PER_STEP),
        "num_spec_steps": steps,
        "acceptance_histogram": histogram,
    }
    assert counts == {
        "num_draft_tokens": 15,
        "num_accepted_draft_tokens": 9,
        "num_spec_steps": 5,
        "acceptance_histogram": [1, 1, 1, 2],
    }
    assert sum(histogram) == steps and sum(k * n for k, n in enumerate(histogram)) == 9
    assert response["usage"]["completion_tokens"] == 1 + steps + 9
    assert response["sglext"]["spec_tokens_details"]["spec_accept_length"] == 15 / 5  # bonus and prefill counted
    assert sglang_speculation(_assembled("chat-stream-off.sse")) is None
    assert sglang_speculation({"sglext": {"routed_experts": "x"}}) is None


def test_a_list_of_details_n_above_one_reads_as_the_first_and_a_histogram_may_be_missing() -> None:
    first = {"spec_verify_ct": 2, "spec_num_correct_drafts": 1, "spec_num_proposed_drafts": 6}
    response = {"sglext": {"spec_tokens_details": [first, {"spec_verify_ct": 9}]}}
    assert spec_details(response) == first
    assert sglang_speculation(response) == {
        "num_draft_tokens": 6,
        "num_accepted_draft_tokens": 1,
        "num_spec_steps": 2,
        "acceptance_histogram": [],
    }
    assert sglang_speculation({"sglext": {"spec_tokens_details": []}}) is None


# --- a speculative server that answers without them


def _sglang_with(url: str, info: dict[str, Any] | None) -> SglangServer:
    served_by = SglangServer()
    served_by._info[url] = info
    return served_by


def test_a_speculative_server_answering_without_its_details_fails_the_cell_in_one_line(tmp_path: Path) -> None:
    url = "http://127.0.0.1:30001"
    setup = _setup(url, tmp_path / "server.log")
    without = _assembled("chat-stream-off.sse")  # 4 tokens, no sglext
    message = _sglang_with(url, _json("server-info-eagle.json")).acceptance_missing(setup, without, None)
    assert message is not None and "\n" not in message
    assert message.startswith("SGLang 0.5.23 (EAGLE) answered without sglext.spec_tokens_details") and STATS in message
    unknown = _sglang_with(url, None).acceptance_missing(setup, without, None)
    assert unknown is not None and unknown.startswith("SGLang of unknown version") and STATS in unknown
    # its details came; a server that does not speculate; nothing verified (one token); counted on /metrics
    eagle = _sglang_with(url, _json("server-info-eagle.json"))
    assert eagle.acceptance_missing(setup, _assembled("chat-stream-eagle.sse"), None) is None
    assert _sglang_with(url, _json("server-info-off.json")).acceptance_missing(setup, without, None) is None
    assert eagle.acceptance_missing(setup, {**without, "usage": {"completion_tokens": 1}}, None) is None
    assert eagle.acceptance_missing(setup, without, SimpleNamespace(drafted=4)) is None  # type: ignore[arg-type]
    assert speculates({"speculative_algorithm": "NGRAM"}) and not speculates({"speculative_algorithm": None})


# --- the engine against a server on 127.0.0.1 answering as SGLang does


class _Sglang(BaseHTTPRequestHandler):
    """Answers as the fixtures' SGLang server: its own routes (/props, /version, /apply-template unknown to it),
    and the chat stream of ``stream``; keeps each chat request's body."""

    stream = "chat-stream-eagle.sse"
    info = "server-info-eagle.json"
    bodies: ClassVar[list[dict[str, Any]]] = []

    def log_message(self, *args: object) -> None:  # quiet
        pass

    def _send(self, code: int, body: bytes, kind: str = "application/json") -> None:
        self.send_response(code)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        routes = {"/v1/models": "v1-models.json", "/server_info": self.info, "/model_info": "model-info.json"}
        if self.path in routes:
            self._send(200, (FIXTURES / routes[self.path]).read_bytes())
        else:
            self._send(404, b'{"detail": "Not Found"}')

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path != "/v1/chat/completions":
            self._send(404, b'{"detail": "Not Found"}')
            return
        type(self).bodies.append(body)
        lines = [line for line in _lines(self.stream) if line.startswith("data: ")]
        self._send(200, "".join(f"{line}\n\n" for line in lines).encode(), "text/event-stream")


@pytest.fixture
def sglang_url() -> Iterator[str]:
    _Sglang.bodies = []
    with serving(_Sglang) as url:
        yield url


def test_a_cell_on_an_sglang_server_records_what_it_says_and_reads_its_acceptance(
    sglang_url: str, tmp_path: Path
) -> None:
    setup = _setup(sglang_url, tmp_path / "server.log")
    served_by = SglangServer()
    with served_by.serve(setup, "--- specbench: attempt 1 of 3 ---") as server:
        record = served_by.server_record(server)
        exchange = served_by.ask(
            setup, server, [{"role": "user", "content": "hi"}], Generation(False, 15, 0.0, 3), MODEL
        )
    reported = record["endpoint"]["reported"]
    assert record["argv"] is None and record["endpoint"]["model"] == MODEL
    assert reported["/server_info"]["speculative_num_draft_tokens"] == 4 and "/get_server_info" not in reported
    assert "api_key" not in reported["/server_info"]  # no secret in a record
    assert reported["/model_info"]["architectures"] == ["Qwen3ForCausalLM"] and "error" in reported["/props"]
    log = setup.server_log.read_text()
    assert "SGLang 0.5.23: speculative_algorithm EAGLE, speculative_num_steps 3" in log
    assert _Sglang.bodies == [exchange.request] and exchange.request[REQUEST_FIELD] is True
    assert "return_token_ids" not in _Sglang.bodies[0]
    assert sglang_speculation(exchange.response)["num_accepted_draft_tokens"] == 9  # type: ignore[index]
    assert served_by.acceptance_missing(setup, exchange.response, None) is None
    assert exchange.template_request == {"route": None, "prompt_tokens": None} and exchange.reasoning_check is None


def test_a_speculative_server_without_the_details_fails_after_a_real_exchange(sglang_url: str, tmp_path: Path) -> None:
    _Sglang.stream = "chat-stream-off.sse"  # an older SGLang: the field is ignored, no sglext comes
    try:
        setup = _setup(sglang_url, tmp_path / "server.log")
        served_by = SglangServer()
        with served_by.serve(setup, "--- specbench: attempt 1 of 3 ---") as server:
            exchange = served_by.ask(
                setup, server, [{"role": "user", "content": "hi"}], Generation(False, 4, 0.0, 3), MODEL
            )
        message = served_by.acceptance_missing(setup, exchange.response, None)
    finally:
        _Sglang.stream = "chat-stream-eagle.sse"
    assert message is not None and "SGLang 0.5.23 (EAGLE)" in message and STATS in message


def test_the_older_route_names_answer_where_the_new_ones_do_not(tmp_path: Path) -> None:
    """SGLang before /server_info answered /get_server_info: the engine asks the new route first, then the old."""
    from specbench.engines.sglang_server import sglang_reported

    class Old(_Sglang):
        def do_GET(self) -> None:
            old = {"/v1/models": "v1-models.json", "/get_server_info": "server-info-off.json"}
            if self.path in old:
                self._send(200, (FIXTURES / old[self.path]).read_bytes())
            else:
                self._send(404, b'{"detail": "Not Found"}')

    with serving(Old) as url, httpx.Client(timeout=5.0) as client:
        reported = sglang_reported(client, url)
    assert reported["/server_info"] == {"error": "answered 404"}
    assert reported["/get_server_info"]["speculative_algorithm"] is None
    assert reported["/model_info"] == reported["/get_model_info"] == {"error": "answered 404"}


# --- the engine as the plan meets it


def test_the_registry_finds_sglang_and_it_describes_its_build() -> None:
    served_by = engine(SGLANG)
    assert isinstance(served_by, SglangServer) and served_by.name == "sglang" and not served_by.serves_gguf
    config = _config_with(yaml.safe_load((REPO / "config" / "tiny-sglang.yaml").read_text()))
    _, sg = builds(config)
    assert served_by.describe(sg).startswith("SGLang, not started by this run: off at http://127.0.0.1:30000")
    assert (
        served_by.endpoint(sg, "off") == "http://127.0.0.1:30000" and served_by.server_args({}, sg, "off", REPO) == []
    )
    assert served_by.setup_inputs({}, sg, REPO, draft=True) == {}
    made = served_by.executable(None, "http://127.0.0.1:30000")
    assert made["server_binary"] is None and made["build_manifest"]["engine"] == SGLANG
    assert served_by.provenance(_setup("http://127.0.0.1:30000", REPO / "x.log")) == no_llama_cpp()


# --- the config: an sglang build, and the bad ones refused naming their key

SG = {
    "label": "sg",
    "engine": "sglang",
    "sglang": {"urls": {"off": "http://127.0.0.1:30000/", "mtp": "http://127.0.0.1:30001"}},
}


def _config_with(over: dict[str, Any], entries: list[dict] | None = None) -> dict:
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    update_config(config, yaml.safe_load((REPO / "config" / "tiny.yaml").read_text()))
    update_config(config, copy.deepcopy(over))
    if entries is not None:
        config["builds"] = copy.deepcopy(entries)
    return validate_config(config, REPO)


def test_an_sglang_build_has_the_cells_of_its_servers_conditions_only() -> None:
    over = {"select": {"tasks": ["essay"], "conditions": ["off", "ngram-mod", "mtp"]}}
    config = _config_with(over, [{"label": "b11223"}, SG])
    _, sg = builds(config)
    assert sg.engine == SGLANG and sg.urls == {"off": "http://127.0.0.1:30000", "mtp": "http://127.0.0.1:30001"}
    assert left_out(config, ["off", "ngram-mod", "mtp"]) == [
        ("sg", "ngram-mod", "sglang build 'sg' names no server for it (sglang.urls)")
    ]


@pytest.mark.parametrize(
    ("entries", "error"),
    [
        ([{"label": "b1"}, {"label": "sg", "engine": "sglang"}], r"builds\[1\]\.sglang.*needs sglang\.urls"),
        ([SG, {"label": "b1"}], r"builds\[0\]\.engine.*first build converts and quantizes"),
        ([{"label": "b1"}, {**SG, "endpoint": SG["sglang"]}], r"builds\[1\]\.endpoint.*engine: endpoint only"),
        ([{"label": "b1"}, {**SG, "engine": "endpoint"}], r"builds\[1\]\.sglang.*engine: sglang only"),
        (
            [{"label": "b1"}, {**SG, "sglang": {"urls": {"mpt": "http://127.0.0.1:1"}}}],
            r"builds\[1\]\.sglang\.urls\.mpt.*not a condition",
        ),
        ([{"label": "b1"}, {**SG, "sglang": {"urls": {"off": "127.0.0.1:30000"}}}], r"builds\.1\.sglang\.urls\.off"),
        ([{"label": "b1"}, {**SG, "sglang": {"url": "http://127.0.0.1:1"}}], r"builds\.1\.sglang"),
    ],
)
def test_sglang_config_errors_name_the_key(entries: list[dict], error: str) -> None:
    with pytest.raises(ConfigError, match=error):
        _config_with({}, entries)
