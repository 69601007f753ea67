"""The vector projection: every stored item's embedding (messages, knowledge questions) kept in
MIND_HOME/vectors.sqlite by ledger position (adapters/vector_store.py), computed here and
never on a turn's path: a turn embeds only its query and reads what is stored.

Like the read model it is tracked by position and rebuilt from 0 (`catch_up(rebuild=True)`, or
a new `embedding.model`); it reads the texts from the read model, so a forgotten text is never
embedded, and a forget keeps only the vectors of what still reads in the clear
(`mindledger.forget`). It runs as a background stage (`VectorFollower`, a thread) of `mind
serve` and of `mind project --follow`, and on demand as `mind project --vectors`. Each pass
embeds at most `PASS_ITEMS` items under a shared forget lock, so a forget waits for one
embedding call at most, never for a whole mind.

Windows of consecutive messages (`projections.retrieval.turn_windows`, kind `window`, keyed by
their first message) are embedded in the same pass, cut again from the last stored window's
first message: a window is (re)embedded when its members differ from the stored ones. The open
window at the head (the latest session's last, still growing) is embedded as it stands and
again at each pass that grows it (one window per pass, at most one per turn beside its two
messages) rather than waiting for it to close: a session's tail would otherwise have no window
until the next session starts, and the last one never. A forget drops every window holding a
forgotten message (`adapters.vector_store.keep_only`); a rebuild embeds them all again.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from mindledger.compose import Home, open_reader, read_model_paths
from mindledger.notices import warn

BATCH = 64  # items per embedding call and per write: a crash loses at most this much work
# Items per pass under the forget lock: one embedding call, ~0.5 s of the offline model on a
# quiet core but 10-20 s on a busy one (3-5 items/s measured at load 15), which a forget and
# the commands behind it wait out; 512 made that minutes.
PASS_ITEMS = BATCH
POLL_S = 1.0  # how often a follower looks for new events when nobody nudges it


def vectors_model(home: Home, config: dict[str, str] | None = None) -> str | None:
    """The model the projection embeds with, or None: `embedding.recall` or `embedding.model`
    off, or the offline model's weights missing (one warning per process)."""
    from mindledger.offline_embedder import offline_embedder_missing

    model = _configured_model(home, config)
    if model is None or offline_embedder_missing(model):
        return None
    return model


def _configured_model(home: Home, config: dict[str, str] | None) -> str | None:
    """The embedding model the mind's settings name for recall's vectors, None when off."""
    from mindledger.domain.settings import (
        DEFAULT_EMBEDDING_MODEL,
        DEFAULT_EMBEDDING_RECALL,
        EMBEDDING_MODEL,
        EMBEDDING_RECALL,
    )

    if config is None:
        from mindledger.identity_view import identity_view

        config = identity_view(home).config
    model = config.get(EMBEDDING_MODEL, DEFAULT_EMBEDDING_MODEL)
    if config.get(EMBEDDING_RECALL, DEFAULT_EMBEDDING_RECALL) != "on" or model == "off":
        return None
    return model


def catch_up(
    home: Home,
    rebuild: bool = False,
    should_stop: Callable[[], bool] | None = None,
    on_batch: Callable[[int, int], None] | None = None,
    limit: int | None = None,
) -> dict[str, Any]:
    """Embed the items the read model holds past the projection's position (all of them with
    `rebuild`), `limit` at most; what `mind project --vectors --json` adds: `embedded`, the
    `windows` embedded (again), the `position` reached, the `model` (None when vectors are
    off) and the `seconds`."""
    from mindledger.domain.settings import EMBEDDING_API_BASE
    from mindledger.identity_view import identity_view

    started = time.perf_counter()
    config = identity_view(home).config
    model = vectors_model(home, config)
    if model is None:
        return {"model": None, "embedded": 0, "windows": 0, "position": 0, "seconds": 0.0}
    base = config.get(EMBEDDING_API_BASE, "off")
    total, windows, position, first = 0, 0, 0, True
    while limit is None or total < limit:
        if should_stop is not None and should_stop():
            break
        room = PASS_ITEMS if limit is None else min(PASS_ITEMS, limit - total)
        done, cut, position, more = _one_pass(
            home,
            model,
            None if base == "off" else base,
            rebuild and first,
            room,
            on_batch,
            should_stop,
        )
        first = False
        total += done
        windows += cut
        if not more:
            break
    return {
        "model": model,
        "embedded": total,
        "windows": windows,
        "position": position,
        "seconds": round(time.perf_counter() - started, 3),
    }


