"""How a caller hears about long work (an export, an import, a replay, a backup): a plain
callable, `progress(done, total, doing)`, called with the items done so far, the total and
what is being done ("exporting jsonl"); the command line draws its bar from it, a program may
log it or ignore it. The use cases themselves take the `Progress` display shape; these adapt
a caller's callable to it."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from mindledger.export import Bar, Progress, no_progress

# What a caller is told: items done so far, the total, what is being done.
Told = Callable[[int, int, str], None]


class _Telling:
    def __init__(self, told: Told, total: int, doing: str) -> None:
        self.told, self.total, self.doing, self.done = told, total, doing, 0

    def update(self, n: int) -> None:
        if n:
            self.done += n
            self.told(self.done, self.total, self.doing)


def telling(told: Told | None) -> Progress:
    """The progress display that tells `told` (None: nothing shown)."""
    if told is None:
        return no_progress
    callback = told

    @contextlib.contextmanager
    def display(total: int, doing: str) -> Iterator[Bar]:
        callback(0, total, doing)
        yield _Telling(callback, total, doing)

    return display


def counts(told: Told | None, doing: str) -> tuple[Callable[[int], None] | None, ...]:
    """`(on_batch, on_total)` for an import whose size is known only once its file is read:
    `on_total` starts the count, `on_batch` adds what is done (None, None: nothing shown)."""
    if told is None:
        return None, None
    callback = told
    state = _Telling(callback, 0, doing)

    def on_total(total: int) -> None:
        state.total = total
        callback(0, total, doing)

    return state.update, on_total
