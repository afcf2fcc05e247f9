"""The configuration's error: what every check of a config raises, naming the dotted key it is about."""

from __future__ import annotations

from typing import Any


class ConfigError(ValueError):
    """A configuration problem, with the dotted key it concerns."""

    def __init__(self, key: str, message: str, path: tuple[Any, ...] = ()) -> None:
        super().__init__(f"config error at '{key}': {message}")
        self.key, self.problem, self.path = key, message, path
