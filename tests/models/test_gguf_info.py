"""GGUF inspection and the model checks, on small GGUF files written with the real gguf package."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from gguf import GGUFWriter, LlamaFileType

from specbench.core import chat_template
from specbench.core.files import sha256_file, sha256_text
from specbench.models.verify import ModelCheckError, check_model, inspect_gguf, verify_step

TEMPLATE = "{% for message in messages %}<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>\n{% endfor %}"


def _write(
    path: Path, *, nextn_layers: int | None, nextn_tensors: bool, file_type: int, template: str | None = TEMPLATE
) -> Path:
    writer = GGUFWriter(path, "qwen35")
    writer.add_name("test model")
    if template is not None:
        writer.add_chat_template(template)
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
    assert info["chat_template"] == {"present": True, "chars": len(TEMPLATE), "sha256": sha256_text(TEMPLATE)}
    check_model(info, expected_file_type="Q4_K_M", require_mtp=True, chat_template="gguf")


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


def test_a_target_without_a_chat_template_is_refused_in_one_line_naming_the_key(tmp_path: Path) -> None:
    path = _write(tmp_path / "base.gguf", nextn_layers=None, nextn_tensors=False, file_type=15, template=None)
    info = inspect_gguf(path)
    assert info["chat_template"] == {"present": False, "chars": 0, "sha256": None}
    with pytest.raises(ModelCheckError) as refused:
        check_model(info, expected_file_type=None, require_mtp=False, chat_template="gguf")
    message = str(refused.value)
    assert "\n" not in message and str(path) in message and "tokenizer.chat_template" in message
    assert "models.target.chat_template" in message and "none" in message and "chatml" in message
    # the config saying how to render the prompts accepts it: a built-in template by name, or none
    for setting in ("chatml", "gemma", "none"):
        check_model(info, expected_file_type=None, require_mtp=False, chat_template=setting)
    check_model(info, expected_file_type=None, require_mtp=False, chat_template=None)  # a draft: never checked


def test_a_model_with_its_own_template_passes_under_every_setting(tmp_path: Path) -> None:
    info = inspect_gguf(_write(tmp_path / "m.gguf", nextn_layers=None, nextn_tensors=False, file_type=15))
    for setting in ("gguf", "chatml", "none"):
        check_model(info, expected_file_type=None, require_mtp=False, chat_template=setting)


def test_the_verify_step_refuses_it_with_one_line_and_writes_no_manifest(tmp_path: Path, capfd) -> None:
    path = _write(tmp_path / "base.gguf", nextn_layers=None, nextn_tensors=False, file_type=15, template=None)
    out, log = tmp_path / "manifest.json", tmp_path / "verify.log"
    with pytest.raises(SystemExit):
        verify_step(
            path,
            out,
            role="target",
            source={},
            expected_file_type=None,
            require_mtp=False,
            chat_template="gguf",
            log=log,
        )
    [line] = capfd.readouterr().err.splitlines()
    assert line == f"specbench: model 'target': {chat_template.missing_template(str(path))}"
    assert not out.exists() and log.read_text().splitlines()[-1] == line
    verify_step(
        path, out, role="target", source={}, expected_file_type=None, require_mtp=False, chat_template="none", log=log
    )
    assert out.exists()
