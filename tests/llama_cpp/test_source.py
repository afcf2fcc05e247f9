"""Source routes for llama.cpp: a checksummed archive and a git checkout verified against the pinned commit."""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path

import pytest

from specbench.core.steps.files import read_json, sha256_file
from specbench.llama_cpp.cmake import build_env
from specbench.llama_cpp.source import (
    SOURCE_INFO,
    SourceError,
    extract_source,
    fetch_archive,
    fetch_step,
    git_checkout,
    source_step,
)
from support.paths import REPO
from support.rules import rule_names
from support.workflow import job_counts, snakemake


def _make_tree(root: Path) -> None:
    root.mkdir(parents=True)
    (root / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.14)\n")
    (root / "README.md").write_text("tree\n")


def _tar(tmp_path: Path) -> Path:
    _make_tree(tmp_path / "pkg-1.0" / "llama.cpp")
    archive = tmp_path / "pkg-1.0.tar.gz"
    with tarfile.open(archive, "w:gz") as tf:
        tf.add(tmp_path / "pkg-1.0", arcname="pkg-1.0")
    return archive


def test_archive_route_extracts_subdir_and_records_sha(tmp_path: Path) -> None:
    archive = _tar(tmp_path)
    fetched = tmp_path / "fetched" / "source-archive"
    fetch_archive(str(archive), sha256_file(archive), fetched)
    origin = {"kind": "archive", "url": str(archive), "label": "test tree"}
    info = extract_source(fetched, sha256_file(archive), "llama.cpp", tmp_path / "src", origin)
    assert (tmp_path / "src" / "CMakeLists.txt").is_file()
    assert read_json(tmp_path / "src" / SOURCE_INFO) == info
    assert info["sha256"] == sha256_file(archive) and info["commit"] is None
    assert info["kind"] == "archive" and info["label"] == "test tree" and info["subdir"] == "llama.cpp"


def test_archive_with_wrong_sha_is_refused_and_leaves_nothing(tmp_path: Path) -> None:
    archive = _tar(tmp_path)
    dest = tmp_path / "fetched" / "source-archive"
    with pytest.raises(SourceError, match="sha256 is"):
        fetch_archive(str(archive), "0" * 64, dest)
    assert not dest.exists()


def test_archive_without_the_subdir_says_so(tmp_path: Path) -> None:
    archive = _tar(tmp_path)
    with pytest.raises(SourceError, match="no CMakeLists.txt under 'wrong'"):
        extract_source(archive, sha256_file(archive), "wrong", tmp_path / "src", {"kind": "archive"})


def test_archive_with_unsafe_member_is_refused(tmp_path: Path) -> None:
    archive = tmp_path / "evil.tar"
    with tarfile.open(archive, "w") as tf:
        data = b"x"
        member = tarfile.TarInfo("../escape.txt")
        member.size = len(data)
        tf.addfile(member, io.BytesIO(data))
    with pytest.raises(tarfile.TarError):
        extract_source(archive, sha256_file(archive), "", tmp_path / "out" / "src", {"kind": "archive"})
    assert not (tmp_path / "escape.txt").exists()


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def _upstream(tmp_path: Path) -> tuple[Path, list[str]]:
    upstream = tmp_path / "upstream"
    _make_tree(upstream)
    subprocess.run(["git", "init", "-q", str(upstream)], check=True)
    for name in ("first", "second"):
        (upstream / "CHANGES").write_text(name)
        _git(upstream, "add", "-A")
        _git(upstream, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", name)
    return upstream, _git(upstream, "rev-list", "--reverse", "HEAD").split()


def test_git_route_checks_out_the_pinned_commit(tmp_path: Path) -> None:
    upstream, (first, _second) = _upstream(tmp_path)
    info = git_checkout(str(upstream), first[:7], tmp_path / "src", "first commit")
    assert info["commit"] == first
    assert (tmp_path / "src" / "CHANGES").read_text() == "first"
    with pytest.raises(SourceError):
        git_checkout(str(upstream), "deadbee", tmp_path / "src2", None)


def _commit_seen_by_build_info(tree: Path, env: dict[str, str] | None) -> str | None:
    """What llama.cpp's cmake/build-info.cmake asks git for, run in the tree: its commit, or None when git fails."""
    result = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=tree, env=env, capture_output=True, text=True)
    return result.stdout.strip() if result.returncode == 0 else None


