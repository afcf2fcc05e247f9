"""Reading what the server reported: response timings and the speculative lines of its log."""

from __future__ import annotations

import pytest

from specbench.analysis.derived import derived_figures
from specbench.analysis.server_log import parse_speculative_log
from specbench.measure.cell_record import speculative_lines

# Lines as llama-server b11223 prints them (draft-dflash start-up and a slot's end-of-request statistics).
DFLASH_LOG = """\
main: loading model
common_speculative_impl_draft_dflash: adding speculative implementation 'draft-dflash'
common_speculative_impl_draft_dflash: - n_max=3, n_min=0, p_min=0.75
common_speculative_impl_draft_dflash: - block_size=16, mask_token_id=248077, n_extract=4, sample_from_anchor=true
srv  load_model: the slot context can be shifted
slot print_timing: id  0 | task 0 | draft acceptance = 0.00000 (    0 accepted /   183 generated), mean len =  1.00
srv  log_server_r: request: POST /completion 127.0.0.1 200
"""


def test_dflash_settings_and_acceptance_are_read() -> None:
    parsed = parse_speculative_log(DFLASH_LOG)
    assert parsed["implementations"] == ["draft-dflash"]
    assert parsed["settings"]["draft-dflash"] == {
        "n_max": 3,
        "n_min": 0,
        "p_min": 0.75,
        "block_size": 16,
        "mask_token_id": 248077,
        "n_extract": 4,
        "sample_from_anchor": "true",
    }
    assert parsed["acceptance"] == [{"rate": 0.0, "accepted": 0, "generated": 183, "mean_len": 1.0}]
    assert "main: loading model" not in parsed["lines"]


def test_the_parser_reads_the_lines_a_record_keeps() -> None:
    """One list of words decides the lines a record keeps (the measurement) and those the parser reads (the
    analysis), in any case."""
    log = DFLASH_LOG + "llama_model_loader: MTP layers: 1\n"
    kept = speculative_lines(log)
    assert parse_speculative_log(log)["lines"] == kept
    assert "llama_model_loader: MTP layers: 1" in kept and "main: loading model" not in kept


def test_log_without_speculation_gives_empty_result() -> None:
    parsed = parse_speculative_log("main: loading model\nsrv  log_server_r: request: POST /completion 200\n")
    assert parsed == {"implementations": [], "settings": {}, "acceptance": [], "lines": []}


def test_derived_figures_with_drafting() -> None:
    timings = {
        "prompt_n": 120,
        "prompt_ms": 40.0,
        "prompt_per_second": 3000.0,
        "predicted_n": 64,
        "predicted_ms": 256.0,
        "predicted_per_token_ms": 4.0,
        "predicted_per_second": 250.0,
        "cache_n": 0,
        "draft_n": 40,
        "draft_n_accepted": 30,
    }
    figures = derived_figures(timings)
    assert figures["tokens_per_s"] == 250.0 and figures["predicted_n"] == 64
    assert figures["acceptance_rate"] == pytest.approx(0.75)


def test_derived_figures_without_drafting_never_divides_by_zero() -> None:
    timings = {"prompt_n": 5, "prompt_ms": 1.0, "predicted_n": 3, "predicted_ms": 10.0, "predicted_per_second": 300.0}
    figures = derived_figures(timings)
    assert figures["draft_n"] == 0 and figures["acceptance_rate"] is None


def test_a_record_keeps_the_sampling_defaults_a_server_says_it_applies() -> None:
    """vLLM 0.32's warning (vllm/config/model.py, get_diff_sampling_param) when a checkpoint's generation_config.json
    overrides its sampling defaults is kept beside the speculative lines; the parser reads no setting from it."""
    line = (
        "(APIServer pid=1) WARNING 12-05 22:40:01 [model.py:1893] Default vLLM sampling parameters have been "
        "overridden by the model's `generation_config.json`: `{'repetition_penalty': 1.3}`. If this is not "
        "intended, please relaunch vLLM instance with `--generation-config vllm`."
    )
    kept = speculative_lines(DFLASH_LOG + line + "\nmain: loading model\n")
    assert kept[-1] == line and "main: loading model" not in kept
    assert parse_speculative_log(DFLASH_LOG + line + "\n") == parse_speculative_log(DFLASH_LOG)
