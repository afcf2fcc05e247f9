"""Hypothesis settings for properties whose every example runs the pipeline's own code (tenths of a second or
more): few examples, the same draws every run (derandomized), no deadline, and a failing example reported as
drawn rather than shrunk for minutes."""

from __future__ import annotations

from hypothesis import HealthCheck, Phase, settings


def bounded(max_examples: int) -> settings:
    """Derandomized settings of ``max_examples`` examples, without the shrink phase or a deadline."""
    return settings(
        max_examples=max_examples,
        derandomize=True,
        deadline=None,
        phases=(Phase.explicit, Phase.generate),
        suppress_health_check=[HealthCheck.too_slow],
    )
