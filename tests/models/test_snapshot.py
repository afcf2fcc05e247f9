"""A model's download step: from a hub that cannot be reached it ends in the one documented line, never a traceback
(the study's model, draft and GSM8K at their pinned commits, against a closed local port, where huggingface_hub gives
up and says the cache lacks them, and against a local port that resets every connection, huggingface-hub 2.x's own
transport error); from a cache that huggingface_hub laid out (its shared store of Xet files or not) it takes each
file checked against its blob's name, and refuses a damaged one in one line."""

from __future__ import annotations

import hashlib
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from specbench.models.snapshot import download_step, hf_snapshot
from specbench.tasks.datasets import dataset_step
from support.hub_cache import populate_hf_cache, sharded_checkpoint, shared_store_file
from support.paths import REPO

STUDY = yaml.safe_load((REPO / "config" / "config.yaml").read_text())


def _resetting_port() -> Iterator[int]:
    """A port on 127.0.0.1 that accepts each connection and resets it at once."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                return
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\1\0\0\0\0\0\0\0")  # RST on close
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        server.close()


def _closed_port() -> Iterator[int]:
    """A port on 127.0.0.1 that nothing listens on (bound, never listening: connections are refused)."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield held.getsockname()[1]


@pytest.fixture(params=[_closed_port, _resetting_port], ids=["closed-port", "resetting-port"])
def unreachable(request, tmp_path: Path, monkeypatch) -> Iterator[str]:
    """huggingface_hub pointed at an unreachable local endpoint, an empty cache, online, without its back-off waits."""
    from huggingface_hub import constants
    from huggingface_hub.utils import _http

    ports: Callable[[], Iterator[int]] = request.param
    generator = ports()
    port = next(generator)
    endpoint = f"http://127.0.0.1:{port}"
    monkeypatch.setattr(constants, "ENDPOINT", endpoint)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(_http, "time", SimpleNamespace(sleep=lambda seconds: None))  # its retries, at once
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    yield endpoint
    generator.close()


def _one_line(capfd: pytest.CaptureFixture, log: Path) -> str:
    lines = [ln for ln in capfd.readouterr().err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in lines[0], lines
    assert lines[0] in log.read_text()
    return lines[0]


@pytest.mark.parametrize("role", ["target", "draft"])
def test_a_model_download_says_what_to_do_in_one_line(unreachable: str, role: str, tmp_path: Path, capfd) -> None:
    hf = STUDY["models"][role]["hf"]
    log = tmp_path / "download.log"
    with pytest.raises(SystemExit) as exited:
        download_step(hf["repo"], hf["revision"], tmp_path / "hf-out", tmp_path / "m.json", log)
    assert exited.value.code == 1
    line = _one_line(capfd, log)
    assert line.startswith(f"specbench: model {hf['repo']}@{hf['revision']}: the Hugging Face hub could not be reached")
    assert f"hf download {hf['repo']} --revision {hf['revision']}" in line and "HF_HUB_OFFLINE=1" in line
    assert "models.<role>.source: checkpoint" in line
    assert not (tmp_path / "m.json").exists()


def test_the_gsm8k_download_says_what_to_do_in_one_line(unreachable: str, tmp_path: Path, capfd) -> None:
    dataset = STUDY["tasks"]["gsm8k"]["dataset"]
    log = tmp_path / "dataset.log"
    with pytest.raises(SystemExit) as exited:
        dataset_step(dataset, tmp_path / "gsm8k.jsonl", log)
    assert exited.value.code == 1
    line = _one_line(capfd, log)
    assert line.startswith(f"specbench: dataset openai/gsm8k@{dataset['revision']}: the Hugging Face hub could not")
    assert "--repo-type dataset" in line and "kind: local-jsonl" in line
    assert not (tmp_path / "gsm8k.jsonl").exists()


# --- the cache as huggingface_hub writes it ----------------------------------------------------------------------


@pytest.fixture
def offline_hub(tmp_path: Path, monkeypatch) -> Path:
    """huggingface_hub offline over an HF_HOME of this test; returns that HF_HOME."""
    from huggingface_hub import constants

    hf_home = tmp_path / "hf"
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(hf_home / "hub"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    return hf_home


@pytest.mark.parametrize("shared", [True, False], ids=["shared-store", "repo-blobs"])
def test_a_snapshot_as_huggingface_hub_caches_it_is_accepted(offline_hub: Path, tmp_path: Path, shared: bool) -> None:
    source = sharded_checkpoint(tmp_path / "checkpoint", 70_000)
    commit = populate_hf_cache(offline_hub, "specbench-test/sharded", source, shared=shared)
    snapshot = offline_hub / f"hub/models--specbench-test--sharded/snapshots/{commit}"
    shard = snapshot / "model-00001-of-00002.safetensors"
    # the layout under test: with the shared store the bytes sit under the Xet hash, not the sha256
    held_by = shared_store_file(shard)
    assert (held_by is not None) == shared
    if shared:
        assert held_by.name != hashlib.sha256(shard.read_bytes()).hexdigest() and held_by.parent.parent.name == "blobs"
    manifest = hf_snapshot("specbench-test/sharded", commit, tmp_path / "out")
    assert manifest["commit"] == commit
    expected = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in source.iterdir()}
    assert {f["path"]: f["sha256"] for f in manifest["files"]} == expected
    assert all((tmp_path / "out" / name).read_bytes() == (source / name).read_bytes() for name in expected)


@pytest.mark.parametrize("shared", [True, False], ids=["shared-store", "repo-blobs"])
@pytest.mark.parametrize("damaged", ["model-00002-of-00002.safetensors", "config.json"])
def test_a_damaged_file_is_refused_in_one_line(
    offline_hub: Path, tmp_path: Path, capfd, shared: bool, damaged: str
) -> None:
    commit = populate_hf_cache(
        offline_hub, "specbench-test/sharded", sharded_checkpoint(tmp_path / "c", 70_000), shared=shared
    )
    held = (offline_hub / f"hub/models--specbench-test--sharded/snapshots/{commit}" / damaged).resolve()
    held.chmod(0o600)  # the shared store keeps its files read-only
    held.write_bytes(held.read_bytes()[:-7])
    log = tmp_path / "download.log"
    with pytest.raises(SystemExit):
        download_step("specbench-test/sharded", commit, tmp_path / "out", tmp_path / "m.json", log)
    lines = [ln for ln in capfd.readouterr().err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0] in log.read_text()
    kind = "sha256" if damaged.endswith(".safetensors") else "git blob sha1"
    assert lines[0].startswith(f"specbench: specbench-test/sharded@{commit}: {damaged} is truncated or damaged (")
    assert f", {kind} " in lines[0] and str(held) in lines[0]
    assert not (tmp_path / "m.json").exists()
