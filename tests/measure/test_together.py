"""A load point's clients (measure.together): released together, answers in client order, a failure raised only
after every client has ended."""

from __future__ import annotations

import _thread
import signal
import threading
import time

import pytest

from specbench.measure.together import ask_together


def test_every_client_is_in_flight_at_once() -> None:
    lock, inside, most, order = threading.Lock(), [0], [0], iter(range(100))

    def ask() -> int:
        with lock:
            number = next(order)
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        time.sleep(0.05)
        with lock:
            inside[0] -= 1
        return number

    answers = ask_together(ask, 4)
    assert most[0] == 4 and sorted(answers) == [0, 1, 2, 3]


def test_a_failed_client_is_raised_after_the_others_have_ended() -> None:
    ended = []

    def ask() -> str:
        name = threading.current_thread().name
        if name.endswith("_0"):
            raise ConnectionError("the server died")
        time.sleep(0.05)
        ended.append(name)
        return name

    with pytest.raises(ConnectionError, match="the server died"):
        ask_together(ask, 3)
    assert len(ended) == 2


def test_a_point_has_at_least_one_client() -> None:
    with pytest.raises(ValueError, match="at least one client"):
        ask_together(lambda: None, 0)


def test_an_interruption_is_raised_without_waiting_for_the_clients() -> None:
    """Ctrl-C (or the guard's Interrupted) while the clients stream: raised at once, so the runner stops the server
    (which ends their streams) instead of waiting for every generation to finish."""
    released = threading.Event()

    def ask() -> None:
        released.wait(timeout=30)

    def interrupt() -> None:
        time.sleep(0.2)
        _thread.interrupt_main()

    # Python's own SIGINT handler for the duration: interrupt_main does nothing where SIGINT is ignored (pytest
    # started as a background job inherits it so; the guard leaves it so once it has stopped a cell)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        threading.Thread(target=interrupt).start()
        with pytest.raises(KeyboardInterrupt):
            ask_together(ask, 2)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert not released.is_set()  # the clients were still streaming when it returned
    released.set()
