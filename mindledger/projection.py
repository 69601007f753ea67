"""The read side's processes: catch up or follow the ledger (`mind project`), and rebuild every
read model from position 0 (`mind replay`), checked against or swapped for the live one."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

from mindledger.compose import Home, open_reader, read_model_paths
from mindledger.export import Progress, no_progress

LABEL = "projecting"  # what a progress display is labelled for catch-ups and replays


def catch_up(home: Home, progress: Progress = no_progress, publish: bool = True) -> dict[str, Any]:
    """Bring the read models up to the ledger head and publish them (what `mind project
    --json` prints); `progress` is shown the events still to apply. `publish=False` leaves the
    published copy as it is (a reader without a follower reads the working file)."""
    from mindledger.projections.engine.projector import Projector
    from mindledger.projections.engine.read_only_home import require_writable
    from mindledger.projections.engine.readmodel import projector_lock

    paths, reader = read_model_paths(home), open_reader(home)
    try:
        require_writable(home.path, paths.working, doing="build the read model")
        started = time.perf_counter()
        with projector_lock(paths.lock, wait=True):
            projector = Projector(paths.working)
            try:
                lag = reader.head()[0] - projector.position()
                with progress(lag, LABEL) as bar:
                    total = projector.catch_up(reader, on_batch=bar.update, maintain=True)
                if publish:
                    projector.publish(paths.published)
                position = projector.position()
            finally:
                projector.close()
    finally:
        reader.close()
    return {"applied": total, "position": position, "seconds": _since(started)}


def follow(
    home: Home,
    on_start: Callable[[], None] | None = None,
    on_batch: Callable[[int, int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> dict[str, Any]:
    """Keep the read models at the ledger head, publishing after every batch, until SIGINT or
    SIGTERM or `should_stop()` (what `mind project --follow --json` prints). `on_start` hears
    that following began; `on_batch` hears each batch's events applied and the position
    reached."""
    from mindledger.projections.engine.follower import follow as follow_ledger
    from mindledger.projections.engine.read_only_home import require_writable
    from mindledger.vector_projection import VectorFollower

    paths, reader = read_model_paths(home), open_reader(home)
    vectors: VectorFollower | None = None
    try:
        require_writable(home.path, paths.working, doing="build the read model")
        started = time.perf_counter()
        # The vector projection as a background stage: it reads the copies this follower
        # publishes and lags behind them; the read model's catch-up never waits for it. It
        # runs only while the follower waits for events (the read model at the head): beside
        # a backlog's batches it slowed the catch-up (bench.vector_lag).
        idle = _Idle(reader)
        vectors = VectorFollower(home, busy=lambda: not idle.waiting.is_set()).start()

        def batch_done(applied: int, position: int) -> None:
            assert vectors is not None
            idle.waiting.clear()
            vectors.nudge()
            if on_batch is not None:
                on_batch(applied, position)

        if on_start is not None:
            on_start()
        total = follow_ledger(paths, cast(Any, idle), batch_done, should_stop=should_stop)
        position = reader.head()[0]
    finally:
        if vectors is not None:
            vectors.stop()
        reader.close()
    return {"applied": total, "position": position, "seconds": _since(started)}


class _Idle:
    """A follower's ledger reader that notes when the follower waits for events: it has
    nothing left to apply (the read model is at the head)."""

    def __init__(self, reader: Any) -> None:
        self.reader = reader
        self.waiting = threading.Event()

    def wait(self, timeout: float) -> None:
        self.waiting.set()
        self.reader.wait(timeout)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.reader, name)


def replay(
    home: Home,
    target: Path | None = None,
    check: bool = False,
    swap: bool = False,
    progress: Progress = no_progress,
) -> dict[str, Any]:
    """Rebuild every read model from position 0 into `target`, a new DuckDB file (default: a
    scratch file, removed after); `check` compares it with the live read model, `swap` makes
    it live unless they differ (what `mind replay --json` prints; `differences` non-empty
    when they do)."""
    from mindledger.projections.engine.readmodel import ensure_fresh
    from mindledger.projections.engine.replay import differences, live_position, rebuild, swap_in

    if target is not None:
        from mindledger.output_paths import check_new_file, refuse_home_file
        from mindledger.projections.engine.replay import check_target

        refuse_home_file(home, target, "target")
        check_new_file(target, "target")  # a new DuckDB file: never -, a link, device or FIFO
        check_target(target)
    if swap:
        require_verified(home)
    paths, reader = read_model_paths(home), open_reader(home)
    scratch = None
    try:
        if target is None or swap or check:
            from mindledger.projections.engine.read_only_home import require_writable

            require_writable(home.path, paths.working, doing="replay in this home")
        if target is None:
            scratch = Path(tempfile.mkdtemp(prefix="replay-", dir=home.path))
            target = scratch / "readmodel.duckdb"
        stop = None
        if check:
            ensure_fresh(paths, reader)
            stop = live_position(paths)
        started = time.perf_counter()
        with progress(reader.head()[0], LABEL) as bar, _building(target, scratch) as building:
            applied = rebuild(building, reader, stop=stop, on_batch=bar.update)
        seconds = _since(started)
        diffs = differences(paths.published, target) if check else []
        if swap and not diffs:
            swap_in(paths, target)
    finally:
        reader.close()
        if scratch is not None:  # nothing named it, so nothing should keep it, even on failure
            shutil.rmtree(scratch, ignore_errors=True)
    return {
        "into": str(target) if scratch is None else None,
        "applied": applied,
        "seconds": seconds,
        "checked": check,
        "identical": not diffs if check else None,
        "differences": diffs,
        "swapped": swap and not diffs,
    }


@contextlib.contextmanager
def _building(target: Path, scratch: Path | None) -> Iterator[Path]:
    """Where the rebuild writes: the scratch file itself, or a file in a private temporary
    folder beside a named `target`, moved into place only once whole (a full disk part of the
    way leaves nothing, not even DuckDB's own temporary files)."""
    if scratch is not None:
        yield target
        return
    from mindledger.output_paths import OutputPathError, output_path
    from mindledger.projections.engine.replay import unusable_target

    try:
        with output_path(target, "target", private=True) as temp:  # every message's text: 0600
            yield temp
    except OutputPathError as e:  # the system refused (a missing folder): said as replay says it
        if e.reason is None:
            raise
        raise unusable_target(target, e.reason) from None


def require_verified(home: Home) -> None:
    """Raise LedgerUnverifiedError unless the ledger verifies against every anchor: a swap
    replaces the read model, which may be the only evidence left of a truncated ledger."""
    from mindledger.domain.errors import LedgerUnverifiedError
    from mindledger.ledger_reads import verify_home

    result = verify_home(home)
    if not result.ok:
        raise LedgerUnverifiedError(
            f"the ledger does not verify ({result.reason}); nothing was swapped: run "
            "`mind verify` to see why before replacing the read model"
        )


def _since(started: float) -> float:
    return round(time.perf_counter() - started, 3)
