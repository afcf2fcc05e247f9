"""A public prompt set (Spec-Bench, SPEED-Bench, MT-Bench) prepared as our tasks: its file(s) fetched at a pinned
revision and checked against their sha256, its questions read, k chosen per category by a fixed rule, placeholders
refused, and the chosen questions written as JSON lines (one per question, with where it came from)."""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from specbench.core.config.set_sources import SOURCES, SetSource
from specbench.core.steps.entry import fail, logged_to
from specbench.core.steps.files import write_atomic
from specbench.core.steps.hf_hub import HubUnreachable, snapshot
from specbench.tasks.set_sources import (
    PINS,
    PLACEHOLDER,
    Pin,
    PromptSetError,
    Question,
    category_name,
    read_questions,
    resolve_placeholder,
)

__all__ = [
    "CHOICE",
    "PINS",
    "PLACEHOLDER",
    "SOURCES",
    "Pin",
    "PromptSetError",
    "Question",
    "SetSource",
    "category_name",
    "choose",
    "fetch",
    "files_sha256",
    "prepare",
    "prompt_set_step",
    "read_questions",
    "refuse_placeholders",
]

RAW_GITHUB = "https://raw.githubusercontent.com"
CHOICE = "evenly spaced in source order: of a category's n questions, the (i*n//k)-th for i = 0..k-1"


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _source(spec: Mapping[str, Any]) -> SetSource:
    name = spec.get("from")
    if name not in SOURCES:
        raise PromptSetError(f"no prompt set {name!r} (known: {', '.join(SOURCES)})")
    if not spec.get("revision"):
        raise PromptSetError(f"{name}: no revision given (pin a commit)")
    return SOURCES[name]


def files_sha256(files: list[Path]) -> str:
    """Hex sha256 of the files' bytes, sorted by name and concatenated (one file: that file's sha256)."""
    digest = hashlib.sha256()
    for path in sorted(files, key=lambda p: (p.name, str(p))):
        with open(path, "rb") as handle:
            while block := handle.read(1 << 22):
                digest.update(block)
    return digest.hexdigest()


def _download(source: SetSource, revision: str, dest: Path) -> Path:
    import httpx

    url = f"{RAW_GITHUB}/{source.repo}/{revision}/{source.files}"
    what_to_do = f"on a machine with internet, fetch {url} and give its path as the prompt set's file"
    try:
        response = httpx.get(url, timeout=60.0, follow_redirects=True)
    except httpx.HTTPError as error:
        detail = _one_line(f"{type(error).__name__}: {error}")[:160]
        raise PromptSetError(
            f"{source.name}@{revision}: {url} could not be reached ({detail}). What to do: {what_to_do}"
        ) from None
    if response.status_code != 200:
        raise PromptSetError(f"{source.name}@{revision}: {url} answered HTTP {response.status_code}")
    path = dest / Path(source.files).name
    write_atomic(path, response.content)
    return path


def _hub_files(source: SetSource, revision: str) -> list[Path]:
    from huggingface_hub.errors import HfHubHTTPError

    local = f"give the prompt set a file: a copy of {source.repo}'s {source.files} at {revision}"
    try:
        found = snapshot(source.repo, revision, repo_type="dataset", patterns=[source.files], local=local)
    except HfHubHTTPError as error:  # no such repository or revision, or a gated one without access
        first = (str(error).strip().splitlines() or [""])[0][:200]
        raise PromptSetError(
            f"{source.name}@{revision}: the Hub refused {source.repo} ({type(error).__name__}: {first})"
        ) from None
    return sorted(found.glob(source.files))


def fetch(spec: Mapping[str, Any], dest: Path) -> list[Path]:
    """The set's file(s) at the spec's revision (``file``: a local path standing in for them), checked against the
    spec's sha256: a mismatch, no sha256 or no file raises PromptSetError naming the revision and both sha256."""
    source = _source(spec)
    revision = str(spec["revision"])
    if spec.get("file"):
        files = [Path(spec["file"])] if Path(spec["file"]).is_file() else []
        where = f"file {spec['file']}"
    elif source.kind == "git-file":
        dest.mkdir(parents=True, exist_ok=True)
        files, where = [_download(source, revision, dest)], source.files
    else:
        files, where = _hub_files(source, revision), source.files
    expected = spec.get("sha256")
    if not files:
        raise PromptSetError(f"{source.name}@{revision}: no {where}; expected sha256 {expected}, found none")
    found = files_sha256(files)
    if not expected:
        raise PromptSetError(
            f"{source.name}@{revision}: no sha256 pinned; {where} has sha256 {found} (pin it once you have checked it)"
        )
    if found != expected:
        raise PromptSetError(f"{source.name}@{revision}: {where} has sha256 {found}, expected {expected}")
    return files