def _one_pass(
    home: Home,
    model: str,
    api_base: str | None,
    reset: bool,
    room: int,
    on_batch: Callable[[int, int], None] | None,
    should_stop: Callable[[], bool] | None = None,
) -> tuple[int, int, int, bool]:
    """Up to `room` items embedded and kept, then the windows they close or grow, under the
    shared forget lock (a forget prunes the file: it must not replace it under a pass, nor a
    pass write a vector it just pruned); returns how many items, how many windows, the
    position reached and whether more may be waiting."""
    from mindledger.adapters.embeddings import embed_matrix
    from mindledger.adapters.vector_store import FILE, VectorStore
    from mindledger.forget import MARKER
    from mindledger.forget_lock import forget_excluded
    from mindledger.projections.engine.readmodel import (
        ReadSession,
        open_read_model,
        use_lingering,
    )
    from mindledger.projections.retrieval.vector_items import (
        items_after,
        tracked_position,
        window_rows,
    )

    with forget_excluded(home):
        if (home.path / MARKER).exists():
            return 0, 0, 0, False  # a forget to finish first: the next read does it
        store = VectorStore(home.path / FILE)
        try:
            if reset or store.tracked()[0] not in (None, model):
                store.reset(model)
            after = store.position(model)
            # Windows are cut again from the last one's start, or where a forget dropped some.
            recut = store.recut_from()
            since = min(store.last_window() or 0, 2**62 if recut is None else recut)
            reader = open_reader(home)
            try:
                head, paths = reader.head()[0], read_model_paths(home)
                read: list[tuple[int, list[Any], list[Any]]] = []

                def read_from(con: Any) -> None:
                    upto = tracked_position(con)
                    items = items_after(con, after, upto, room + 1)
                    end = items[room - 1][0] if len(items) > room else upto
                    read.append((upto, items, window_rows(con, since, end)))

                def from_kept(session: ReadSession) -> None:
                    if session.con is not None and session.position() >= head:
                        read_from(session.con)

                # A served mind keeps its turns' read session open between them (caught up
                # after each turn): read through it rather than take the lock from it, which
                # closed it after every turn and made the next one open the file again.
                if not (use_lingering(paths.lock, None, from_kept) and read):
                    with open_read_model(paths, reader) as con:
                        read_from(con)
                upto, items, rows = read[-1]
            finally:
                reader.close()
            more = len(items) > room
            items = items[:room]
            done = 0
            for start in range(0, len(items), BATCH):
                if should_stop is not None and should_stop():
                    return done, 0, store.position(model), False
                chunk = items[start : start + BATCH]
                vectors = embed_matrix(model, [t for _, _, t in chunk], api_base)
                last = chunk[-1][0] if more or start + BATCH < len(items) else upto
                store.add(model, [(p, k) for p, k, _ in chunk], vectors, last)
                done += len(chunk)
                if on_batch is not None:
                    on_batch(len(chunk), last)
            if not items and upto > after:
                store.add(model, [], _empty(), upto)  # nothing to embed: the position moves
            reached = store.position(model)
            cut, whole = embed_windows(
                store,
                model,
                lambda texts: embed_matrix(model, texts, api_base),
                [r for r in rows if r[0] <= reached],
                since,
                should_stop,
            )
            if recut is not None and whole:
                store.recut_done()
            return done, cut, reached, more
        finally:
            store.close()


def embed_windows(
    store: Any,
    model: str,
    embed: Callable[[list[str]], Any],
    rows: list[Any],
    since: int,
    should_stop: Callable[[], bool] | None,
) -> tuple[int, bool]:
    """Cut the windows of `rows` (every message from the last stored window's first on) and
    embed those whose members differ from the stored ones (new, grown, or cut again after a
    forget); drop the stored ones from `since` on that the cut no longer has. How many were
    embedded, and whether all were (a stop between two batches leaves the rest to the next
    pass)."""
    from mindledger.projections.retrieval.turn_windows import cut, window_vectors

    windows = {rows[w.members[0]][0]: w for w in cut(rows)} if rows else {}
    members = {first: tuple(rows[i][0] for i in w.members) for first, w in windows.items()}
    stored = store.windows_from(since)
    dropped = [first for first in stored if first not in windows]
    changed = [first for first in windows if stored.get(first) != members[first]]
    if not changed and dropped:
        store.add(model, [], _empty(), store.position(model), dropped=dropped)
    for start in range(0, len(changed), BATCH):
        if should_stop is not None and should_stop():
            return start, False
        chunk = changed[start : start + BATCH]
        vectors = window_vectors(embed, [windows[first] for first in chunk])
        store.add(
            model,
            [(first, "window") for first in chunk],
            vectors,
            store.position(model),
            members={first: members[first] for first in chunk},
            dropped=dropped if start == 0 else (),
        )
    return len(changed), True


