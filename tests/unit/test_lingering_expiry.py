"""A kept read session's expiry and a release asked for while it closes the session: the
release returns only once the session is closed (a process that ends right after must not
leave the close to a daemon thread the interpreter then stops inside DuckDB)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from mindledger.projections.engine import readmodel


class SlowToClose:
    """Stands in for a `ReadSession` whose close takes a while (a 1M-event file's)."""

    def __init__(self) -> None:
        self.busy = threading.Lock()
        self.closing = threading.Event()
        self.closed = threading.Event()

    def close(self) -> None:
        if self.closed.is_set():
            return
        self.closing.set()
        time.sleep(0.2)
        self.closed.set()


def test_a_release_during_an_expirys_close_waits_until_the_session_is_closed() -> None:
    key, owner, session = "/nowhere/projector.lock", object(), SlowToClose()
    expiry = readmodel._Expiry(key, session, time.monotonic())  # type: ignore[arg-type]
    readmodel._lingering[key] = (session, owner, expiry)  # type: ignore[assignment]
    expiring = threading.Thread(target=readmodel._expire, args=(expiry,))

    expiring.start()
    assert session.closing.wait(5)
    readmodel.release_lingering(Path(key), owner)

    assert session.closed.is_set()
    expiring.join(5)
    assert key not in readmodel._lingering


def test_an_expiry_leaves_a_session_taken_up_before_it_ran_open() -> None:
    key, owner, session = "/nowhere/taken.lock", object(), SlowToClose()
    expiry = readmodel._Expiry(key, session, time.monotonic())  # type: ignore[arg-type]
    readmodel._lingering[key] = (session, owner, expiry)  # type: ignore[assignment]
    readmodel._lingering.pop(key)  # as `take_lingering` does

    readmodel._expire(expiry)

    assert not session.closing.is_set()
