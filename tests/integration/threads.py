"""Running calls at the same moment in threads, for the race tests."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


def race(*calls: Callable[[], object], delays: tuple[float, ...] = ()) -> list[object]:
    """Start the calls together (each after its delay, if given); each one's result, or the
    exception it raised (the test classifies what each call ended with)."""
    barrier = threading.Barrier(len(calls))
    results: list[object] = [None] * len(calls)

    def one(i: int) -> None:
        barrier.wait()
        if i < len(delays):
            time.sleep(delays[i])
        try:
            results[i] = calls[i]()
        except Exception as exc:  # returned, not raised: the caller asserts on it
            results[i] = exc

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)
    return results
