"""`paused_gc`: the cyclic garbage collector off while a long catch-up makes its objects.

A catch-up batch makes ~10 objects per event, nearly all acyclic and freed by reference
counting, but their count alone triggers collections that walk every live object of the
process: with litellm loaded (a server, a turn's process) that was a quarter of a 100k
catch-up, and a third of a sealed one, whose opening makes more objects (BENCHMARKS.md,
"Encryption"). The pauses are counted, so that concurrent catch-ups (the server's threads)
turn it back on only when the last one ends.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_lock = threading.Lock()
_pauses = 0


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Automatic garbage collection off for the block (left as it is when someone else had
    turned it off); back on when the last concurrent block ends."""
    global _pauses
    with _lock:
        ours = _pauses > 0 or gc.isenabled()
        if ours:
            _pauses += 1
            gc.disable()
    try:
        yield
    finally:
        if ours:
            with _lock:
                _pauses -= 1
                if _pauses == 0:
                    gc.enable()