def refuse_placeholders(source: SetSource, revision: str, questions: list[Question]) -> None:
    """Raise PromptSetError naming the first question that still holds a placeholder (its text left in another
    dataset), and the placeholder."""
    for question in questions:
        if any(PLACEHOLDER in turn for turn in question.turns):
            origin = f", its text is in {question.origin}" if question.origin else ""
            raise PromptSetError(
                f"{source.name}@{revision}: question {question.id} ({question.category}) holds the placeholder "
                f"'{PLACEHOLDER}' instead of its text{origin} (another dataset, under its own terms, not fetched "
                "here): choose other categories or fewer questions"
            )


def choose(questions: list[Question], categories: list[str], per_category: int) -> dict[str, list[Question]]:
    """k questions of each category (in the order asked): of its n questions in source order, the (i*n//k)-th for
    i = 0..k-1 (evenly spaced, first included); PromptSetError naming a category that is absent or has fewer than k."""
    if isinstance(per_category, bool) or not isinstance(per_category, int) or per_category < 1:
        raise PromptSetError(f"per_category must be a whole number of at least 1, not {per_category!r}")
    if len(set(categories)) != len(categories):
        raise PromptSetError(f"categories are named twice: {categories}")
    by_category: dict[str, list[Question]] = {}
    for question in questions:
        by_category.setdefault(question.category, []).append(question)
    chosen = {}
    for category in categories:
        pool = by_category.get(category)
        if not pool:
            raise PromptSetError(f"no category {category!r} (there are: {', '.join(by_category)})")
        if len(pool) < per_category:
            raise PromptSetError(f"category {category!r} has {len(pool)} questions, fewer than {per_category} asked")
        chosen[category] = [pool[i * len(pool) // per_category] for i in range(per_category)]
    return chosen


def _categories(spec: Mapping[str, Any], questions: list[Question]) -> list[str]:
    asked = spec.get("categories")
    if asked:
        return [category_name(c) for c in asked]
    return list(dict.fromkeys(q.category for q in questions))


def prepare(spec: Mapping[str, Any], out: Path, work: Path) -> dict[str, Any]:
    """Fetch and check the set, read it, choose per category, refuse placeholders left in the chosen questions, and
    write ``out`` (JSON lines, category order then choice order); returns a summary."""
    source = _source(spec)
    revision = str(spec["revision"])
    files = fetch(spec, work)
    sha256 = files_sha256(files)
    questions = read_questions(source, files, revision)
    if source.name == "speed-bench":
        questions = [resolve_placeholder(q) for q in questions]
    try:
        chosen = choose(questions, _categories(spec, questions), spec.get("per_category"))  # type: ignore[arg-type]
    except (PromptSetError, ValueError) as error:
        raise PromptSetError(f"{source.name}@{revision}: {error}") from None
    refuse_placeholders(source, revision, [q for picked in chosen.values() for q in picked])
    rows = []
    for category, picked in chosen.items():
        in_category = [q for q in questions if q.category == category]
        index = {id(q): i for i, q in enumerate(in_category)}
        for member, question in enumerate(picked, start=1):
            rows.append(
                {
                    "category": category,
                    "member": f"p{member}",
                    "id": question.id,
                    "turns": list(question.turns),
                    "source": source.name,
                    "repo": source.repo,
                    "revision": revision,
                    "sha256": sha256,
                    "licence": source.licence,
                    "url": source.url,
                    "choice": CHOICE,
                    "index": index[id(question)],
                    "local": str(spec["file"]) if spec.get("file") else None,
                }
            )
    write_atomic(out, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode("utf-8"))
    return {
        "source": source.name,
        "revision": revision,
        "sha256": sha256,
        "questions": len(questions),
        "chosen": {category: [q.id for q in picked] for category, picked in chosen.items()},
    }


def prompt_set_step(spec: Mapping[str, Any], out: Path, log: Path) -> None:
    """The prompt set's questions chosen at its pinned revision, as JSON lines; a failure ends in one line."""
    with logged_to(log):
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(prefix=f".{out.name}.", dir=out.parent) as work:
                print(prepare(dict(spec), out, Path(work)))
        except (PromptSetError, HubUnreachable) as error:
            fail(_one_line(str(error)), log)