def _empty() -> Any:
    import numpy as np

    return np.zeros((0, 0), dtype=np.float32)


def vectors_status(home: Home, head: int, config: dict[str, str] | None = None) -> dict[str, Any]:
    """How far the vectors reach: `state` on (with the `position` embedded and the `lag` in
    events behind `head`), off, or missing (the offline model is not installed)."""
    from mindledger.adapters.vector_store import FILE, tracked_at

    model = _configured_model(home, config)
    if model is None:
        return {"state": "off", "position": 0, "lag": 0}
    if model_missing(model):
        return {"state": "missing", "position": 0, "lag": 0}
    found, position = tracked_at(home.path / FILE)
    position = position if found == model else 0
    return {"state": "on", "position": position, "lag": max(head - position, 0)}


def vectors_line(home: Home, head: int, config: dict[str, str]) -> dict[str, Any] | None:
    """The vector projection's line of `mind status` (`projections`), None when it is not on."""
    vectors = vectors_status(home, head, config)
    if vectors["state"] != "on":
        return None
    return {"name": "vectors", "position": vectors["position"], "lag": vectors["lag"]}


def model_missing(model: str) -> bool:
    """Whether `model` is the offline one and it cannot be loaded: its package missing, failing
    on import or without its files (no warning: for a status line)."""
    from mindledger.offline_embedder import LOCAL_PREFIX, offline_model_usable

    return model.startswith(LOCAL_PREFIX) and not offline_model_usable()


class VectorFollower:
    """The vector projection as a background stage: a thread that catches the vectors up
    whenever the ledger moves (`nudge`, or every `POLL_S`), until `stop`. A failed pass is
    one warning line, and the thread goes on (the next pass starts where the vectors are)."""

    def __init__(
        self, home: Home, poll_s: float = POLL_S, busy: Callable[[], bool] | None = None
    ) -> None:
        """`busy`: whether the read model's own catch-up is under way, which the vectors give
        way to (between two batches): its rate must not pay for them."""
        self.home, self.poll_s = home, poll_s
        self.busy = busy or (lambda: False)
        self.wake, self.stopping = threading.Event(), threading.Event()
        self.thread: threading.Thread | None = None
        self.embedded = 0
        self.failures = 0

    def start(self) -> VectorFollower:
        self.thread = threading.Thread(target=self._run, name="vector-projection", daemon=True)
        self.thread.start()
        return self

    def nudge(self) -> None:
        """Something was written: look now."""
        self.wake.set()

    def stop(self, wait_s: float = 30.0) -> None:
        """Stop after the batch under way (joined: a thread left inside DuckDB when the
        process exits aborts it)."""
        self.stopping.set()
        self.wake.set()
        if self.thread is not None:
            self.thread.join(wait_s)

    def _run(self) -> None:
        head_seen = -1
        while not self.stopping.is_set():
            try:
                head = _ledger_head(self.home) if not self.busy() else head_seen
                if head != head_seen:
                    done = catch_up(self.home, should_stop=self._yields)
                    self.embedded += done["embedded"]
                    if done["model"] is None or done["position"] >= head:
                        head_seen = head  # else: stopped part of the way, or the read model
                        # was behind: looked at again
            except Exception as e:  # the thread's boundary: the vectors lag, turns go on
                self.failures += 1
                if self.failures == 1:
                    warn(
                        f"the vector projection failed ({self._cause(e)}); recall runs on "
                        "what is embedded"
                    )
            self.wake.wait(self.poll_s)
            self.wake.clear()

    def _cause(self, e: Exception) -> str:
        """What the warning quotes of `e`: one line, capped (`cause_line`; a dependency's error
        may hold pages, or a traceback), cleaned as a failure message is (no package path, no
        URL but a loopback one, no secret of the home's); its traceback goes to the home's
        errors log, under the id the warning names."""
        from mindledger.domain.errors import cause_line
        from mindledger.error_report import clean_text, log_failure
        from mindledger.safe_text import configured_secrets

        secrets = configured_secrets(self.home.path)
        cause = clean_text(cause_line(e), secrets)
        error_id = log_failure(e, self.home.path, secrets)
        return f"{cause}; error {error_id} in logs/errors.log" if error_id else cause

    def _yields(self) -> bool:
        return self.stopping.is_set() or self.busy()


def _ledger_head(home: Home) -> int:
    reader = open_reader(home, sealed=False)
    try:
        return int(reader.head()[0])
    finally:
        reader.close()
