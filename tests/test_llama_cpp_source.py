"""Source routes for llama.cpp: a checksummed archive and a git checkout verified against the pinned commit."""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path

import pytest

from specbench.files import read_json, sha256_file
from specbench.llama_cpp import SOURCE_INFO, SourceError, extract_source, fetch_archive, git_checkout


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


def test_git_route_checks_out_the_pinned_commit(tmp_path: Path) -> None:
    upstream = tmp_path / "upstream"
    _make_tree(upstream)
    subprocess.run(["git", "init", "-q", str(upstream)], check=True)
    for name in ("first", "second"):
        (upstream / "CHANGES").write_text(name)
        _git(upstream, "add", "-A")
        _git(upstream, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", name)
    first = _git(upstream, "rev-list", "--max-parents=0", "HEAD")
    info = git_checkout(str(upstream), first[:7], tmp_path / "src", "first commit")
    assert info["commit"] == first
    assert (tmp_path / "src" / "CHANGES").read_text() == "first"
    with pytest.raises(SourceError):
        git_checkout(str(upstream), "deadbee", tmp_path / "src2", None)
