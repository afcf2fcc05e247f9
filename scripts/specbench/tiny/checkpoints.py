"""Write a tiny target or DFlash draft checkpoint directory (what the workflow's tiny rules call), and the command
line ``python -m specbench.tiny``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from specbench.core.steps.entry import logged_to
from specbench.tiny.construction import KINDS, Construction, constructed_target_tensors
from specbench.tiny.dflash import constructed_dflash_tensors, dflash_constructed_layers, dflash_geometry
from specbench.tiny.layout import (
    CHAT_TEMPLATE,
    DFLASH_TARGET_LAYER_IDS,
    HIDDEN,
    RANDOM_CHAT_TEMPLATE,
    VOCAB_SIZE,
    as_json,
    conditional_config,
    dflash_config,
    merges_txt,
    target_config,
    tokenizer_config,
    tokenizer_json,
    vocab_json,
)
from specbench.tiny.weights import (
    dflash_tensors,
    target_tensors,
    write_safetensors,
    write_sharded,
)


def write_tiny_target(out_dir: Path, *, seed: int = 0, kind: str = "random") -> Path:
    """Write the tiny Qwen3.5 + MTP target checkpoint into ``out_dir`` in the files the real Qwen/Qwen3.5-9B has
    (config, chat_template.jinja, tokenizer files, four weight shards and their index; no generation_config.json);
    return ``out_dir``.

    ``kind``: ``random`` (random weights, ``Qwen3_5ForCausalLM``), or ``agree`` / ``half`` (constructed weights
    whose MTP block agrees with the target on all / half of the cycle tokens, in the real checkpoint's layout).
    """
    if kind not in KINDS:
        raise ValueError(f"unknown tiny target kind {kind!r} (expected one of {', '.join(KINDS)})")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    config = target_config() if kind == "random" else conditional_config()
    (out_dir / "config.json").write_bytes(as_json(config))
    template = RANDOM_CHAT_TEMPLATE if kind == "random" else CHAT_TEMPLATE
    (out_dir / "chat_template.jinja").write_text(template, encoding="utf-8")
    (out_dir / "tokenizer_config.json").write_bytes(as_json(tokenizer_config()))
    (out_dir / "tokenizer.json").write_bytes(tokenizer_json())
    (out_dir / "vocab.json").write_bytes(vocab_json())
    (out_dir / "merges.txt").write_bytes(merges_txt())
    specs = target_tensors() if kind == "random" else constructed_target_tensors(Construction(seed, kind))
    write_sharded(out_dir, specs, seed)
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
    geometry = dflash_geometry(Path(target_dir))
    if geometry is None:
        config, specs = dflash_config(target), dflash_tensors(len(DFLASH_TARGET_LAYER_IDS))
    else:
        config, specs = dflash_config(target, dflash_constructed_layers()), constructed_dflash_tensors(geometry)
    (out_dir / "config.json").write_bytes(as_json(config))
    write_safetensors(out_dir / "model.safetensors", specs, seed)
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


def checkpoint_step(out: Path, *, seed: int, log: Path, kind: str = "random", target: Path | None = None) -> None:
    """The tiny target (``kind``), or with ``target`` the DFlash draft made for that target."""
    with logged_to(log):
        if target is not None:
            write_tiny_dflash(out, target_dir=target, seed=seed)
        else:
            write_tiny_target(out, seed=seed, kind=kind)
        print("wrote", sorted(p.name for p in out.iterdir()))
