"""GGUF inspection and the model checks, on small GGUF files written with the real gguf package."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from gguf import GGUFWriter, LlamaFileType

from specbench.core.files import sha256_file
from specbench.models.verify import ModelCheckError, check_model, inspect_gguf


def _write(path: Path, *, nextn_layers: int | None, nextn_tensors: bool, file_type: int) -> Path:
    writer = GGUFWriter(path, "qwen35")
    writer.add_name("test model")
    writer.add_file_type(file_type)
    writer.add_block_count(2)
    if nextn_layers is not None:
        writer.add_uint32("qwen35.nextn_predict_layers", nextn_layers)
    writer.add_tensor("token_embd.weight", np.zeros((8, 4), dtype=np.float32))
    writer.add_tensor("blk.0.attn_norm.weight", np.ones(4, dtype=np.float32))
    if nextn_tensors:
        writer.add_tensor("blk.1.nextn.eh_proj.weight", np.zeros((4, 8), dtype=np.float32))
        writer.add_tensor("blk.1.nextn.enorm.weight", np.ones(4, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def test_model_with_mtp_layer(tmp_path: Path) -> None:
    path = _write(tmp_path / "m.gguf", nextn_layers=1, nextn_tensors=True, file_type=LlamaFileType.MOSTLY_Q4_K_M)
    info = inspect_gguf(path)
    assert info["architecture"] == "qwen35"
    assert info["file_type_name"] == "MOSTLY_Q4_K_M"
    assert info["metadata"]["general.name"] == "test model"
    assert info["metadata"]["qwen35.block_count"] == 2
    assert info["tensor_count"] == 4
    assert info["mtp"] == {
        "nextn_predict_layers": 1,
        "nextn_tensor_count": 2,
        "nextn_tensors_sample": ["blk.1.nextn.eh_proj.weight", "blk.1.nextn.enorm.weight"],
        "present": True,
    }
    assert info["sha256"] == sha256_file(path) and info["size_bytes"] == path.stat().st_size
    check_model(info, expected_file_type="Q4_K_M", require_mtp=True)


@pytest.mark.parametrize(("layers", "tensors"), [(None, False), (1, False), (0, True)])
def test_missing_mtp_layer_fails_with_the_study_warning(tmp_path: Path, layers: int | None, tensors: bool) -> None:
    path = _write(tmp_path / "m.gguf", nextn_layers=layers, nextn_tensors=tensors, file_type=15)
    info = inspect_gguf(path)
    assert info["mtp"]["present"] is False
    check_model(info, expected_file_type="Q4_K_M", require_mtp=False)  # allowed when not required
    with pytest.raises(ModelCheckError, match="has no MTP layer.*never --no-mtp"):
        check_model(info, expected_file_type="Q4_K_M", require_mtp=True)


def test_wrong_quantization_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path / "m.gguf", nextn_layers=1, nextn_tensors=True, file_type=LlamaFileType.MOSTLY_BF16)
    with pytest.raises(ModelCheckError, match="file type is MOSTLY_BF16, expected MOSTLY_Q4_K_M"):
        check_model(inspect_gguf(path), expected_file_type="Q4_K_M", require_mtp=True)
