"""The study's llama.cpp route (``source: git``) on the real b11223 tree: a local repository holding that tree at one
commit, cloned over file:// by the fetch step the workflow runs (blobs fetched lazily, as from GitHub) and checked
out at the pinned commit, the tree copied by the source step; a commit the repository lacks is refused in one line.
No build: the checkout only."""

from __future__ import annotations

import copy
import subprocess
from pathlib import Path

import pytest
import yaml

from specbench.core.config.load import validate_config
from specbench.core.config.sources import llama_source
from specbench.core.steps.files import read_json, sha256_file
from specbench.llama_cpp.source import SOURCE_INFO, fetch_step, source_step
from support.paths import OUTPUT_CACHE, REPO
from support.prepare import wait_for

STUDY = yaml.safe_load((REPO / "config" / "config.yaml").read_text())


def _b11223_tree() -> Path:
    """The b11223 tree the test cache holds (support.prepare's llama-cpp step unpacks the PyPI sdist there)."""
    wait_for("llama-cpp")
    for info in sorted(OUTPUT_CACHE.glob(f"*/{SOURCE_INFO}")):
        if read_json(info).get("version") == STUDY["llama_cpp"]["pypi-sdist"]["version"]:
            return info.parent
    pytest.fail(f"no llama.cpp b11223 tree in {OUTPUT_CACHE}: the test cache's llama-cpp step makes it")


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, Path]:
    """A bare repository holding the b11223 tree (its files as they are, the cache's record left out) at one commit;
    it serves partial clones like GitHub (uploadpack.allowFilter) and packs without delta search (fast)."""
    tree = _b11223_tree()
    repo = tmp_path_factory.mktemp("upstream") / "llama.cpp.git"
    _git("init", "-q", "--bare", str(repo))
    for key, value in (("uploadpack.allowFilter", "true"), ("pack.window", "0"), ("core.autocrlf", "false")):
        _git("--git-dir", str(repo), "config", key, value)
    work = ["--git-dir", str(repo), "--work-tree", str(tree)]
    _git(*work, "add", "-A", "--force", "--", ".", f":!{SOURCE_INFO}")  # ignored names too: the tree as it is
    _git(*work, "-c", "user.name=specbench", "-c", "user.email=specbench@localhost", "commit", "-qm", "b11223")
    return repo, _git("--git-dir", str(repo), "rev-parse", "HEAD"), tree


def _source(url: str, commit: str) -> dict:
    """The study config's llama.cpp block with only the repository and commit changed, as the workflow resolves it."""
    config = copy.deepcopy(STUDY)
    config["llama_cpp"]["git"].update(url=url, commit=commit)
    return llama_source(validate_config(config, REPO), REPO)


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and ".git" not in p.parts}


def test_the_git_route_checks_out_the_b11223_tree_at_its_commit(upstream, tmp_path: Path) -> None:
    repo, commit, tree = upstream
    source = _source(f"file://{repo}", commit[:7])
    assert source["kind"] == "git" and source["commit"] == commit[:7]
    fetched = tmp_path / "resources/llama.cpp/source-git"
    fetch_step(source, fetched, tmp_path / "fetch.log")
    assert read_json(fetched / SOURCE_INFO)["commit"] == commit
    source_step(source, fetched, tmp_path / "src", tmp_path / "source.log")
    src = tmp_path / "src"
    assert _git("-C", str(src), "rev-parse", "HEAD") == commit
    assert _files(src) == _files(tree)  # every file, the record of the route beside them
    for name in ("CMakeLists.txt", "convert_hf_to_gguf.py", "ggml/src/ggml-cuda/CMakeLists.txt"):
        assert sha256_file(src / name) == sha256_file(tree / name), name
    assert read_json(src / SOURCE_INFO) == {
        "kind": "git",
        "url": f"file://{repo}",
        "commit": commit,
        "label": STUDY["llama_cpp"]["git"]["label"],
        "sha256": None,
    }


def test_a_commit_the_repository_lacks_is_refused_in_one_line(upstream, tmp_path: Path, capfd) -> None:
    repo, commit, _ = upstream
    wrong = "0000000" if not commit.startswith("0000000") else "1111111"
    log = tmp_path / "fetch.log"
    with pytest.raises(SystemExit) as exited:
        fetch_step(_source(f"file://{repo}", wrong), tmp_path / "source-git", log)
    assert exited.value.code == 1
    [line] = [ln for ln in capfd.readouterr().err.splitlines() if ln.strip()]
    assert line == (
        f"specbench: llama.cpp source: file://{repo} has no commit {wrong} (llama_cpp.git.commit): pin a commit of "
        "that repository, or point llama_cpp.git.url at the repository that has it"
    )
    assert line in log.read_text()
