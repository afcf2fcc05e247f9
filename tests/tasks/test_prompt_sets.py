"""A public prompt set prepared as our tasks, on fixtures in each set's real schema (config/tasks/prompt_sets): every
set's rows read as questions, k chosen per category by the documented rule (checked against the rule applied here to
the raw rows) and the same twice, two-turn questions kept whole, SPEED-Bench's placeholders resolved only where the
row carries the text and otherwise refused in one line, a sha256 mismatch and a short or absent category refused;
fetched from a real (offline) Hugging Face cache and from a loopback stand-in for raw.githubusercontent.com."""

from __future__ import annotations

import hashlib
import http.server
import json
import re
import shutil
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specbench.core.config.set_sources import SOURCES
from specbench.core.steps.hf_hub import HubUnreachable
from specbench.tasks import prompt_sets
from specbench.tasks.prompt_sets import (
    CHOICE,
    PINS,
    PLACEHOLDER,
    PromptSetError,
    Question,
    category_name,
    choose,
    fetch,
    prepare,
    prompt_set_step,
    read_questions,
)
from support.hub_cache import populate_hf_cache
from support.paths import REPO

SETS = REPO / "config" / "tasks" / "prompt_sets"
FIXTURE = {
    "spec-bench": SETS / "spec-bench-fixture.jsonl",
    "speed-bench": SETS / "speed-bench-fixture.parquet",
    "mt-bench": SETS / "mt-bench-fixture.parquet",
}
ID, TURNS = {"mt-bench": "prompt_id"}, {"mt-bench": "prompt"}
# categories and k per set for the choice test: each category holds at least k rows in its fixture
ASKED = {"spec-bench": (["qa", "translation", "writing"], 2), "speed-bench": (["coding", "writing"], 3)}
ASKED["mt-bench"] = (["math", "coding"], 2)


def _raw(name: str) -> list[dict]:
    """The fixture's rows as its format holds them (read here without the module)."""
    path = FIXTURE[name]
    if path.suffix == ".parquet":
        return pq.read_table(path).to_pylist()
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _spec(name: str, categories: list[str] | None = None, k: int = 1, **extra) -> dict:
    spec = {"from": name, "revision": PINS[name].revision, "sha256": _sha256(FIXTURE[name]), "per_category": k}
    spec.update({"file": str(FIXTURE[name])}, **({"categories": categories} if categories else {}))
    return {**spec, **extra}


