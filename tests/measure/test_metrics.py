"""Inside one request, on recorded data: the server's counters scraped from /metrics around a request
(specbench.engines.metrics_scrape, analysis.draft_positions), its log line, and the stream's chunk arrivals
(analysis.chunk_latency). The recorded files are llama-server b11223's own output for one tiny MTP request and one tiny
ngram-mod request (bench/metrics_overhead.py --save)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from specbench.analysis.acceptance import positions
from specbench.analysis.cell_table import frame_of
from specbench.analysis.chunk_latency import expanded, latency_columns, token_arrivals
from specbench.analysis.draft_positions import (
    accepted_lengths,
    logged_acceptance,
    mean_accepted_length,
    position_columns,
)
from specbench.analysis.latency_summary import latency
from specbench.analysis.server_log import parse_speculative_log
from specbench.core.records.counters import Counts, counters_agree, counts_of, parse_counts, request_counts
from specbench.core.records.timings import client_rate, record_timings
from specbench.engines.client import assemble_stream, run_lengths
from specbench.engines.metrics_scrape import kept_lines
from specbench.report.figures.requests import arrivals_figure, example_requests, positions_figure
from specbench.report.sections.inside_requests import latency_section, positions_section
from support.paths import TEST_DATA

DATA = TEST_DATA / "metrics"
RECORDED = ["mtp-essay", "ngram-mod-essay"]


def _recorded(name: str) -> dict:
    """One recorded request: /metrics before and after it, the speculative log lines, the response's timings."""
    return {
        "before": (DATA / f"{name}.before.metrics.txt").read_text(),
        "after": (DATA / f"{name}.after.metrics.txt").read_text(),
        "log_lines": (DATA / f"{name}.log.txt").read_text().splitlines(),
        "timings": json.loads((DATA / f"{name}.timings.json").read_text()),
    }


def _metrics(recorded: dict) -> dict:
    return {side: {"lines": kept_lines(recorded[side]), "error": None} for side in ("before", "after")}


def test_a_scrape_keeps_only_the_counter_lines() -> None:
    after = _recorded("mtp-essay")["after"]
    lines = kept_lines(after)
    assert lines and all(
        line.startswith(("llamacpp:spec_decode_", "llamacpp:tokens_predicted_total")) for line in lines
    )
    assert any('per_pos_total{position="0"}' in line for line in lines)
    assert not any(line.startswith("#") or "prompt_tokens" in line for line in lines)
    assert "llamacpp:prompt_tokens_total" in after  # what was left out was there


@pytest.mark.parametrize("name", RECORDED)
def test_one_requests_counts_are_the_servers_own(name: str) -> None:
    """Position i counts steps that accepted more than i drafted tokens: the positions sum to the accepted tokens,
    and the totals are the response's; the mean length is the log line's."""
    recorded = _recorded(name)
    counts = request_counts(_metrics(recorded))
    timings = recorded["timings"]
    assert counts is not None and counts.steps > 0
    assert sum(counts.per_position) == counts.accepted == timings["draft_n_accepted"]
    assert counts.drafted == timings["draft_n"] and counts.predicted == timings["predicted_n"]
    assert list(counts.per_position) == sorted(counts.per_position, reverse=True)  # a prefix is accepted
    [logged] = parse_speculative_log("\n".join(recorded["log_lines"]))["acceptance"]
    assert round(mean_accepted_length(counts.accepted, counts.steps), 2) == logged["mean_len"]
    lengths = accepted_lengths(counts.per_position, counts.steps)
    assert sum(lengths) == counts.steps and sum(k * n for k, n in enumerate(lengths)) == counts.accepted


def test_a_fresh_server_has_no_per_position_counts_before_its_first_request() -> None:
    before = parse_counts(kept_lines(_recorded("mtp-essay")["before"]))
    assert before == Counts(0, 0, 0, 0, ())


def test_a_warm_servers_later_request_is_the_difference_of_its_scrapes() -> None:
    first = parse_counts(kept_lines(_recorded("mtp-essay")["after"]))
    assert first is not None
    doubled = [
        line.rsplit(" ", 1)[0] + f" {2 * float(line.rsplit(' ', 1)[1]):g}"
        for line in kept_lines(_recorded("mtp-essay")["after"])
    ]
    second = request_counts(
        {"before": {"lines": kept_lines(_recorded("mtp-essay")["after"])}, "after": {"lines": doubled}}
    )
    assert second == first  # the same request again: the same counts, not the server's totals
    wider = Counts(1, 1, 1, 1, (1, 0, 0, 0)) - Counts(0, 0, 0, 0, (1,))
    assert wider.per_position == (0, 0, 0, 0)


