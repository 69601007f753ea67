"""The lock a forget and the turns share (`forget.lock` in the home): a forget takes it
exclusively, a turn shared. Apart from `mindledger.forget` so that a turn, which only takes
it, does not import the forget's machinery (its selectors, plans and signals)."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mindledger.compose import Home

LOCK = "forget.lock"


@contextlib.contextmanager
def forget_excluded(home: Home) -> Iterator[None]:
    """A turn in this process and a forget exclude each other (a shared lock on the file a
    forget locks exclusively): a forget waits for the turns under way, whose prompt may quote
    what it names and is written only as the turn ends, and a turn waits for a forget. A home
    this process cannot write takes no turn anyway: no lock then."""
    try:
        fd = os.open(home.path / LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        yield
        return
    with flocked(fd, fcntl.LOCK_SH):
        yield


@contextlib.contextmanager
def flocked(fd: int, operation: int) -> Iterator[None]:
    """`fd` locked (`fcntl.LOCK_EX` or `LOCK_SH`) for the block, then unlocked and closed."""
    try:
        fcntl.flock(fd, operation)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