def _prepared(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _one_line(error: BaseException | str) -> str:
    text = str(error)
    assert "\n" not in text and text.strip() == text, text
    return text


# --- the sets' table and the fixtures read in each set's schema ----------------------------------------------------


def test_the_sets_table_names_each_set_and_its_categories_as_task_names() -> None:
    assert set(SOURCES) == {"spec-bench", "speed-bench", "mt-bench"}
    assert [len(SOURCES[n].categories) for n in ("spec-bench", "speed-bench", "mt-bench")] == [13, 11, 8]
    assert SOURCES["spec-bench"].categories[:8] == SOURCES["mt-bench"].categories
    for source in SOURCES.values():
        assert source.kind in ("git-file", "hf-dataset") and source.licence and source.url.startswith("https://")
        assert all(re.fullmatch(r"[a-z0-9][a-z0-9_-]*", c) for c in source.categories), source.categories
        assert re.fullmatch(r"[0-9a-f]{40}", PINS[source.name].revision)


def test_a_category_becomes_a_task_name() -> None:
    assert [category_name(c) for c in ("math_reasoning", " QA ", "Math Reasoning", "Q&A / RAG")] == [
        "math_reasoning",
        "qa",
        "math-reasoning",
        "q-a-rag",
    ]
    with pytest.raises(ValueError, match="no letters or digits"):
        category_name(" / ")


@pytest.mark.parametrize("name", sorted(FIXTURE))
def test_each_fixture_reads_as_questions_in_file_order(name: str) -> None:
    raw = _raw(name)
    questions = read_questions(SOURCES[name], [FIXTURE[name]])
    assert [q.id for q in questions] == [str(r[ID.get(name, "question_id")]) for r in raw]
    assert [q.turns for q in questions] == [tuple(r[TURNS.get(name, "turns")]) for r in raw]
    assert [q.category for q in questions] == [r["category"] for r in raw]
    assert {q.category for q in questions} <= set(SOURCES[name].categories)
    origins = {q.origin for q in questions}
    assert origins == ({""} if name != "speed-bench" else {r["source"] for r in raw})


def test_a_row_that_is_not_a_question_is_refused_naming_the_file_and_row(tmp_path: Path) -> None:
    bad = tmp_path / "question.jsonl"
    bad.write_text('{"question_id": 1, "category": "qa", "turns": ["a"]}\n{"question_id": 2, "category": "qa"}\n')
    with pytest.raises(PromptSetError) as refused:
        read_questions(SOURCES["spec-bench"], [bad], "abc123")
    assert _one_line(refused.value).startswith("spec-bench@abc123: question.jsonl row 2 (question 2): 'turns' is not")


# --- the choice ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(FIXTURE))
def test_the_chosen_questions_follow_the_rule_and_are_the_same_twice(name: str, tmp_path: Path) -> None:
    categories, k = ASKED[name]
    spec = _spec(name, categories, k)
    summary = prepare(spec, tmp_path / "a.jsonl", tmp_path / "work")
    prepare(spec, tmp_path / "b.jsonl", tmp_path / "work")
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    raw, rows = _raw(name), _prepared(tmp_path / "a.jsonl")
    expected = []
    for category in categories:
        pool = [r for r in raw if r["category"] == category]
        for i in range(k):
            position = i * len(pool) // k
            expected.append((category, f"p{i + 1}", str(pool[position][ID.get(name, "question_id")]), position))
    assert [(r["category"], r["member"], r["id"], r["index"]) for r in rows] == expected
    by_id = {str(r[ID.get(name, "question_id")]): r[TURNS.get(name, "turns")] for r in raw}
    assert all(row["turns"] == by_id[row["id"]] for row in rows)  # every turn kept, in order
    source, fields = SOURCES[name], ("source", "repo", "revision", "sha256", "licence", "url", "choice")
    assert {tuple(r[f] for f in fields) for r in rows} == {
        (name, source.repo, spec["revision"], spec["sha256"], source.licence, source.url, CHOICE)
    }
    assert summary == {
        "source": name,
        "revision": spec["revision"],
        "sha256": spec["sha256"],
        "questions": len(raw),
        "chosen": {c: [e[2] for e in expected if e[0] == c] for c in categories},
    }


@pytest.mark.parametrize(("name", "category"), [("spec-bench", "writing"), ("mt-bench", "writing")])
def test_two_turn_questions_keep_both_turns(name: str, category: str, tmp_path: Path) -> None:
    prepare(_spec(name, [category], 3), tmp_path / "out.jsonl", tmp_path / "work")
    rows = _prepared(tmp_path / "out.jsonl")
    assert len(rows) == 3 and all(len(r["turns"]) == 2 and all(t.strip() for t in r["turns"]) for r in rows)


def test_without_categories_every_category_is_chosen_in_source_order(tmp_path: Path) -> None:
    summary = prepare(_spec("spec-bench", k=2), tmp_path / "out.jsonl", tmp_path / "work")
    assert list(summary["chosen"]) == list(dict.fromkeys(r["category"] for r in _raw("spec-bench")))


@pytest.mark.parametrize(
    ("categories", "k", "said"),
    [
        (["math"], 3, "category 'math' has 2 questions, fewer than 3 asked"),
        (["qa", "rag"], 1, "no category 'rag' (there are: writing, math, translation, qa)"),
    ],
)
def test_a_short_or_absent_category_is_refused(tmp_path: Path, categories: list[str], k: int, said: str) -> None:
    with pytest.raises(PromptSetError) as refused:
        prepare(_spec("spec-bench", categories, k), tmp_path / "out.jsonl", tmp_path / "work")
    assert _one_line(refused.value) == f"spec-bench@{PINS['spec-bench'].revision}: {said}"
    assert not (tmp_path / "out.jsonl").exists()


_CATEGORY_RUNS = st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=40)