def test_missing_or_lossy_counters_give_no_counts() -> None:
    lines = kept_lines(_recorded("mtp-essay")["after"])
    assert request_counts(None) is None
    assert (
        request_counts({"before": {"lines": None, "error": "ConnectError: refused"}, "after": {"lines": lines}}) is None
    )
    assert parse_counts([line for line in lines if "drafts_total" not in line]) is None
    lossy = [
        line if "tokens_predicted_total" not in line else "llamacpp:tokens_predicted_total 1.23457e+06"
        for line in lines
    ]
    assert parse_counts(lossy) is None  # printed with 6 significant digits: not exact


def test_the_log_line_of_the_request_is_found_by_its_counts() -> None:
    lines = [
        "print_timing: task 1 | draft acceptance = 0.50000 (   10 accepted /    20 generated), mean len =  1.50",
        "print_timing: task 9 | draft acceptance = 0.75000 (   15 accepted /    20 generated), mean len =  2.00",
        "print_timing: task 12 | draft acceptance = 0.75000 (   15 accepted /    20 generated), mean len =  2.50",
    ]
    assert logged_acceptance(lines, 10, 20, 1)["mean_len"] == 1.5
    assert logged_acceptance(lines, 15, 20, 3)["mean_len"] == 2.5  # two match: the one at the request's position
    assert logged_acceptance(lines, 15, 20, 1) is None  # two match, neither at its position: not guessed
    assert logged_acceptance(lines, 3, 20, 1) is None


def test_a_record_gives_its_columns() -> None:
    recorded = _recorded("ngram-mod-essay")
    record = {
        "server": {"metrics": _metrics(recorded), "log_lines": recorded["log_lines"], "position": 1},
        "response": {"timings": recorded["timings"]},
    }
    row = position_columns(record)
    assert sum(row["accepted_per_position"]) == row["counted_accepted"] == recorded["timings"]["draft_n_accepted"]
    assert round(row["mean_accepted_length"], 2) == row["logged_mean_length"]
    empty = position_columns({"server": {"metrics": None}, "response": {"timings": {}}})
    assert empty["accepted_per_position"] == [] and empty["verification_steps"] is None


# -- the stream's chunk arrivals ---------------------------------------------------------------------------------

STREAM = [
    {"content": "Hel", "tokens": [9707], "stop": False},
    {"content": "lo", "tokens": [385], "stop": False},
    {"content": " wor", "tokens": [1879], "stop": False},
    {"content": "ld", "tokens": [1880, 1881], "stop": False},
    {"content": "", "tokens": [], "stop": True, "timings": {"predicted_per_second": 1.0}},
]


def test_the_client_keeps_every_chunks_arrival_and_token_count() -> None:
    times = [0.0501234, 0.0602, 0.0603, 0.0904, 0.0905]
    _, timing = assemble_stream(zip(times, STREAM, strict=True))
    assert timing["chunk_ms"] == [50.12, 60.2, 60.3, 90.4, 90.5]  # ms after the request was sent, to 0.01 ms
    assert timing["chunk_tokens"] == [[1, 3], [2, 1], [0, 1]]
    assert expanded(timing["chunk_tokens"]) == [1, 1, 1, 2, 0]
    assert run_lengths([]) == [] and expanded([]) == []


def test_ttft_and_itl_come_from_the_arrivals() -> None:
    _, timing = assemble_stream(zip([0.050, 0.060, 0.0603, 0.090, 0.0905], STREAM, strict=True))
    row = latency_columns({"response": {"client_timing": timing}})
    assert token_arrivals(row["chunk_ms"], row["chunk_tokens"]) == [50.0, 60.0, 60.3, 90.0, 90.0]
    gaps = [10.0, 0.3, 29.7, 0.0]
    assert row["ttft_ms"] == 50.0
    assert row["itl_median_ms"] == pytest.approx(np.percentile(gaps, 50))
    assert row["itl_p90_ms"] == pytest.approx(np.percentile(gaps, 90))
    assert row["itl_p99_ms"] == pytest.approx(np.percentile(gaps, 99)) and row["itl_p99_ms"] > 29
    old = latency_columns({"response": {"client_timing": {"decode_tokens_per_s": 3.0}}})  # a record without them
    assert old["ttft_ms"] is None and old["chunk_ms"] == [] and old["itl_p99_ms"] is None
    with pytest.raises(ValueError, match="2 chunk arrivals but 1"):
        token_arrivals([1.0, 2.0], [1])


