"""The load dimension on the real workflow (tiny model, CPU, llama.cpp): ``load: {concurrency: [1, 2]}`` gives every
cell a c<N> path component and each N = 2 point one fresh llama-server (--parallel 2, its context doubled) answering
two copies of the cell's request at once. Checked from what the server and the clients reported: both requests of a
point were generating at the same time, each has its own acceptance (its own response's), the temperature-0 tokens
of every request equal the one-request off control's (or the load table counts the difference), and the report has
its load section, with two claims about load (a predictions file) judged on the load table's own numbers. 1 task x
(off, mtp) x temperature 0 x 2 repeats x N in (1, 2) of 48 tokens."""

from __future__ import annotations

import pandas as pd
import pytest

from specbench.analysis.cell_table import read_table
from specbench.analysis.load import ABOVE, BELOW
from specbench.claims.claim import NOT_DIRECTION, NOT_SEPARATED, NOT_SIZE, REPRODUCED, TOO_FEW_RUNS, TOO_WIDE
from specbench.core.plan.cells import Cell
from specbench.core.results.judged import read_judged
from specbench.core.steps.files import read_json
from support.workflow import placed, tiny_run, write_yaml

pytestmark = pytest.mark.workflow

TASK, CONDITIONS, REPEATS = "file-rewrite", ["off", "mtp"], (1, 2)


PREDICTIONS = [
    {"id": "mtp-pays", "text": "MTP pays at both loads", "kind": "pays_up_to", "published": "every N"},
    {"id": "mtp-same", "text": "MTP's acceptance is the same at two", "kind": "acceptance_under_load"},
]
for _claim in PREDICTIONS:
    _claim |= {"task": TASK, "condition": "mtp", "temperature": 0.0}
PREDICTIONS[1] |= {"published": "same", "tolerance": 0.05}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    work = tmp_path_factory.mktemp("load")
    predictions = write_yaml(work / "predictions.yaml", {"claims": PREDICTIONS})
    result = tiny_run(
        work,
        "load",
        {
            "name": "load test",
            # BF16 as in the fault tests: on some CPUs llama-server b11223 crashes on the tiny model's quantized tied
            # embeddings; the load points do not depend on the quantization.
            "models": {"target": {"quant": "BF16"}},
            "load": {"concurrency": [1, 2]},
            "select": {"tasks": [TASK], "conditions": CONDITIONS},
            "temperatures": [0.0],
            "repeats": len(REPEATS),
            "max_tokens": 48,
            # This machine may be shared with other work: record CPU contention, do not judge it here.
            "measurement": {"max_foreign_cpu": None},
            "predictions": str(predictions),
        },
    )
    return {"work": work, "result": result}


def record(run: dict, condition: str, concurrency: int, repeat: int) -> dict:
    cell = placed(run["work"], Cell(TASK, condition, 0.0, repeat, concurrency=concurrency))
    assert f"/{condition}/c{concurrency}/t0.0/r{repeat}.json" in cell.path
    return read_json(run["work"] / cell.path)


def windows(point: dict) -> list[tuple[float, float]]:
    """Each request's generating window on one clock: its send time plus its first and last token's arrival."""
    out = []
    for request in point["load"]["requests"]:
        timing = request["client_timing"]
        out.append(
            (timing["sent_at_unix_s"] + timing["first_token_s"], timing["sent_at_unix_s"] + timing["last_token_s"])
        )
    return out


def test_both_requests_of_a_point_ran_at_once_on_a_two_slot_server(run: dict) -> None:
    for condition in CONDITIONS:
        for repeat in REPEATS:
            point = record(run, condition, 2, repeat)
            argv = point["server"]["argv"]
            assert argv[argv.index("--parallel") + 1] == "2" and argv[argv.index("-c") + 1] == "8192"
            assert point["cell"]["concurrency"] == 2 and len(point["load"]["requests"]) == 2
            (a_start, a_end), (b_start, b_end) = windows(point)
            assert max(a_start, b_start) < min(a_end, b_end), f"{condition} r{repeat}: the requests did not overlap"
            assert {r["slot"] for r in point["load"]["requests"]} == {0, 1}  # one slot each
            alone = record(run, condition, 1, repeat)
            assert alone["server"]["argv"][alone["server"]["argv"].index("--parallel") + 1] == "1"
            assert len(alone["load"]["requests"]) == 1