@settings(max_examples=150, deadline=None)
@given(categories=_CATEGORY_RUNS, k=st.integers(min_value=1, max_value=12))
def test_choose_takes_k_distinct_questions_per_category_in_source_order(categories: list[str], k: int) -> None:
    questions = [Question(str(i), c, (f"turn {i}",)) for i, c in enumerate(categories)]
    counts = {c: categories.count(c) for c in dict.fromkeys(categories)}
    enough = [c for c, n in counts.items() if n >= k]
    chosen = choose(questions, enough, k)
    assert chosen == choose(list(questions), enough, k)  # deterministic
    assert list(chosen) == enough
    for category, picked in chosen.items():
        positions = [int(q.id) for q in picked]
        assert len(picked) == k and len(set(positions)) == k
        assert positions == sorted(positions) and all(q.category == category for q in picked)
        assert positions[0] == categories.index(category)  # the first of the category is always taken
    for category in (c for c, n in counts.items() if n < k):
        with pytest.raises(PromptSetError, match=f"category '{category}' has {counts[category]} questions"):
            choose(questions, [category], k)


# --- SPEED-Bench's placeholders ------------------------------------------------------------------------------------


def test_a_placeholder_is_resolved_only_where_the_row_carries_the_text(tmp_path: Path) -> None:
    raw = [r for r in _raw("speed-bench") if r["category"] == "multilingual"]
    assert raw[0]["turns"][0].startswith(PLACEHOLDER + "\n\n") and "{" not in raw[0]["turns"][0]
    prepare(_spec("speed-bench", ["multilingual"], 1), tmp_path / "out.jsonl", tmp_path / "work")
    [row] = _prepared(tmp_path / "out.jsonl")
    assert row["id"] == raw[0]["question_id"]
    assert row["turns"] == [raw[0]["turns"][0].removeprefix(PLACEHOLDER + "\n\n")]
    with pytest.raises(PromptSetError) as refused:  # the next one's template waits for another dataset's {question}
        prepare(_spec("speed-bench", ["multilingual"], 3), tmp_path / "out3.jsonl", tmp_path / "work")
    assert f"question {raw[1]['question_id']} (multilingual) holds the placeholder" in _one_line(refused.value)


@pytest.mark.parametrize("category", ["summarization", "stem"])
def test_a_placeholder_left_is_refused_in_one_line_naming_the_question(
    category: str, tmp_path: Path, capfd: pytest.CaptureFixture
) -> None:
    first = next(r for r in _raw("speed-bench") if r["category"] == category)
    log, out = tmp_path / "prompt_set.log", tmp_path / "out.jsonl"
    with pytest.raises(SystemExit) as exited:
        prompt_set_step(_spec("speed-bench", [category], 1), out, log)
    assert exited.value.code == 1
    lines = [ln for ln in capfd.readouterr().err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0] in log.read_text(), lines
    revision = PINS["speed-bench"].revision
    assert lines[0].startswith(f"specbench: speed-bench@{revision}: question {first['question_id']} ({category}) ")
    assert f"'{PLACEHOLDER}'" in lines[0] and f"its text is in {first['source']}" in lines[0]
    assert not out.exists()


# --- fetching and the sha256 check --------------------------------------------------------------------------------


def test_a_sha256_mismatch_is_refused_naming_the_revision_and_both_sha256(tmp_path: Path) -> None:
    spec = _spec("mt-bench", ["math"], 1, sha256="0" * 64)
    with pytest.raises(PromptSetError) as refused:
        fetch(spec, tmp_path)
    revision, found = PINS["mt-bench"].revision, _sha256(FIXTURE["mt-bench"])
    assert _one_line(refused.value) == (
        f"mt-bench@{revision}: file {FIXTURE['mt-bench']} has sha256 {found}, expected {'0' * 64}"
    )
    with pytest.raises(PromptSetError) as unpinned:
        fetch({**spec, "sha256": None}, tmp_path)
    assert f"no sha256 pinned; file {FIXTURE['mt-bench']} has sha256 {found}" in _one_line(unpinned.value)