# -- the table's summaries ---------------------------------------------------------------------------------------


def _rows() -> list[dict]:
    """Two mtp cells with counts (one of them at 0.7), one without (an older record), one off cell with arrivals."""
    base = {"task": "essay", "prompt": "", "condition": "mtp", "temperature": 0.0}
    return [
        {
            **base,
            "repeat": 1,
            "verification_steps": 10,
            "counted_accepted": 25,
            "accepted_per_position": [10, 9, 6],
            "logged_mean_length": 3.5,
            "cell_file": "a.json",
            "ttft_ms": 5.0,
            "itl_median_ms": 1.0,
            "itl_p90_ms": 4.0,
            "itl_p99_ms": 9.0,
        },
        {
            **base,
            "repeat": 2,
            "verification_steps": 10,
            "counted_accepted": 15,
            "accepted_per_position": [8, 5, 2],
            "logged_mean_length": 2.5,
            "cell_file": "b.json",
            "ttft_ms": 7.0,
            "itl_median_ms": 3.0,
            "itl_p90_ms": 6.0,
            "itl_p99_ms": 11.0,
        },
        {**base, "repeat": 3, "cell_file": "c.json"},
        {
            **base,
            "condition": "off",
            "repeat": 1,
            "verification_steps": 0,
            "counted_accepted": 0,
            "cell_file": "d.json",
            "ttft_ms": 4.0,
            "itl_median_ms": 8.0,
            "itl_p90_ms": 8.5,
            "itl_p99_ms": 9.0,
        },
    ]


def test_positions_pool_the_counted_cells_of_a_group() -> None:
    table = positions(frame_of(_rows(), "off"))
    [row] = table.to_dict("records")  # 'off' verified nothing: no row
    assert (row["condition"], row["runs"], row["counted_runs"], row["verification_steps"]) == ("mtp", 3, 2, 20)
    assert row["accepted"] == 40 and row["mean_accepted_length"] == pytest.approx(3.0)
    assert row["position_rates"] == pytest.approx([18 / 20, 14 / 20, 8 / 20])
    assert row["accepted_lengths"] == [2, 4, 6, 8]  # steps that accepted exactly 0, 1, 2, 3 tokens
    assert row["logged_mean_lengths"] == [2.5, 3.5] and row["cells"] == ["a.json", "b.json"]


def test_latency_is_the_median_of_the_cells_figures() -> None:
    table = latency(frame_of(_rows(), "off")).set_index("condition")
    assert table.loc["mtp", "timed_runs"] == 2 and table.loc["mtp", "runs"] == 3
    assert table.loc["mtp", "ttft_ms"] == 6.0 and table.loc["mtp", "itl_p99_ms"] == 10.0
    assert table.loc["off", "itl_median_ms"] == 8.0


# -- the report's figures and sections ---------------------------------------------------------------------------


def _timed_rows() -> list[dict]:
    """``_rows`` with chunk arrivals: each cell's tokens one per chunk, 1 ms apart after its TTFT."""
    return [
        {**row, "chunk_ms": [row["ttft_ms"] + i for i in range(6)], "chunk_tokens": [1] * 5 + [0]}
        if row.get("ttft_ms")
        else row
        for row in _rows()
    ]


