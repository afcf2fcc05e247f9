"""GGUF inspection and the model checks, on small GGUF files written with the real gguf package."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from gguf import GGMLQuantizationType, GGUFEndian, GGUFReader, GGUFValueType, GGUFWriter, LlamaFileType

from specbench.core.config import chat_template
from specbench.core.steps.files import sha256_file, sha256_text
from specbench.models.gguf_header import GGUFArray, GGUFHeaderError, read_gguf_header
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


# --- the header reader against the gguf package's reader ------------------------------------------------------------

TOKENS = ["", "<|im_start|>", "Ġthe", "日本語", "é"] + [f"tok{i}" * (1 + i % 7) for i in range(30_000)]


def _write_full(path: Path, *, endianess: GGUFEndian = GGUFEndian.LITTLE, alignment: int | None = None) -> Path:
    """A GGUF with a tokenizer-sized string array, int and float arrays, a nested array, scalars of every kind,
    and tensors of several ggml types."""
    writer = GGUFWriter(path, "qwen35", endianess=endianess)
    if alignment is not None:
        writer.add_custom_alignment(alignment)
    writer.add_name("full model")
    writer.add_chat_template(TEMPLATE)
    writer.add_token_list(TOKENS)
    writer.add_token_types([i % 6 for i in range(len(TOKENS))])
    writer.add_token_scores([i / 3 for i in range(len(TOKENS))])
    writer.add_token_merges([f"t{i} o{i}" for i in range(12_000)])
    writer.add_array("test.nested", [[1, 2, 3], [4]])
    writer.add_array("test.small", [1, 2, 3])
    writer.add_uint64("test.u64", 2**63 + 5)
    writer.add_int64("test.i64", -(2**40))
    writer.add_bool("test.yes", True)
    writer.add_bool("test.no", False)
    writer.add_float32("test.f32", 0.1)
    writer.add_float64("test.f64", 0.1)
    writer.add_int8("test.i8", -3)
    writer.add_uint16("test.u16", 65535)
    writer.add_string("test.empty", "")
    writer.add_file_type(LlamaFileType.MOSTLY_Q8_0)
    writer.add_tensor("token_embd.weight", np.zeros((8, 64), dtype=np.float16))
    writer.add_tensor("blk.0.attn_q.weight", np.zeros((4, 2 * 34), dtype=np.uint8), raw_dtype=GGMLQuantizationType.Q8_0)
    writer.add_tensor("blk.0.attn_norm.weight", np.ones(3, dtype=np.float32))
    writer.add_tensor("blk.0.scalar", np.ones((2, 3, 5), dtype=np.int32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def _assert_agrees_with_gguf_reader(path: Path) -> None:
    reader, header = GGUFReader(path), read_gguf_header(path)
    keys = [key for key in reader.fields if not key.startswith("GGUF.")]
    assert list(header.fields) == keys
    for key in keys:
        field, ours = reader.fields[key], header.fields[key]
        assert ours.type == field.types[0], key
        if ours.type == GGUFValueType.ARRAY:
            assert isinstance(ours.value, GGUFArray) and ours.value.element_type == field.types[1], key
            if ours.value.element_type != GGUFValueType.ARRAY:  # the gguf reader counts a nested array's leaves
                assert ours.value.length == len(field.data), key
            if ours.value.items is not None:  # a short numeric array keeps its elements
                assert list(ours.value.items) == field.contents(), key
        else:
            assert ours.value == field.contents() and type(ours.value) is type(field.contents()), key
    assert header.alignment == reader.alignment and header.data_offset == reader.data_offset
    assert [(t.name, t.shape, t.ggml_type, t.data_offset, t.n_elements, t.n_bytes) for t in header.tensors] == [
        (t.name, tuple(t.shape.tolist()), t.tensor_type, t.data_offset, t.n_elements, t.n_bytes) for t in reader.tensors
    ]


@pytest.mark.parametrize(
    ("endianess", "alignment"), [(GGUFEndian.LITTLE, None), (GGUFEndian.LITTLE, 64), (GGUFEndian.BIG, 128)]
)
def test_the_header_reader_agrees_with_the_gguf_reader(tmp_path: Path, endianess: GGUFEndian, alignment: int) -> None:
    path = _write_full(tmp_path / "full.gguf", endianess=endianess, alignment=alignment)
    _assert_agrees_with_gguf_reader(path)
    header = read_gguf_header(path)
    assert header.alignment == (alignment or 32) and header.data_offset % header.alignment == 0
    assert header.value("tokenizer.ggml.tokens") == GGUFArray(GGUFValueType.STRING, len(TOKENS))
    assert header.value("tokenizer.ggml.merges") == GGUFArray(GGUFValueType.STRING, 12_000)
    assert header.value("tokenizer.ggml.scores") == GGUFArray(GGUFValueType.FLOAT32, len(TOKENS))
    assert header.value("test.nested") == GGUFArray(GGUFValueType.ARRAY, 2)
    assert header.value("test.small") == GGUFArray(GGUFValueType.INT32, 3, (1, 2, 3))
    assert header.value("test.u64") == 2**63 + 5 and header.value("test.yes") is True
    assert header.value("test.f32") == float(np.float32(0.1)) and header.value("test.f64") == 0.1
    assert header.value("no.such.key") is None
    q8 = header.tensors[1]
    assert (q8.shape, q8.ggml_type, q8.n_bytes) == ((64, 4), GGMLQuantizationType.Q8_0, 4 * 2 * 34)
    info = inspect_gguf(path)
    assert info["metadata"]["general.name"] == "full model" and info["file_type_name"] == "MOSTLY_Q8_0"
    assert info["chat_template"]["present"] and info["tensor_count"] == 4


def test_the_small_models_agree_with_the_gguf_reader(tmp_path: Path) -> None:
    _assert_agrees_with_gguf_reader(_write(tmp_path / "m.gguf", nextn_layers=1, nextn_tensors=True, file_type=15))
    _assert_agrees_with_gguf_reader(
        _write(tmp_path / "b.gguf", nextn_layers=None, nextn_tensors=False, file_type=15, template=None)
    )


@pytest.fixture(scope="module")
def full_gguf(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, int]]:
    """The full GGUF, and where to cut it: inside the token array, inside its last token, inside the tensor table,
    inside the last tensor's data."""
    path = _write_full(tmp_path_factory.mktemp("full") / "full.gguf")
    reader = GGUFReader(path)
    last = reader.tensors[-1]
    return path, {
        "metadata": int(reader.fields["tokenizer.ggml.tokens"].offset) + 50_000,
        "last token": int(reader.fields["tokenizer.ggml.token_type"].offset) - 2,
        "tensor table": int(reader.tensors[2].field.offset) + 5,
        "data": int(last.data_offset) + int(last.n_bytes) // 2,
    }


