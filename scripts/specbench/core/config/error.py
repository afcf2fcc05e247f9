"""The configuration's error: what every check of a config raises, naming the dotted key it is about, and the
"did you mean" hint an unknown name gets."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any


class ConfigError(ValueError):
    """A configuration problem, with the dotted key it concerns."""

    def __init__(self, key: str, message: str, path: tuple[Any, ...] = ()) -> None:
        super().__init__(f"config error at '{key}': {message}")
        self.key, self.problem, self.path = key, message, path


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the known name closest to ``name``, or '' when none is close."""
    hint = difflib.get_close_matches(name, list(known), n=1)
    return f" (did you mean '{hint[0]}'?)" if hint else ""