def test_the_figures_draw_positions_and_arrivals_at_their_fixed_size() -> None:
    import io

    import matplotlib.image as mpimg

    from specbench.report.figures.style import ACCEPTANCE_SIZE, DPI, NO_DATA_SIZE, PNG_SIGNATURE, TIMELINE_SIZE

    cells = frame_of(_timed_rows(), "off")

    def size(png: bytes) -> tuple[int, int]:
        assert png.startswith(PNG_SIGNATURE)
        image = mpimg.imread(io.BytesIO(png), format="png")
        return image.shape[1], image.shape[0]

    def expected(inches: tuple[float, float]) -> tuple[int, int]:
        return round(inches[0] * DPI), round(inches[1] * DPI)

    assert size(positions_figure(positions(cells), "off", ["essay"], ["off", "mtp"])) == expected(ACCEPTANCE_SIZE)
    assert size(arrivals_figure(cells, "off", ["essay"], ["off", "mtp"])) == expected(TIMELINE_SIZE)
    empty = frame_of([], "off")
    assert size(positions_figure(positions(empty), "off")) == expected(NO_DATA_SIZE)
    assert size(arrivals_figure(empty, "off")) == expected(NO_DATA_SIZE)
    assert size(arrivals_figure(frame_of(_rows(), "off"), "off")) == expected(NO_DATA_SIZE)  # no arrivals kept


def test_one_request_per_condition_is_drawn() -> None:
    picked = example_requests(frame_of(_timed_rows(), "off"), ["essay"], ["off", "mtp"])
    assert list(zip(picked.condition, picked.repeat, strict=True)) == [("off", 1), ("mtp", 1)]


def test_the_sections_show_positions_ttft_and_itl() -> None:
    cells = frame_of(_timed_rows(), "off")
    section = positions_section(positions(cells))
    [row] = section.table.rows
    shown = {c.header: c.show(c.get(row)) for c in section.table.columns}
    assert shown["mean accepted length"] == "3.00" and shown["by position"] == "90%, 70%, 40%"
    assert shown["accepted per step"] == "0: 10%, 1: 20%, 2: 30%, 3: 40%" and shown["runs counted"] == "2/3"
    timing = latency_section(latency(cells))
    mtp = next(r for r in timing.table.rows if r["condition"] == "mtp")
    assert {c.header: c.show(c.get(mtp)) for c in timing.table.columns}["ITL p99 ms"] == "10.00"


def _vllm_recorded() -> dict:
    """vLLM 0.32.0's own /metrics lines around one tiny MTP request, and its answer's usage and metrics."""
    return json.loads((DATA / "vllm-mtp-essay.json").read_text())


def test_vllm_counters_are_read_under_their_labels_and_agree_with_the_answer() -> None:
    """vLLM's ``vllm:spec_decode_*`` lines (labels engine, model_name, position; ``_created`` timestamps beside them)
    give the request's counts, and they equal what the answer reported (85 steps of 2 drafts, all accepted)."""
    recorded = _vllm_recorded()
    counted = request_counts(recorded["metrics"])
    spec = recorded["response"]["metrics"]["speculative_decoding"]
    assert counted == Counts(
        drafted=spec["num_draft_tokens"],
        accepted=spec["num_accepted_draft_tokens"],
        steps=spec["num_spec_steps"],
        predicted=recorded["response"]["usage"]["completion_tokens"],
        per_position=(85, 85),
    )
    record = {"response": recorded["response"], "server": {"metrics": recorded["metrics"]}}
    assert counts_of(record)[1] == "response" and counters_agree(record) is True


def test_without_the_answers_acceptance_the_counters_stand_in() -> None:
    """A vLLM answer without ``metrics.speculative_decoding`` (a proxy that drops it): the record's drafted and
    accepted tokens come from the counters, and say so; with neither they are 0 and the source is none."""
    recorded = _vllm_recorded()
    response = {"usage": recorded["response"]["usage"], "client_timing": {}}
    record = {"response": response, "server": {"metrics": recorded["metrics"]}, "cell": {}}
    counts, source = counts_of(record)
    assert source == "/metrics" and counts is not None
    timings = record_timings(record)
    assert (timings["draft_n"], timings["draft_n_accepted"]) == (counts.drafted, counts.accepted) == (170, 170)
    assert counters_agree(record) is None
    # at a load point the scrapes count every request: not one request's drafts
    loaded = {**record, "load": {"concurrency": 2}}
    assert (record_timings(loaded)["draft_n"], counts_of(loaded)[1]) == (0, "/metrics")
    bare = {"response": response, "server": {"metrics": None}}
    assert counts_of(bare) == (None, None) and record_timings(bare)["draft_n"] == 0


