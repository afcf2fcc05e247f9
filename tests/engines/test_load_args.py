"""A load point's server argv (each engine's ``load_args``): llama-server gets --parallel N with its context scaled by
N, a batch too small for N drafts is refused (in the plan, before any work, naming the key); vLLM gets its sequence
limit and no prefix cache; an endpoint is left as it is."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from snakemake.exceptions import WorkflowError
from snakemake.utils import update_config

from specbench.core.config.builds import ENDPOINT, LLAMA_CPP, VLLM
from specbench.core.config.load import validate_config
from specbench.engines.registry import engine
from specbench.workflow.plan import Plan
from support.paths import REPO


@given(
    clients=st.integers(1, 64),
    context=st.integers(256, 65536),
    extra=st.lists(st.sampled_from(["-fa", "on", "--jinja"])),
)
def test_each_slot_keeps_the_context_it_had_alone(clients: int, context: int, extra: list[str]) -> None:
    args = ["-ngl", "99", "--parallel", "1", "-c", str(context), *extra]
    served = engine(LLAMA_CPP).load_args(args, clients)
    assert served[served.index("--parallel") + 1] == str(clients)
    assert int(served[served.index("-c") + 1]) // clients == context
    assert len(served) == len(args) and args[served.index("--parallel") + 1] == "1"  # the setup's own list untouched


def test_parallel_is_added_where_absent_and_the_last_flag_is_the_one_changed() -> None:
    assert engine(LLAMA_CPP).load_args(["-m", "x.gguf"], 4) == ["-m", "x.gguf", "--parallel", "4"]
    assert engine(LLAMA_CPP).load_args(["-np", "1", "--ctx-size", "100", "-c", "200"], 2) == [
        "-np",
        "2",
        "--ctx-size",
        "100",
        "-c",
        "400",
    ]


def test_a_batch_that_cannot_hold_the_drafts_of_every_slot_is_refused() -> None:
    assert engine(LLAMA_CPP).load_args(["-ub", "64", "--draft-max", "15"], 4) == [
        "-ub",
        "64",
        "--draft-max",
        "15",
        "--parallel",
        "4",
    ]
    with pytest.raises(ValueError, match=r"-ub 64 cannot hold 5 requests' drafts at once \(5 x \(draft \+ 1\) = 80"):
        engine(LLAMA_CPP).load_args(["-ub", "64", "--draft-max", "15"], 5)
    with pytest.raises(ValueError, match="= 136 tokens"):  # llama-server's default draft length, 16
        engine(LLAMA_CPP).load_args(["-b", "128"], 8)


def test_vllm_is_limited_to_n_sequences_without_prefix_cache_and_an_endpoint_is_the_users() -> None:
    assert engine(VLLM).load_args(["-m", "mod"], 8) == [
        "-m",
        "mod",
        "--max-num-seqs",
        "8",
        "--no-enable-prefix-caching",
    ]
    assert engine(ENDPOINT).load_args([], 8) == []


def test_the_plan_refuses_a_load_its_batch_cannot_serve_before_any_work() -> None:
    config: dict = {}
    for entry in [
        yaml.safe_load((REPO / "config/config.yaml").read_text()),
        yaml.safe_load((REPO / "config/tiny.yaml").read_text()),
        yaml.safe_load((REPO / "config/tiny-load.yaml").read_text()),
        {"load": {"concurrency": [1, 64]}, "server": {"args": ["--parallel", "1", "-c", "4096", "-ub", "512"]}},
    ]:
        update_config(config, entry)
    validate_config(config, base=REPO)
    with pytest.raises(
        WorkflowError, match=r"config error at 'load.concurrency': condition 'off': -ub 512 cannot hold"
    ):
        Plan(config, REPO, lambda: True)
