"""Where a response's text could have been drafted from by prompt n-gram lookup: the prompt (the study's account:
n-gram copies what is in the context) or the response's own earlier text (a model that repeats itself, which the
lookup drafts from as well). Computed from the recorded text when the table is built."""

from __future__ import annotations

WINDOW = 32  # characters: a span this long found again is copied text, not a coincidence of common words


def text_sources(prompt: str, response: str, window: int = WINDOW) -> dict[str, float | None]:
    """The shares of the response's characters inside a ``window``-character span that also occurs in the prompt
    (``from_prompt``), or, of the rest, inside one that occurs earlier in the response (``from_output``); both None
    for a response shorter than ``window``."""
    if len(response) < window:
        return {"from_prompt": None, "from_output": None}
    in_prompt = {prompt[i : i + window] for i in range(len(prompt) - window + 1)}
    copied, repeated = bytearray(len(response)), bytearray(len(response))  # 1: the character is inside such a span
    seen: set[str] = set()  # the spans that started earlier in the response
    full = b"\x01" * window
    for start in range(len(response) - window + 1):
        span = response[start : start + window]
        if span in in_prompt:
            copied[start : start + window] = full
        if span in seen:
            repeated[start : start + window] = full
        seen.add(span)
    from_output = sum(1 for c, r in zip(copied, repeated, strict=True) if r and not c)
    return {"from_prompt": sum(copied) / len(response), "from_output": from_output / len(response)}