def test_a_missing_file_is_refused_naming_the_revision(tmp_path: Path) -> None:
    with pytest.raises(PromptSetError) as refused:
        fetch(_spec("spec-bench", file=str(tmp_path / "absent.jsonl")), tmp_path)
    sha256 = _sha256(FIXTURE["spec-bench"])
    assert _one_line(refused.value) == (
        f"spec-bench@{PINS['spec-bench'].revision}: no file {tmp_path / 'absent.jsonl'}; expected sha256 {sha256}, "
        "found none"
    )


def test_an_unknown_set_is_refused() -> None:
    with pytest.raises(PromptSetError, match=r"no prompt set 'alpaca' \(known: spec-bench, speed-bench, mt-bench\)"):
        fetch({"from": "alpaca", "revision": "x", "sha256": "y"}, Path("."))


@pytest.fixture
def offline_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """huggingface_hub offline over an HF_HOME of this test; returns that HF_HOME."""
    from huggingface_hub import constants

    hf_home = tmp_path / "hf"
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(hf_home / "hub"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(hf_home))
    return hf_home


# the files each Hub dataset holds at its pinned revision: the split's parquet, the card
HUB_FILES = {
    "speed-bench": "qualitative/test-00000-of-00001.parquet",
    "mt-bench": "data/train-00000-of-00001-67c6c9fef07685a3.parquet",
}


@pytest.mark.parametrize("name", sorted(HUB_FILES))
def test_a_hub_dataset_is_fetched_from_the_cache_huggingface_hub_laid_out(
    name: str, offline_hub: Path, tmp_path: Path
) -> None:
    dataset = tmp_path / "dataset"
    (dataset / HUB_FILES[name]).parent.mkdir(parents=True)
    shutil.copyfile(FIXTURE[name], dataset / HUB_FILES[name])
    (dataset / "README.md").write_text("---\nlicense: other\n---\n")
    commit = populate_hf_cache(offline_hub, SOURCES[name].repo, dataset, repo_type="dataset")
    spec = {k: v for k, v in _spec(name, ASKED[name][0], ASKED[name][1], revision=commit).items() if k != "file"}
    [fetched] = fetch(spec, tmp_path / "work")
    assert fetched.relative_to(fetched.parents[len(Path(HUB_FILES[name]).parts) - 1]).as_posix() == HUB_FILES[name]
    assert fetched.read_bytes() == FIXTURE[name].read_bytes() and commit in fetched.as_posix()
    summary = prepare(spec, tmp_path / "out.jsonl", tmp_path / "work")
    assert summary["revision"] == commit and summary["questions"] == len(_raw(name))


def test_a_hub_dataset_not_in_the_cache_offline_says_what_to_do_in_one_line(
    offline_hub: Path, tmp_path: Path, capfd: pytest.CaptureFixture
) -> None:
    spec = {k: v for k, v in _spec("speed-bench", ["coding"], 1).items() if k != "file"}
    with pytest.raises(HubUnreachable):
        fetch(spec, tmp_path / "work")
    log = tmp_path / "prompt_set.log"
    with pytest.raises(SystemExit):
        prompt_set_step(spec, tmp_path / "out.jsonl", log)
    lines = [ln for ln in capfd.readouterr().err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0] in log.read_text(), lines
    revision = PINS["speed-bench"].revision
    assert lines[0].startswith(f"specbench: dataset nvidia/SPEED-Bench@{revision}: HF_HUB_OFFLINE is set")
    assert "give the prompt set a file" in lines[0] and not (tmp_path / "out.jsonl").exists()


