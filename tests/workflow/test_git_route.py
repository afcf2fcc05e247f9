"""The study's llama.cpp route (``source: git``) through the rules, on the real b11223 tree: Snakemake's fetch job
clones a local repository over file:// (blobs fetched lazily, as from GitHub) and checks out the commit a short SHA
names, not the repository's tip; the source job copies the checkout, which is the source archive's tree file for
file, so the build the archive route tests is this route's build too. A short SHA the repository lacks fails in one
line and leaves no tree. No build: the checkout only."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml

from specbench.core.steps.files import read_json, sha256_file
from specbench.llama_cpp.source import SOURCE_INFO
from support.paths import OUTPUT_CACHE, REPO
from support.prepare import wait_for
from support.workflow import fail_message, snakemake, write_yaml

pytestmark = pytest.mark.workflow

STUDY = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
SRC = "resources/llama.cpp/src"
FETCHED = "resources/llama.cpp/source-git"
# What the commit after the pinned one changes: a file edited, one added, one deleted
EDITED, ADDED, DELETED = "CMakeLists.txt", "LATER.md", "README.md"


def _git(*args: str, stdin: str | None = None, env: dict[str, str] | None = None) -> str:
    return subprocess.run(
        ["git", *args], check=True, capture_output=True, text=True, input=stdin, env=env
    ).stdout.strip()


def _b11223_tree() -> Path:
    """The b11223 tree the test cache holds (support.prepare's llama-cpp step unpacks the PyPI sdist there)."""
    wait_for("llama-cpp")
    for info in sorted(OUTPUT_CACHE.glob(f"*/{SOURCE_INFO}")):
        if read_json(info).get("version") == STUDY["llama_cpp"]["pypi-sdist"]["version"]:
            return info.parent
    pytest.fail(f"no llama.cpp b11223 tree in {OUTPUT_CACHE}: the test cache's llama-cpp step makes it")


def _digests(root: Path) -> dict[str, str]:
    """Every file under ``root`` (its repository and the route's record left out): relative path -> sha256."""
    return {
        p.relative_to(root).as_posix(): sha256_file(p)
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts and p.name != SOURCE_INFO
    }


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A bare repository with a history made by git: an earlier commit (the tree without tools/, CMakeLists.txt
    edited, a file b11223 lacks), the b11223 tree itself (its files as they are, the cache's record left out) and a
    later commit on top (``EDITED``, ``ADDED``, ``DELETED``), so the pinned commit is not the tip. It serves partial
    clones like GitHub (uploadpack.allowFilter) and packs without delta search (fast)."""
    tree = _b11223_tree()
    top = tmp_path_factory.mktemp("upstream")
    repo = top / "llama.cpp.git"
    _git("init", "-q", "--bare", str(repo))
    for key, value in (("uploadpack.allowFilter", "true"), ("pack.window", "0"), ("core.autocrlf", "false")):
        _git("--git-dir", str(repo), "config", key, value)
    env = {**os.environ, "GIT_INDEX_FILE": str(top / "index")}
    git = ["--git-dir", str(repo), "--work-tree", str(tree)]

    def stage(path: str, text: str) -> None:
        oid = _git(*git, "hash-object", "-w", "--stdin", stdin=text, env=env)
        _git(*git, "update-index", "--add", "--cacheinfo", f"100644,{oid},{path}", env=env)

    def commit(message: str, day: int) -> str:
        date = f"2026-09-{day:02d}T12:00:00Z"
        dated = {**env, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
        who = ["-c", "user.name=specbench", "-c", "user.email=specbench@localhost"]
        _git(*git, *who, "commit", "-qm", message, env=dated)
        return _git(*git, "rev-parse", "HEAD", env=env)

    cmake = (tree / EDITED).read_text()
    _git(*git, "add", "-A", "--force", "--", ".", f":!{SOURCE_INFO}", ":!tools", env=env)
    stage("EARLIER.md", "earlier\n")
    stage(EDITED, cmake + "# earlier\n")
    earlier = commit("earlier", 26)
    _git(*git, "add", "-A", "--force", "--", ".", f":!{SOURCE_INFO}", env=env)  # ignored names too: the tree as it is
    pinned = commit("b11223", 27)
    stage(EDITED, cmake + "# later\n")
    stage(ADDED, "later\n")
    _git(*git, "update-index", "--force-remove", DELETED, env=env)
    later = commit("later", 28)
    assert _git(*git, "rev-list", "HEAD", env=env).split() == [later, pinned, earlier]
    objects = _git("--git-dir", str(repo), "cat-file", "--batch-all-objects", "--batch-check=%(objectname)").split()
    return {"repo": repo, "url": f"file://{repo}", "tree": tree, "pinned": pinned, "later": later, "objects": objects}


def _route(tmp: Path, upstream: dict, commit: str) -> tuple[Path, subprocess.CompletedProcess]:
    """``snakemake resources/llama.cpp/src`` in ``tmp/work`` over config/tiny.yaml with the git route to ``upstream``
    at ``commit``. The url names this module's temporary repository, so the fetch's key in Snakemake's
    between-workflow cache is new each time: the run gets a cache of its own (``tmp/cache``), which leaves the test
    cache as it was and holds no other route's tree."""
    work, cache = tmp / "work", tmp / "cache"
    work.mkdir()
    cache.mkdir()
    override = {"llama_cpp": {"source": "git", "git": {"url": upstream["url"], "commit": commit}}}
    configs = [REPO / "config" / "tiny.yaml", write_yaml(work / "git.yaml", override)]
    env = {"SNAKEMAKE_OUTPUT_CACHE": str(cache), "HF_HUB_OFFLINE": "1"}
    return work, snakemake(work, [SRC], configs, env=env, prepared=())


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory, upstream: dict) -> dict:
    work, result = _route(tmp_path_factory.mktemp("git-route"), upstream, upstream["pinned"][:7])
    assert result.returncode == 0, fail_message(result)
    return {"work": work, "src": work / SRC, "result": result}


def test_the_fetch_checks_out_the_commit_the_short_sha_names(run: dict, upstream: dict) -> None:
    src, pinned = run["src"], upstream["pinned"]
    assert _git("-C", str(src), "rev-parse", "HEAD") == pinned
    assert _git("-C", str(src), "rev-parse", "refs/remotes/origin/HEAD") == upstream["later"]  # not the tip
    assert _git("-C", str(src), "config", "remote.origin.partialclonefilter") == "blob:none"
    expected = {"kind": "git", "url": upstream["url"], "commit": pinned, "label": STUDY["llama_cpp"]["git"]["label"]}
    assert read_json(run["work"] / FETCHED / SOURCE_INFO) == {**expected, "sha256": None}
    assert read_json(src / SOURCE_INFO) == {**expected, "sha256": None}


def test_the_checkout_is_the_source_archives_tree_file_for_file(run: dict, upstream: dict) -> None:
    checkout, archive = _digests(run["src"]), _digests(upstream["tree"])
    assert len(archive) > 1000 and "CMakeLists.txt" in archive and "tools/server/server.cpp" in archive
    assert checkout == archive
    assert read_json(upstream["tree"] / SOURCE_INFO)["kind"] == "pypi-sdist"  # the archive route's record, not this


def test_the_later_commits_changes_are_absent(run: dict, upstream: dict) -> None:
    src, tree = run["src"], upstream["tree"]
    assert not (src / ADDED).exists() and not (src / "EARLIER.md").exists()
    assert sha256_file(src / EDITED) == sha256_file(tree / EDITED)
    assert sha256_file(src / DELETED) == sha256_file(tree / DELETED)
    # The partial clone never fetched the later commit's new blobs: only the checked-out commit's came over
    missing = _git("-C", str(src), "rev-list", "--objects", "--missing=print", upstream["later"]).split()
    later_blobs = _git("-C", str(src), "ls-tree", upstream["later"], EDITED, ADDED).split()[2::4]
    assert later_blobs and all(f"?{oid}" in missing for oid in later_blobs)


def test_a_short_sha_the_repository_lacks_fails_in_one_line_and_leaves_no_tree(tmp_path: Path, upstream: dict) -> None:
    wrong = next(d * 7 for d in "0123456789abcdef" if not any(oid.startswith(d * 7) for oid in upstream["objects"]))
    work, result = _route(tmp_path, upstream, wrong)
    assert result.returncode != 0, fail_message(result)
    line = (
        f"specbench: llama.cpp source: {upstream['url']} has no commit {wrong} (llama_cpp.git.commit): pin a commit of "
        "that repository, or point llama_cpp.git.url at the repository that has it"
    )
    assert line in result.stderr.splitlines(), fail_message(result)
    assert not (work / SRC).exists() and not (work / SRC).is_symlink()
    assert not (work / FETCHED).exists() and not (work / FETCHED).is_symlink()
