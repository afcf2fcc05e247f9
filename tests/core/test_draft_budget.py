"""A cell's draft length, whatever the engine (core.records.draft_budget): what the answer reported, else the argv
(llama-server's last draft-length flag; vLLM's speculative config), else SGLang's /server_info, else the log."""

from __future__ import annotations

import json

from specbench.core.records.draft_budget import argv_draft_length, draft_length
from support.paths import TEST_DATA

MTP = '{"method": "mtp", "num_speculative_tokens": 2}'


def _record(argv: list[str], response: dict | None = None, reported: dict | None = None) -> dict:
    server = {"argv": argv, **({"endpoint": {"reported": reported}} if reported is not None else {})}
    return {"response": response or {}, "server": server}


def test_each_engine_says_its_draft_length_where_it_can() -> None:
    llama = ["llama-server", "-m", "m.gguf", "--spec-type", "draft-mtp", "--spec-draft-n-max", "5", "--port", "1"]
    assert draft_length(_record(llama), logged_n_max=3) == (5, "argv")  # the flag, over what the log said
    assert draft_length(_record(llama[:5]), logged_n_max=3) == (3, "log")
    assert draft_length(_record(llama[:5]), logged_n_max=None) == (None, None)  # a default nobody said
    vllm = ["python", "-m", "vllm.entrypoints.openai.api_server", "--speculative-config", MTP]
    assert draft_length(_record(vllm), None) == (2, "argv")
    answered = {"metrics": {"speculative_decoding": {"num_spec_tokens": 4}}}
    assert draft_length(_record(vllm, answered), None) == (4, "response")  # what the server did, over its flags
    info = json.loads((TEST_DATA / "sglang" / "server-info-eagle.json").read_text())
    said = info["speculative_num_draft_tokens"] - 1
    assert draft_length(_record([], reported={"/server_info": info}), None) == (said, "server info")
    assert draft_length(_record([], reported={"/server_info": {"error": "answered 404"}}), None) == (None, None)


def test_the_last_flag_counts_and_a_bad_config_is_no_length() -> None:
    assert argv_draft_length(["--draft-max", "8", "--spec-draft-n-max", "2"]) == 2
    assert argv_draft_length(["--speculative-config", "{not json"]) is None
    assert argv_draft_length(["--speculative-config", '{"method": "ngram"}']) is None
    assert argv_draft_length([]) is None