def test_a_revision_the_hub_does_not_have_is_refused_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import httpx
    from huggingface_hub.errors import RevisionNotFoundError

    response = httpx.Response(404, request=httpx.Request("GET", "https://huggingface.co/api/datasets/x"))
    refusal = RevisionNotFoundError(
        "Revision Not Found for url: https://huggingface.co/x.\nInvalid rev id", response=response
    )

    def refused_snapshot(*args, **kwargs) -> Path:
        raise refusal

    monkeypatch.setattr(prompt_sets, "snapshot", refused_snapshot)
    with pytest.raises(PromptSetError) as refused:
        fetch({"from": "mt-bench", "revision": "f" * 40, "sha256": "0" * 64}, Path("."))
    assert _one_line(refused.value) == (
        f"mt-bench@{'f' * 40}: the Hub refused HuggingFaceH4/mt_bench_prompts (RevisionNotFoundError: Revision Not "
        "Found for url: https://huggingface.co/x.)"
    )


@pytest.fixture
def raw_github(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, bytes]]:
    """A loopback stand-in for raw.githubusercontent.com serving the paths put in the yielded dict."""
    served: dict[str, bytes] = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = served.get(self.path)
            self.send_response(200 if body is not None else 404)
            self.end_headers()
            self.wfile.write(body or b"404: Not Found")

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setattr(prompt_sets, "RAW_GITHUB", f"http://127.0.0.1:{server.server_address[1]}")
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    try:
        yield served
    finally:
        server.shutdown()
        server.server_close()


def test_a_git_file_is_downloaded_at_its_commit_and_checked(raw_github: dict[str, bytes], tmp_path: Path) -> None:
    revision = PINS["spec-bench"].revision
    raw_github[f"/hemingkx/Spec-Bench/{revision}/data/spec_bench/question.jsonl"] = FIXTURE["spec-bench"].read_bytes()
    spec = {k: v for k, v in _spec("spec-bench", ["qa"], 2).items() if k != "file"}
    [fetched] = fetch(spec, tmp_path / "work")
    assert fetched == tmp_path / "work" / "question.jsonl" and _sha256(fetched) == spec["sha256"]
    assert prepare(spec, tmp_path / "out.jsonl", tmp_path / "work")["chosen"] == {"qa": ["321", "323"]}
    with pytest.raises(PromptSetError) as missing:
        fetch({**spec, "revision": "0" * 40}, tmp_path / "work")
    url = f"{prompt_sets.RAW_GITHUB}/hemingkx/Spec-Bench/{'0' * 40}/data/spec_bench/question.jsonl"
    assert _one_line(missing.value) == f"spec-bench@{'0' * 40}: {url} answered HTTP 404"


def test_an_unreachable_github_is_refused_in_one_line_naming_the_url(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with socket.socket() as held:  # bound, never listening: connections are refused
        held.bind(("127.0.0.1", 0))
        monkeypatch.setattr(prompt_sets, "RAW_GITHUB", f"http://127.0.0.1:{held.getsockname()[1]}")
        spec = {k: v for k, v in _spec("spec-bench", ["qa"], 1).items() if k != "file"}
        with pytest.raises(PromptSetError) as refused:
            fetch(spec, tmp_path / "work")
    revision = PINS["spec-bench"].revision
    url = f"{prompt_sets.RAW_GITHUB}/hemingkx/Spec-Bench/{revision}/data/spec_bench/question.jsonl"
    assert _one_line(refused.value).startswith(f"spec-bench@{revision}: {url} could not be reached (ConnectError")
    assert "give its path as the prompt set's file" in str(refused.value)


def test_the_step_writes_the_chosen_questions_and_logs_the_summary(tmp_path: Path) -> None:
    out, log = tmp_path / "sets" / "mt-bench.jsonl", tmp_path / "logs" / "mt-bench.log"
    prompt_set_step(_spec("mt-bench", ["coding"], 2), out, log)
    assert [r["member"] for r in _prepared(out)] == ["p1", "p2"]
    assert "'source': 'mt-bench'" in log.read_text() and sorted(p.name for p in out.parent.iterdir()) == [out.name]
