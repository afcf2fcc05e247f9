"""Pieces of the HTML report: the memory-bandwidth ceiling and number links."""

from __future__ import annotations

import pandas as pd
import pytest

from specbench.html_report import ceiling_rows, linked


def test_ceiling_from_bus_width_and_memory_clock() -> None:
    device = {"nvml": "ok", "devices": [{"name": "NVIDIA A100-SXM4-80GB", "memory_bus_width_bits": 5120,
                                         "max_mem_clock_mhz": 1593}]}
    off = pd.DataFrame([{"task": "essay", "temperature": 0.0, "median_tokens_per_s": 126.0}])
    note, rows = ceiling_rows(device, 5_680_000_000, off)
    bandwidth = 5120 / 8 * 1593e6 * 2  # 2039 GB/s, the A100 80GB's published figure
    assert bandwidth / 1e9 == pytest.approx(2039, abs=1)
    assert "2039 GB/s" in note and f"{bandwidth / 5.68e9:.0f} tokens/s" in note
    assert rows == [["essay", "0.0", "126.0", f"{126 / (bandwidth / 5.68e9) * 100:.1f}%"]]


def test_no_ceiling_without_nvml() -> None:
    note, rows = ceiling_rows({"nvml": "unavailable", "devices": []}, 1, pd.DataFrame())
    assert rows == [] and "unknown" in note


def test_numbers_link_to_their_provenance_entry() -> None:
    numbers = {"speedup-essay-mtp-t0.0": {}}
    html = linked(1.0412, "speedup-essay-mtp-t0.0", numbers)
    assert 'id="n-speedup-essay-mtp-t0.0"' in html and 'href="#p-speedup-essay-mtp-t0.0"' in html and ">1.04<" in html
    assert linked(float("nan"), "other", numbers) == "n/a"
