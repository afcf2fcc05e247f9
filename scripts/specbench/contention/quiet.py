"""Waiting for a quiet machine between contended attempts (``wait_for_quiet``): sample until the last
``window_s`` seconds pass the same judgement a cell's request window must pass, or until ``timeout_s`` is spent."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from specbench.contention.samples import Sample, Verdict


@dataclass(frozen=True)
class QuietWait:
    """One wait: after which attempt, why (that attempt's contention), how long, and how it ended (``quiet``: a
    quiet window was measured; else the time bound passed, and ``last`` is the verdict on the last window)."""

    after_attempt: int
    why: str
    waited_s: float
    quiet: bool
    window_s: float
    windows_judged: int
    last: Verdict | None

    def to_json(self) -> dict[str, Any]:
        """A plain JSON-able dict (the record's ``quiet_waits`` entries)."""
        return asdict(self)


def _trim(window: list[Sample], window_s: float) -> list[Sample]:
    """The newest samples that still span at least ``window_s`` (all of them while they span less)."""
    while len(window) > 1 and window[1].t <= window[-1].t - window_s:
        window = window[1:]
    return window


def wait_for_quiet(
    take: Callable[[], Sample],
    decide: Callable[[list[Sample]], Verdict],
    *,
    after_attempt: int,
    why: str,
    window_s: float,
    timeout_s: float,
    step_s: float,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> QuietWait:
    """Take a sample every ``step_s`` (``take``) and judge the last ``window_s`` of them (``decide``: the cell's own
    judgement, with no process of the cell's allowed, since none is running); return as soon as a window is not
    contended, or when ``timeout_s`` has passed."""
    started = clock()
    window: list[Sample] = []
    judged, last = 0, None
    while True:
        window = _trim([*window, take()], window_s)
        if window[-1].t - window[0].t >= window_s:
            verdict = decide(window)
            judged, last = judged + 1, verdict
            if not verdict.contended:
                return QuietWait(after_attempt, why, round(clock() - started, 3), True, window_s, judged, last)
        if clock() - started >= timeout_s:
            return QuietWait(after_attempt, why, round(clock() - started, 3), False, window_s, judged, last)
        sleep(step_s)
