"""Orders and labels the report's text and its figures share: distinct values in the config's order, a temperature
as the config writes it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def ordered(values: Iterable, order: Sequence = ()) -> list:
    """Distinct values: those in ``order`` in its order, then the others sorted."""
    unique = list(dict.fromkeys(values))
    return [v for v in order if v in unique] + sorted((v for v in unique if v not in order), key=str)


def temperature_label(temperature: float) -> str:
    """A temperature as written in the config: 0.0, 1.0, 0.7."""
    return f"{temperature:.1f}" if temperature == round(temperature, 1) else f"{temperature:g}"
