"""A load point's requests: the cell's one request sent by N clients at once (a barrier releases them together), each
on its own connection, each answer kept whole; the first failure, in client order, is raised after all have ended."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from typing import TypeVar

T = TypeVar("T")
# How often the waiting thread wakes: an interruption that is not a real signal (``_thread.interrupt_main``, the
# guard's) cannot end a blocked wait, and is raised at the next wake
WAKE_S = 0.1


def ask_together(ask: Callable[[], T], clients: int) -> list[T]:
    """``ask()`` from ``clients`` threads released together; their answers in client order. Every client runs to its
    end before an error of one is raised (a server that dies fails them all; a half-finished point is not kept). An
    interruption of the waiting thread (Ctrl-C, a cancelled job) is raised at once, without waiting for the clients:
    stopping the server then ends their streams."""
    if clients < 1:
        raise ValueError(f"a load point has at least one client, not {clients}")
    start = threading.Barrier(clients)

    def client() -> T:
        start.wait()
        return ask()

    pool = ThreadPoolExecutor(max_workers=clients, thread_name_prefix="client")
    try:
        futures = [pool.submit(client) for _ in range(clients)]
        while wait(futures, timeout=WAKE_S).not_done:
            pass  # back in Python between waits, where an interruption of this thread is raised
        outcomes = [(f.result() if f.exception() is None else f.exception()) for f in futures]
    finally:
        start.abort()  # a client not yet released (an interruption came first) is not left waiting
        pool.shutdown(wait=False, cancel_futures=True)
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
    return outcomes  # type: ignore[return-value]
