"""Tensors by name, shape and initialiser: the random target and DFlash draft, the tiny vision tower, and the
safetensors writer (numpy PCG64 seeded per tensor name, so the same seed gives byte-identical files)."""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from specbench.tiny.layout import (
    CONV_KERNEL,
    DFLASH_LAYERS,
    HEAD_DIM,
    HIDDEN,
    INTERMEDIATE,
    LAYER_TYPES,
    LINEAR_K_DIM,
    LINEAR_K_HEADS,
    LINEAR_V_DIM,
    LINEAR_V_HEADS,
    MASK_TOKEN_ID,
    MTP_LAYERS,
    N_BPE,
    N_HEAD,
    N_HEAD_KV,
    SHARDS,
    VISION,
    VOCAB_SIZE,
    WEIGHT_STD,
    as_json,
)

# With tied embeddings the current token's own embedding, still in the residual
# stream, adds to its logit; EMBED_STD against WEIGHT_STD sets how sticky tokens
# are. 0.019 gives some varied tokens, then (mostly within 30-160 tokens) a loop
# on one token, so ngram-mod gets to draft. At 0.02 greedy output sticks within
# 2-4 tokens; at 0.02 with WEIGHT_STD 0.022 it mostly never repeats within 256.
EMBED_STD = 0.019


CONV_STD = 0.3


Init = Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]


def normal(std: float) -> Init:
    return lambda rng, shape: rng.standard_normal(shape, dtype=np.float32) * np.float32(std)


def const(value: float) -> Init:
    return lambda rng, shape: np.full(shape, value, dtype=np.float32)