def test_counters_that_disagree_with_the_answer_are_flagged() -> None:
    recorded = _vllm_recorded()
    after = [
        line.replace("} 170.0", "} 171.0") if "num_draft_tokens_total" in line else line
        for line in recorded["metrics"]["after"]["lines"]
    ]
    metrics = {**recorded["metrics"], "after": {"lines": after, "error": None}}
    assert counters_agree({"response": recorded["response"], "server": {"metrics": metrics}}) is False


def test_counters_of_several_engines_are_summed_and_timestamps_ignored() -> None:
    lines = [
        f'vllm:spec_decode_num_{name}_total{{engine="{e}",model_name="m"}} {v}.0'
        for e, (steps, drafted, accepted) in enumerate([(3, 6, 4), (2, 4, 1)])
        for name, v in (("drafts", steps), ("draft_tokens", drafted), ("accepted_tokens", accepted))
    ]
    lines += [f'vllm:generation_tokens_total{{engine="{e}",model_name="m"}} 10.0' for e in (0, 1)]
    lines += ['vllm:spec_decode_num_drafts_created{engine="0",model_name="m"} 1.79e+09']
    lines += [
        f'vllm:spec_decode_num_accepted_tokens_per_pos_total{{engine="0",model_name="m",position="{p}"}} {n}.0'
        for p, n in ((0, 3), (1, 1))
    ]
    assert parse_counts(lines) == Counts(drafted=10, accepted=5, steps=5, predicted=20, per_position=(3, 1))


def test_a_stream_that_arrived_held_back_is_timed_over_the_whole_request() -> None:
    """vLLM's CPU build on 2 cores sent its tokens held back (recorded: repeat 1's 251 last tokens within 4 ms after a
    1.7 s stall, repeat 2's 256 within 3 ms): their arrival says nothing of the decode (repeat 2 would read 99,000
    tokens/s), so both are timed over the whole request, and the source says so; a steady stream is not."""
    recorded = json.loads((DATA / "vllm-cpu-held-back.json").read_text())["requests"]
    rates = []
    for request in recorded:
        record = {"response": {**request}, "server": {"metrics": None}}
        timings = record_timings(record)
        assert timings["source"] == "client stream, held back: whole request"
        last = request["client_timing"]["last_token_s"]
        assert timings["predicted_per_second"] == pytest.approx(request["usage"]["completion_tokens"] / last)
        rates.append(timings["predicted_per_second"])
    assert rates[0] == pytest.approx(rates[1], rel=0.1)  # the two repeats agree once timed alike
    steady = {"chunk_ms": [20.0 + 5.0 * i for i in range(200)], "chunk_tokens": [[1, 200]]}
    steady |= {"first_token_s": 0.02, "last_token_s": 1.015}
    record = {"response": {"usage": {"completion_tokens": 200}, "client_timing": steady}, "server": {}}
    timings = record_timings(record)
    assert timings["source"] == "client stream" and timings["predicted_per_second"] == pytest.approx(199 / 0.995)


def test_a_chat_servers_own_timing_is_its_clock_and_the_stream_stays_beside_it() -> None:
    """vLLM with --enable-per-request-metrics answers with its own timing (vllm/entrypoints/generate/base/protocol.py,
    PerRequestMetrics: generation_time_ms from its first output token to its last, time_to_first_token_ms from
    scheduling): that is the record's speed ('server', as llama-server's timings are), and the client stream's rate,
    held back or not, stays its client clock."""
    recorded = json.loads((DATA / "vllm-cpu-held-back.json").read_text())["requests"][1]
    metrics = {"generation_time_ms": 1700.0, "time_to_first_token_ms": 40.0, "tokens_per_second": 145.0}
    record = {"response": {**recorded, "metrics": metrics}, "server": {"metrics": None}}
    timings = record_timings(record)
    predicted = recorded["usage"]["completion_tokens"]
    assert timings["source"] == "server" and timings["predicted_per_second"] == pytest.approx((predicted - 1) / 1.7)
    assert (timings["predicted_ms"], timings["prompt_ms"]) == (1700.0, 40.0)
    last = recorded["client_timing"]["last_token_s"]
    assert client_rate(record) == pytest.approx(predicted / last)  # the held-back stream: the whole request
    one = {"response": {**recorded, "usage": {"completion_tokens": 1}, "metrics": metrics}, "server": {}}
    assert record_timings(one)["source"] != "server"  # one token: no decode to time