def test_each_request_has_its_own_acceptance_from_its_own_response(run: dict) -> None:
    cells = read_table(run["work"] / "results/cells.parquet")
    points = cells[(cells.condition == "mtp") & (cells.concurrency == 2)]
    assert len(points) == len(REPEATS)
    for row in points.itertuples(index=False):
        point = read_json(run["work"] / row.cell_file)
        timings = [r["response"]["timings"] for r in point["load"]["requests"]]
        assert list(row.load_draft_n) == [t["draft_n"] for t in timings]
        assert list(row.load_draft_n_accepted) == [t["draft_n_accepted"] for t in timings]
        assert list(row.load_tokens_per_s) == [t["predicted_per_second"] for t in timings]
        assert all(t["draft_n"] > 0 for t in timings)  # MTP drafted for each request, counted per request
    off = cells[(cells.condition == "off") & (cells.concurrency == 2)]
    assert all(sum(v) == 0 for v in off.load_draft_n)


def test_greedy_tokens_under_load_are_compared_with_the_one_request_control(run: dict) -> None:
    control = {r: record(run, "off", 1, r)["response"]["tokens"] for r in REPEATS}
    table = pd.read_csv(run["work"] / "results/load.csv")
    for condition in CONDITIONS:
        requests = [r for repeat in REPEATS for r in record(run, condition, 2, repeat)["load"]["requests"]]
        same = sum(
            r["response"]["tokens"] == control[repeat]
            for repeat in REPEATS
            for r in record(run, condition, 2, repeat)["load"]["requests"]
        )
        row = table[(table.condition == condition) & (table.concurrency == 2)].iloc[0]
        assert row.requests_compared == len(requests) == 2 * len(REPEATS)
        assert row.requests_identical == same
        assert all(len(r["response"]["tokens"]) > 0 for r in requests)


def test_the_load_table_and_report_show_each_point_against_off_at_the_same_load(run: dict) -> None:
    table = pd.read_csv(run["work"] / "results/load.csv")
    assert sorted(zip(table.condition, table.concurrency, strict=True)) == sorted(
        (c, n) for c in CONDITIONS for n in (1, 2)
    )
    cells = read_table(run["work"] / "results/cells.parquet")
    for n in (1, 2):
        at = cells[cells.concurrency == n]
        per_user = {
            c: at[at.condition == c].load_tokens_per_s.map(lambda v: sum(v) / len(v)).mean() for c in CONDITIONS
        }
        row = table[(table.condition == "mtp") & (table.concurrency == n)].iloc[0]
        assert row.speedup == pytest.approx(per_user["mtp"] / per_user["off"])
        assert row.speedup_ci_low <= row.speedup <= row.speedup_ci_high
    two = table[table.concurrency == 2]
    assert (two.aggregate_tokens_per_s > 0).all() and (two.all_in_flight == len(REPEATS)).all()
    # the study's tables stay at one request: the summary's runs are the N = 1 cells'
    summary = pd.read_csv(run["work"] / "results/summary.csv")
    assert set(summary.runs) == {len(REPEATS)}
    report = (run["work"] / "results/report.md").read_text()
    assert "Under load: requests at once" in report and "N*" in report
    figures = read_json(run["work"] / "results/figures/index.json")["figures"]
    assert sum(f["caption"].startswith("Under load") for f in figures) == 2
    # the split: off's steps yield one token each; MTP's more than one, its accepted drafts with it
    assert (table[table.condition == "off"].tokens_per_step == 1.0).all()
    assert (table[table.condition == "mtp"].tokens_per_step > 1.0).all()


def test_claims_about_load_are_judged_on_the_load_tables_numbers(run: dict) -> None:
    """The predictions' two load claims read the load table's sides of 1.0x and acceptance's change at N = 2; their
    verdicts are the ones those numbers give."""
    table = pd.read_csv(run["work"] / "results/load.csv").set_index(["condition", "concurrency"])
    judged = read_judged(run["work"] / "results/judged.json").predictions.set_index("id")
    pays = judged.loc["mtp-pays"]
    sides = [table.loc[("mtp", n), "against_one"] for n in (1, 2)]
    assert [pays.measured[TASK]["points"][n]["against_one"] for n in (1, 2)] == sides
    if BELOW in sides:
        assert pays.verdict == NOT_DIRECTION
    else:
        assert pays.verdict == (REPRODUCED if sides == [ABOVE, ABOVE] else NOT_SEPARATED)
    same = judged.loc["mtp-same"]
    change, low, high = same.measured[TASK][2]
    row = table.loc[("mtp", 2)]
    assert (change, low, high) == pytest.approx(
        (row.acceptance_change, row.acceptance_change_ci_low, row.acceptance_change_ci_high)
    )
    inside, beyond = low >= -0.05 and high <= 0.05, high < -0.05 or low > 0.05
    assert same.verdict == (REPRODUCED if inside else NOT_SIZE if beyond else TOO_WIDE)
    assert same.verdict != TOO_FEW_RUNS  # two repeats a side give an interval
    report = (run["work"] / "results/report.md").read_text()
    assert "MTP pays at both loads" in report and "acceptance the same at every N" in report