def _a_log(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    # gated-delta-net decay: A = -exp(A_log) with A_log = log(U(1, 16)), as transformers initialises it
    return np.log(rng.uniform(1.0, 16.0, size=shape)).astype(np.float32)


def _embedding(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    weight = normal(EMBED_STD)(rng, shape)
    mask_row = weight[MASK_TOKEN_ID].copy()
    weight[N_BPE:] = 0.0  # special and padding ids: zero logits, never the greedy pick
    weight[MASK_TOKEN_ID] = mask_row  # the DFlash draft embeds its mask token
    return weight


def mlp(prefix: str) -> Iterator[tuple[str, tuple[int, ...], Init]]:
    w = normal(WEIGHT_STD)
    yield f"{prefix}mlp.gate_proj.weight", (INTERMEDIATE, HIDDEN), w
    yield f"{prefix}mlp.up_proj.weight", (INTERMEDIATE, HIDDEN), w
    yield f"{prefix}mlp.down_proj.weight", (HIDDEN, INTERMEDIATE), w


def qwen35_layer(prefix: str, layer_type: str) -> Iterator[tuple[str, tuple[int, ...], Init]]:
    w, zero = normal(WEIGHT_STD), const(0.0)  # Qwen3.5 RMSNorm scales by (1 + weight)
    if layer_type == "linear_attention":
        key_dim, value_dim = LINEAR_K_HEADS * LINEAR_K_DIM, LINEAR_V_HEADS * LINEAR_V_DIM
        conv_dim = 2 * key_dim + value_dim
        yield f"{prefix}linear_attn.in_proj_qkv.weight", (conv_dim, HIDDEN), w
        yield f"{prefix}linear_attn.in_proj_z.weight", (value_dim, HIDDEN), w
        yield f"{prefix}linear_attn.in_proj_b.weight", (LINEAR_V_HEADS, HIDDEN), w
        yield f"{prefix}linear_attn.in_proj_a.weight", (LINEAR_V_HEADS, HIDDEN), w
        yield f"{prefix}linear_attn.conv1d.weight", (conv_dim, 1, CONV_KERNEL), normal(CONV_STD)
        yield f"{prefix}linear_attn.dt_bias", (LINEAR_V_HEADS,), const(1.0)
        yield f"{prefix}linear_attn.A_log", (LINEAR_V_HEADS,), _a_log
        yield f"{prefix}linear_attn.norm.weight", (LINEAR_V_DIM,), const(1.0)  # plain-weight gated norm
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
    yield from mlp(prefix)
    yield f"{prefix}input_layernorm.weight", (HIDDEN,), zero
    yield f"{prefix}post_attention_layernorm.weight", (HIDDEN,), zero


def target_tensors() -> Iterator[tuple[str, tuple[int, ...], Init]]:
    """(name, shape, init) of every tensor of the tiny target, MTP block included."""
    zero = const(0.0)
    yield "model.embed_tokens.weight", (VOCAB_SIZE, HIDDEN), _embedding
    for index, layer_type in enumerate(LAYER_TYPES):
        yield from qwen35_layer(f"model.layers.{index}.", layer_type)
    yield "model.norm.weight", (HIDDEN,), zero
    # MTP block, named as in the real Qwen3.5 checkpoints
    yield "mtp.fc.weight", (HIDDEN, 2 * HIDDEN), normal(WEIGHT_STD)
    yield "mtp.pre_fc_norm_embedding.weight", (HIDDEN,), zero
    yield "mtp.pre_fc_norm_hidden.weight", (HIDDEN,), zero
    yield "mtp.norm.weight", (HIDDEN,), zero
    for index in range(MTP_LAYERS):
        yield from qwen35_layer(f"mtp.layers.{index}.", "full_attention")


def dflash_tensors(n_target_layers: int) -> Iterator[tuple[str, tuple[int, ...], Init]]:
    """(name, shape, init) of every tensor of the tiny DFlash draft (Qwen3 layers, plain RMSNorm weights)."""
    w, one = normal(WEIGHT_STD), const(1.0)
    for index in range(DFLASH_LAYERS):
        prefix = f"layers.{index}."
        yield f"{prefix}self_attn.q_proj.weight", (N_HEAD * HEAD_DIM, HIDDEN), w
        yield f"{prefix}self_attn.k_proj.weight", (N_HEAD_KV * HEAD_DIM, HIDDEN), w
        yield f"{prefix}self_attn.v_proj.weight", (N_HEAD_KV * HEAD_DIM, HIDDEN), w
        yield f"{prefix}self_attn.o_proj.weight", (HIDDEN, N_HEAD * HEAD_DIM), w
        yield f"{prefix}self_attn.q_norm.weight", (HEAD_DIM,), one
        yield f"{prefix}self_attn.k_norm.weight", (HEAD_DIM,), one
        yield from mlp(prefix)
        yield f"{prefix}input_layernorm.weight", (HIDDEN,), one
        yield f"{prefix}post_attention_layernorm.weight", (HIDDEN,), one
    yield "fc.weight", (HIDDEN, HIDDEN * n_target_layers), w
    yield "hidden_norm.weight", (HIDDEN,), one
    yield "norm.weight", (HIDDEN,), one


INDEX = "model.safetensors.index.json"


def shard_names(count: int) -> list[str]:
    """The shard files' names, as the real Qwen3.5 checkpoints name them."""
    return [f"model.safetensors-{i:05d}-of-{count:05d}.safetensors" for i in range(1, count + 1)]


def _materialize(specs: Iterator[tuple[str, tuple[int, ...], Init]], seed: int) -> dict:
    import torch

    tensors = {}
    for name, shape, init in specs:
        rng = np.random.default_rng([seed, zlib.crc32(name.encode("utf-8"))])
        tensors[name] = torch.from_numpy(init(rng, shape)).to(torch.bfloat16)
    return tensors


def _save(tensors: dict, path: Path) -> None:
    from safetensors.torch import save_file

    save_file(tensors, str(path), metadata={"format": "pt"})
    path.chmod(0o644)  # safetensors creates the file owner-only


def write_safetensors(path: Path, specs: Iterator[tuple[str, tuple[int, ...], Init]], seed: int) -> None:
    """One ``model.safetensors`` file (the DFlash draft's layout)."""
    _save(_materialize(specs, seed), path)


def write_sharded(
    out_dir: Path, specs: Iterator[tuple[str, tuple[int, ...], Init]], seed: int, shards: int = SHARDS
) -> None:
    """The tensors in ``shards`` files (consecutive runs of tensors, in the order given) plus the index that maps each
    tensor to its file, as the real target is stored. The tensors' bytes do not depend on the number of shards."""
    tensors = _materialize(specs, seed)
    names = list(tensors)
    weight_map: dict[str, str] = {}
    for file, group in zip(shard_names(shards), np.array_split(np.arange(len(names)), shards), strict=True):
        part = {names[i]: tensors[names[i]] for i in group}
        if not part:
            raise ValueError(f"{len(names)} tensors are too few for {shards} shards")
        _save(part, Path(out_dir) / file)
        weight_map.update(dict.fromkeys(part, file))
    total = sum(t.numel() * t.element_size() for t in tensors.values())
    (Path(out_dir) / INDEX).write_bytes(as_json({"metadata": {"total_size": total}, "weight_map": weight_map}))


def tensor_files(directory: Path) -> dict[str, Path]:
    """Where each tensor of a checkpoint lies: through its shard index, else in its one ``model.safetensors``."""
    directory = Path(directory)
    index = directory / INDEX
    if index.is_file():
        weight_map = json.loads(index.read_text(encoding="utf-8"))["weight_map"]
        return {name: directory / file for name, file in weight_map.items()}
    from safetensors import safe_open

    single = directory / "model.safetensors"
    with safe_open(str(single), framework="pt") as f:
        return dict.fromkeys(f.keys(), single)


def read_tensor(directory: Path, name: str) -> np.ndarray | None:
    """One tensor of a checkpoint as float64 (None when it has no such tensor)."""
    from safetensors import safe_open

    file = tensor_files(directory).get(name)
    if file is None:
        return None
    with safe_open(str(file), framework="pt") as f:
        return f.get_tensor(name).float().numpy().astype(np.float64)


def load_checkpoint(directory: Path) -> dict:
    """Every tensor of a checkpoint (sharded or not), by name."""
    from safetensors.torch import load_file

    tensors: dict = {}
    for file in sorted(set(tensor_files(directory).values())):
        tensors.update(load_file(str(file)))
    return tensors


def fixed(array: np.ndarray) -> Init:
    def init(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        if array.shape != shape:
            raise ValueError(f"constructed tensor has shape {array.shape}, expected {shape}")
        return array

    return init


def silenced(specs: Iterator[tuple[str, tuple[int, ...], Init]]) -> Iterator[tuple[str, tuple[int, ...], Init]]:
    """Zero every block's output projection (attention, linear attention, MLP): the residual stream passes through."""
    for name, shape, init in specs:
        if name.endswith(("linear_attn.out_proj.weight", "self_attn.o_proj.weight", "mlp.down_proj.weight")):
            init = const(0.0)
        yield name, shape, init


def vision_tensors() -> Iterator[tuple[str, tuple[int, ...], Init]]:
    """A tiny Qwen3.5 vision tower under the real checkpoint's names (the text GGUF leaves it out)."""
    w, one, zero = normal(WEIGHT_STD), const(1.0), const(0.0)
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