def test_an_unpacked_tree_inside_the_workflows_clone_does_not_take_its_commit(tmp_path: Path) -> None:
    """Seen on the H200 device check: an sdist unpacked under a clone's resources/ built as 'build 104, commit
    <the workflow's HEAD>'. With the build's environment git no longer looks above the tree."""
    clone = tmp_path / "clone"
    tree = clone / "resources" / "llama.cpp" / "src"
    _make_tree(tree)
    subprocess.run(["git", "init", "-q", str(clone)], check=True)
    (clone / "Snakefile").write_text("")
    _git(clone, "add", "Snakefile")
    _git(clone, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "workflow")
    assert _commit_seen_by_build_info(tree, None) == _git(clone, "rev-parse", "--short", "HEAD")  # the bug
    assert _commit_seen_by_build_info(tree, build_env(tree)) is None  # llama.cpp then says 'commit unknown'


def test_a_git_checkout_still_reports_its_own_commit(tmp_path: Path) -> None:
    tree = tmp_path / "clone" / "resources" / "llama.cpp" / "src"
    _make_tree(tree)
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    _git(tree, "add", "-A")
    _git(tree, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "llama.cpp")
    assert _commit_seen_by_build_info(tree, build_env(tree)) == _git(tree, "rev-parse", "--short", "HEAD")


def test_the_git_clone_is_the_fetch_steps_and_the_source_step_needs_no_network(tmp_path: Path) -> None:
    """On a cluster the fetch runs on the submitting host (the Snakefile's localrules) and the source step maybe on a
    compute node without internet: after the fetch, the upstream repository can be gone."""
    upstream, (first, _second) = _upstream(tmp_path)
    source = {"kind": "git", "url": str(upstream), "commit": first[:7], "label": "first"}
    fetched = tmp_path / "resources/llama.cpp/source-git"
    fetch_step(source, fetched, tmp_path / "fetch.log")
    assert read_json(fetched / SOURCE_INFO)["commit"] == first
    upstream.rename(tmp_path / "gone")  # no network from here on
    source_step(source, fetched, tmp_path / "src", tmp_path / "source.log")
    assert (tmp_path / "src" / "CHANGES").read_text() == "first"
    assert _git(tmp_path / "src", "rev-parse", "HEAD") == first  # llama.cpp's build info still finds its commit
    assert read_json(tmp_path / "src" / SOURCE_INFO) == read_json(fetched / SOURCE_INFO)


def test_a_fetched_checkout_moved_off_its_commit_is_refused(tmp_path: Path) -> None:
    upstream, (first, second) = _upstream(tmp_path)
    source = {"kind": "git", "url": str(upstream), "commit": first, "label": None}
    fetched = tmp_path / "source-git"
    fetch_step(source, fetched, tmp_path / "fetch.log")
    _git(fetched, "checkout", "-q", second)
    with pytest.raises(SourceError, match=f"is at {second}, not the commit {first}"):
        source_step(source, fetched, tmp_path / "src", tmp_path / "source.log")


def test_the_studys_git_route_plans_the_clone_as_the_local_fetch_job(tmp_path: Path) -> None:
    result = snakemake(tmp_path, ["resources/llama.cpp/src"], [REPO / "config/config.yaml"], "-n")
    assert result.returncode == 0, result.stderr[-3000:]
    assert job_counts(result.stdout + result.stderr) == {"llama_cpp_fetch": 1, "llama_cpp_source": 1}
    config = __import__("yaml").safe_load((REPO / "config/config.yaml").read_text())
    rules = rule_names(tmp_path / "parsed", [REPO / "config/config.yaml"])
    assert config["llama_cpp"]["source"] == "git" and "llama_cpp_fetch" in rules.local
