"""Inspect a GGUF from its header: file type, MTP (nextn) layer, key metadata; and check it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gguf import LlamaFileType

from specbench.core.config.chat_template import GGUF, GGUF_KEY, missing_template
from specbench.core.config.sampling import gguf_defaults
from specbench.core.steps.entry import fail, logged_to
from specbench.core.steps.files import sha256_file, sha256_text, write_json_atomic
from specbench.models.gguf_header import GGUFArray, GGUFHeader, GGUFHeaderError, read_gguf_header

_KEY_METADATA = (
    "general.name",
    "general.basename",
    "general.size_label",
    "general.architecture",
    "general.file_type",
    "general.quantization_version",
    "tokenizer.ggml.pre",
    "tokenizer.ggml.model",
)
_ARCH_SUFFIXES = ("block_count", "context_length", "embedding_length", "nextn_predict_layers", "vocab_size")


class ModelCheckError(RuntimeError):
    """The GGUF is not what the study needs (wrong quantization, MTP layer missing, no chat template unasked)."""


def _field_value(header: GGUFHeader, key: str) -> Any:
    value = header.value(key)
    return f"<array of {value.length}>" if isinstance(value, GGUFArray) else value


def chat_template_facts(header: GGUFHeader) -> dict[str, Any]:
    """Whether the GGUF carries a chat template (tokenizer.chat_template), and its length and sha256."""
    text = header.value(GGUF_KEY)
    if not isinstance(text, str) or not text:
        return {"present": False, "chars": 0, "sha256": None}
    return {"present": True, "chars": len(text), "sha256": sha256_text(text)}


DRAFT_ARCHITECTURES = ("dflash",)  # draft GGUFs whose header says how they draft


def draft_facts(header: GGUFHeader) -> dict[str, Any] | None:
    """A draft model's own figures as its GGUF states them (None for any other model): its layer count, block size,
    mask token id and the target layers whose outputs it reads (llama.cpp's numbering: a layer's input, 1-based)."""
    arch = header.value("general.architecture")
    if arch not in DRAFT_ARCHITECTURES:
        return None
    layers = header.value(f"{arch}.target_layers")
    return {
        "architecture": arch,
        "layers": header.value(f"{arch}.block_count"),
        "block_size": header.value(f"{arch}.block_size"),
        "mask_token_id": header.value("tokenizer.ggml.mask_token_id"),
        "target_layers": list(layers.items) if isinstance(layers, GGUFArray) and layers.items is not None else None,
    }


def file_type_name(value: int | None) -> str | None:
    """'MOSTLY_Q4_K_M' for 15, etc."""
    if value is None:
        return None
    try:
        return LlamaFileType(value).name
    except ValueError:
        return f"unknown({value})"


def inspect_gguf(path: Path, with_sha256: bool = True) -> dict[str, Any]:
    """What a GGUF holds: size, sha256, architecture, file type, MTP layer presence, chat template, key metadata,
    the sampling defaults it carries (None where it carries none).

    Raises ModelCheckError, naming the file, when it is not a complete GGUF (bad header, truncated data)."""
    try:
        header = read_gguf_header(path)
    except GGUFHeaderError as error:
        raise ModelCheckError(f"{path} is not a readable GGUF file ({error.reason})") from None
    except OSError as error:
        raise ModelCheckError(f"{path} is not a readable GGUF file ({type(error).__name__}: {error})") from None
    ends = [tensor.data_offset + tensor.n_bytes for tensor in header.tensors]
    size = path.stat().st_size
    if ends and max(ends) > size:
        raise ModelCheckError(f"{path} is truncated: its tensors need {max(ends)} bytes, the file has {size}")
    arch = _field_value(header, "general.architecture")
    metadata = {key: _field_value(header, key) for key in _KEY_METADATA}
    if arch:
        metadata.update({f"{arch}.{s}": _field_value(header, f"{arch}.{s}") for s in _ARCH_SUFFIXES})
    names = [tensor.name for tensor in header.tensors]
    nextn_tensors = [name for name in names if ".nextn." in name]
    nextn_layers = metadata.get(f"{arch}.nextn_predict_layers") if arch else None
    return {
        "path": str(path),
        "size_bytes": path.stat().st_size,
        "sha256": sha256_file(path) if with_sha256 else None,
        "architecture": arch,
        "file_type": metadata.get("general.file_type"),
        "file_type_name": file_type_name(metadata.get("general.file_type")),
        "tensor_count": len(names),
        "metadata": metadata,
        "mtp": {
            "nextn_predict_layers": nextn_layers,
            "nextn_tensor_count": len(nextn_tensors),
            "nextn_tensors_sample": nextn_tensors[:8],
            "present": bool(nextn_layers) and nextn_layers >= 1 and len(nextn_tensors) > 0,
        },
        "chat_template": chat_template_facts(header),
        "draft": draft_facts(header),
        "sampling": gguf_defaults(lambda key: _field_value(header, key)),
    }


def check_model(
    info: dict[str, Any], *, expected_file_type: str | None, require_mtp: bool, chat_template: str | None = None
) -> None:
    """Fail with a plain message when the GGUF is not the model the config needs (``chat_template``: the target's
    setting, models.target.chat_template; None for a model whose template is never used, the draft)."""
    if expected_file_type and info["file_type_name"] != f"MOSTLY_{expected_file_type}":
        raise ModelCheckError(
            f"{info['path']}: file type is {info['file_type_name']}, expected MOSTLY_{expected_file_type}"
        )
    if require_mtp and not info["mtp"]["present"]:
        raise ModelCheckError(
            f"{info['path']} has no MTP layer (nextn_predict_layers={info['mtp']['nextn_predict_layers']}, "
            f"{info['mtp']['nextn_tensor_count']} nextn tensors): --spec-type draft-mtp cannot run on it. "
            "Convert the original weights with the pinned convert_hf_to_gguf.py (which keeps MTP by default, "
            "never --no-mtp); ready-made GGUFs often drop the layer."
        )
    if chat_template == GGUF and not info["chat_template"]["present"]:
        raise ModelCheckError(missing_template(info["path"]))


def verify_step(
    gguf: Path,
    out: Path,
    *,
    role: str,
    source: dict[str, Any],
    expected_file_type: str | None,
    require_mtp: bool,
    chat_template: str | None,
    log: Path,
) -> None:
    """The model manifest, written only when the GGUF is what the config needs (quantization, MTP layer, a chat
    template unless the config says how to render prompts without the GGUF's)."""
    with logged_to(log):
        try:
            info = inspect_gguf(gguf)
            info["source"] = source
            print(
                {k: info[k] for k in ("path", "file_type_name", "tensor_count", "mtp", "chat_template", "size_bytes")}
            )
            check_model(
                info, expected_file_type=expected_file_type, require_mtp=require_mtp, chat_template=chat_template
            )
        except ModelCheckError as error:
            fail(f"model '{role}': {error}", log)
        write_json_atomic(out, info)
