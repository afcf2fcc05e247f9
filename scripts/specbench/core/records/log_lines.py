"""Which lines of a server's log a cell record keeps (``server.log_lines``): those about speculation, its settings and
its acceptance, and those about the sampling defaults the server applies (vLLM's generation-config lines); the
measurement keeps them and the analysis reads its figures from them."""

from __future__ import annotations

# A server log line that mentions any of these (in any case) is about speculation
SPECULATIVE_WORDS = ("specul", "draft", "ngram", "mtp", "dflash")


def is_speculative(line: str) -> bool:
    """Whether a server log line is about speculation (mentions one of ``SPECULATIVE_WORDS``)."""
    lowered = line.lower()
    return any(word in lowered for word in SPECULATIVE_WORDS)


# ... and a line that mentions any of these says which sampling defaults the server applies
SAMPLING_WORDS = ("sampling param", "generation config", "generation_config")


def is_kept(line: str) -> bool:
    """Whether a cell record keeps a server log line: about speculation, or about the sampling defaults."""
    lowered = line.lower()
    return is_speculative(line) or any(word in lowered for word in SAMPLING_WORDS)