@pytest.mark.parametrize("where", ["metadata", "last token", "tensor table", "data"])
def test_a_truncated_gguf_is_refused_naming_the_file(
    tmp_path: Path, full_gguf: tuple[Path, dict[str, int]], where: str
) -> None:
    full, cut_points = full_gguf
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(full.read_bytes()[: cut_points[where]])
    with pytest.raises(ModelCheckError) as refused:
        inspect_gguf(cut)
    message = str(refused.value)
    assert str(cut) in message and "\n" not in message
    if where == "data":
        assert "is truncated: its tensors need" in message
        assert read_gguf_header(cut).tensors == read_gguf_header(full).tensors
    else:
        assert "is not a readable GGUF file" in message and "runs past the end of the file" in message
        tokens, table = "metadata 'tokenizer.ggml.tokens'", "tensor 2's name"
        assert {"metadata": tokens, "last token": tokens, "tensor table": table}[where] in message
        with pytest.raises(GGUFHeaderError, match="runs past the end of the file"):
            read_gguf_header(cut)


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda data: b"XXXX" + data[4:], "bad magic b'XXXX'"),
        (lambda data: data[:4] + (1).to_bytes(4, "little") + data[8:], "GGUF version 1 is not supported"),
        (lambda data: data[:4] + (4).to_bytes(4, "little") + data[8:], "GGUF version 4 is not supported"),
        (lambda data: data[:6], "too few for a GGUF header"),
        (lambda data: b"", "the file is empty"),
    ],
)
def test_a_gguf_with_a_bad_header_is_refused_naming_the_file(tmp_path: Path, damage, reason: str) -> None:
    path = _write(tmp_path / "m.gguf", nextn_layers=1, nextn_tensors=True, file_type=15)
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(damage(path.read_bytes()))
    with pytest.raises(
        ModelCheckError, match=f"^{re.escape(str(broken))} is not a readable GGUF file .*{re.escape(reason)}"
    ):
        inspect_gguf(broken)
    with pytest.raises(GGUFHeaderError, match=re.escape(reason)):
        read_gguf_header(broken)


def test_a_draft_gguf_states_its_own_layers_block_size_mask_and_target_layers(tmp_path: Path) -> None:
    """What llama.cpp b11223's converter writes for a DFlash draft, read back into the manifest's draft facts."""
    from specbench.report.sections.environment import describe_draft

    path = tmp_path / "draft.gguf"
    writer = GGUFWriter(path, "dflash")
    writer.add_block_count(5)
    writer.add_uint32("dflash.block_size", 16)
    writer.add_array("dflash.target_layers", [2, 9, 17, 24, 32])
    writer.add_uint32("tokenizer.ggml.mask_token_id", 248_070)
    writer.add_tensor("blk.0.attn_norm.weight", np.ones(4, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    facts = inspect_gguf(path)["draft"]
    assert facts == {
        "architecture": "dflash",
        "layers": 5,
        "block_size": 16,
        "mask_token_id": 248_070,
        "target_layers": [2, 9, 17, 24, 32],
    }
    assert describe_draft(facts) == (
        "dflash: 5 layers, block size 16, mask token id 248070, target layers 2, 9, 17, 24, 32 (read from the GGUF)"
    )
    assert describe_draft(None) == "not recorded"
    target = _write(tmp_path / "t.gguf", nextn_layers=1, nextn_tensors=True, file_type=15)
    assert inspect_gguf(target)["draft"] is None


def test_the_sampling_defaults_a_gguf_carries_are_read_as_llama_server_applies_them(tmp_path: Path) -> None:
    """The converter writes generation_config.json's sampling into general.sampling.* (gguf's Metadata); a GGUF
    without it carries none, and llama.cpp's own defaults apply (core.config.sampling)."""
    path = tmp_path / "m.gguf"
    writer = GGUFWriter(path, "qwen35")
    writer.add_sampling_top_k(20)
    writer.add_sampling_top_p(0.8)
    writer.add_sampling_penalty_repeat(1.05)
    writer.add_tensor("token_embd.weight", np.zeros((8, 4), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    sampling = inspect_gguf(path)["sampling"]
    assert sampling["top_k"] == 20 and sampling["min_p"] is None
    assert sampling["top_p"] == pytest.approx(0.8) and sampling["repeat_penalty"] == pytest.approx(1.05)
    plain = _write(tmp_path / "plain.gguf", nextn_layers=None, nextn_tensors=False, file_type=15)
    assert set(inspect_gguf(plain)["sampling"].values()) == {None}
