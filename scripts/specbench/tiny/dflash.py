"""A constructed DFlash draft that predicts every position of its block for a constructed target, from the
directions read back out of that target's weights."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from specbench.tiny.layout import (
    DFLASH_BLOCK_SIZE,
    DFLASH_TARGET_LAYER_IDS,
    HEAD_DIM,
    HIDDEN,
    INTERMEDIATE,
    LM_PREFIX,
    MASK_TOKEN_ID,
    N_HEAD,
    N_HEAD_KV,
    ROPE_THETA,
    WEIGHT_STD,
)
from specbench.tiny.weights import (
    Init,
    const,
    fixed,
    normal,
    read_tensor,
)


def dflash_geometry(target_dir: Path) -> dict[str, np.ndarray] | None:
    """The directions a DFlash draft needs, read from a constructed target's weights (None for a random target).

    ``span``: (HIDDEN, CYCLE_LEN) the cycle directions (lm_head rows); ``step``: (HIDDEN, HIDDEN) the map taking each
    cycle direction to the next one's (what one step of the target's function does); ``common``: the direction all
    real token embeddings share; ``mask``: the mask token's embedding; ``sink``: a spare orthogonal direction.
    """
    head = read_tensor(target_dir, "lm_head.weight")
    if head is None:
        return None
    embed = read_tensor(target_dir, f"{LM_PREFIX}embed_tokens.weight")
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

    w, one, zero = normal(WEIGHT_STD), const(1.0), const(0.0)
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
        yield f"{prefix}self_attn.q_proj.weight", (N_HEAD * HEAD_DIM, HIDDEN), fixed(f32(wq))
        yield f"{prefix}self_attn.k_proj.weight", (N_HEAD_KV * HEAD_DIM, HIDDEN), fixed(f32(wk))
        yield f"{prefix}self_attn.v_proj.weight", (N_HEAD_KV * HEAD_DIM, HIDDEN), fixed(f32(wv))
        yield f"{prefix}self_attn.o_proj.weight", (HIDDEN, N_HEAD * HEAD_DIM), fixed(f32(wo))
        yield f"{prefix}self_attn.q_norm.weight", (HEAD_DIM,), fixed(f32(q_norm))
        yield f"{prefix}self_attn.k_norm.weight", (HEAD_DIM,), fixed(f32(k_norm))
        yield f"{prefix}mlp.gate_proj.weight", (INTERMEDIATE, HIDDEN), w
        yield f"{prefix}mlp.up_proj.weight", (INTERMEDIATE, HIDDEN), w
        yield f"{prefix}mlp.down_proj.weight", (HIDDEN, INTERMEDIATE), zero
        yield f"{prefix}input_layernorm.weight", (HIDDEN,), one
        yield f"{prefix}post_attention_layernorm.weight", (HIDDEN,), one
    yield "fc.weight", (HIDDEN, HIDDEN * len(DFLASH_TARGET_LAYER_IDS)), fixed(f32(fc))
    yield "hidden_norm.weight", (HIDDEN,), one
    yield "norm.weight", (HIDDEN,), one
