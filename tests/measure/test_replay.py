"""A cell measured again by hand (specbench.measure.replay): the recorded argv without its address, paths made
absolute against the run's working directory (the server itself is started in tests/workflow/test_smollm2.py)."""

from __future__ import annotations

from pathlib import Path

from specbench.measure.replay import recorded_args


def test_the_recorded_argv_loses_its_address_and_gains_absolute_paths(tmp_path: Path) -> None:
    (tmp_path / "resources/bin").mkdir(parents=True)
    (tmp_path / "resources/bin/llama-server").write_text("")
    (tmp_path / "model.gguf").write_text("")
    argv = [
        "resources/bin/llama-server",
        "-m",
        "model.gguf",
        "-c",
        "4096",
        "--jinja",
        "--host",
        "127.0.0.1",
        "--port",
        "40123",
        "--spec-type",
        "ngram-mod",
    ]
    binary, args = recorded_args(argv, tmp_path)
    assert binary == tmp_path / "resources/bin/llama-server"
    assert args == ["-m", str(tmp_path / "model.gguf"), "-c", "4096", "--jinja", "--spec-type", "ngram-mod"]
