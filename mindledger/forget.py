"""Forgetting: destroy the data keys of what a selector names, record the fact, and rebuild
every derived copy (read models, embeddings cache, chat history) without it.

The order survives a crash anywhere: the keys and a note of the forget go in one key-store
transaction (with a marker file beside, so every later command knows to look); then the
`Forgotten` event; then the purge; then the note is dropped. A forget found unfinished is
finished by the next command that opens the mind (`finish_pending`), never run twice.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import signal
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mindledger.compose import Home, open_keys, open_mind, open_reader, read_model_paths
from mindledger.domain.errors import InvalidInputError, LedgerReadOnlyError, MindError
from mindledger.domain.forgetting import SELECTOR_KINDS, Selector
from mindledger.domain.private_files import write_private_text
from mindledger.forget_lock import LOCK, flocked
from mindledger.notices import warn

if TYPE_CHECKING:
    from mindledger.forget_aside import Aside

MARKER = "forget.pending"  # exists while a forget's purge may be unfinished
# Test-only: the point at which a forget kills its own process (SIGKILL), to prove recovery.
CRASH_ENV = "MIND_TEST_FORGET_CRASH"
_finishing: ContextVar[bool] = ContextVar("finishing_forget", default=False)
_READ_ONLY_ERRNOS = (errno.EACCES, errno.EPERM, errno.EROFS)
_warned: set[Path] = set()  # homes whose unfinished forget this process has warned about


def _crash_point(name: str) -> None:
    if os.environ.get(CRASH_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)


@contextlib.contextmanager
def _forget_lock(home: Home, *, write: bool = True) -> Iterator[bool]:
    """One forget at a time per home (a second waits); also guards against re-entry. Yields
    whether this process can write the home: where it cannot, a writer is refused in one line
    and a reader takes the lock through a read-only handle (flock needs none other), or none
    when there is no lock file (then no forget has run here)."""
    token = _finishing.set(True)
    try:
        writable = True
        try:
            fd: int | None = os.open(home.path / LOCK, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as e:
            if e.errno not in _READ_ONLY_ERRNOS:
                raise
            if write:
                raise LedgerReadOnlyError(
                    "this process cannot write the mind's home (it is read-only): nothing was "
                    "forgotten; forget where the home is writable"
                ) from None
            writable = False
            try:
                fd = os.open(home.path / LOCK, os.O_RDONLY)
            except FileNotFoundError:
                fd = None
        if fd is None:
            yield writable
            return
        with flocked(fd, fcntl.LOCK_EX):
            yield writable
    finally:
        _finishing.reset(token)


def selector_of(kind: str, value: str) -> Selector:
    """A checked selector (`before` parsed as an ISO-8601 time)."""
    if kind not in SELECTOR_KINDS:
        raise InvalidInputError(
            f"unknown selector {kind!r}; use one of {', '.join(SELECTOR_KINDS)}", param="kind"
        )
    if not value.strip():
        raise InvalidInputError(f"`{kind}` needs a value", param="value")
    if kind == "before":
        from mindledger.domain.clock import parse_fixed_time

        try:
            at = parse_fixed_time(value)
        except MindError as e:
            raise InvalidInputError(f"`before`: {e}", param="value") from None
        from mindledger.compose import clock_from_env

        if at > max(datetime.now(UTC), clock_from_env()()):
            raise InvalidInputError(
                f"`before` {value.strip()} is in the future: it would name the whole mind; "
                "give a past time",
                param="value",
            )
        return Selector("before", value.strip(), at)
    return Selector(kind, value.strip())  # type: ignore[arg-type]  # checked above


def _stop_background_server(home: Home) -> int | None:
    """A running server keeps the mind's words in memory: a background one is stopped (the next
    call starts a fresh one); a foreground `mind serve` must take the forget itself."""
    from mindledger.server_files import any_pid_alive, server_record

    data, _ = server_record(home.path)
    if data is None:
        return None
    pid = int(data["pid"])
    if not data.get("idle_exit_s"):
        raise MindError(
            f"`mind serve` (pid {pid}) serves this mind and holds its words in memory: forget "
            "through it (POST /v1/minds/NAME/forget) or stop it first (`mind server stop`)"
        )
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    import time

    deadline = time.monotonic() + 30
    while any_pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return pid


def forget_data(
    home: Home,
    selector: Selector,
    *,
    dry_run: bool,
    role: str = "owner",
    via: str = "cli",
    exclusive: Callable[[], contextlib.AbstractContextManager[Any]] = contextlib.nullcontext,
) -> dict[str, Any]:
    """The forget use case as the CLI and the server run it; returns the `--json` object.
    `exclusive`: what the caller must hold while keys go and the read model is swapped (a
    served mind's write lock); the read model is built aside before it, while turns go on."""
    from mindledger.domain.forgetting import check_forget_role

    check_forget_role(role)
    home.require()
    if dry_run:
        with _forget_lock(home, write=False) as writable:
            # It writes nothing: a home it cannot write only leaves a warning.
            _finish_or_warn(home, writable)
            return _forget(home, selector, role, via, dry_run=True)
    from mindledger import forget_aside

    with forget_aside.one_forget(home) as writable:
        pending = (home.path / MARKER).exists()  # finished first, inside the exclusion
        aside = forget_aside.build(home, selector) if writable and not pending else None
        try:
            with exclusive(), _forget_lock(home):
                if _finish(home):
                    aside = None  # built while keys of an unfinished forget still existed
                return _forget(home, selector, role, via, dry_run=False, aside=aside)
        finally:
            if writable:  # whatever is left of it: unused, or a stale one
                forget_aside.discard(home)


def _forget(
    home: Home,
    selector: Selector,
    role: str,
    via: str,
    *,
    dry_run: bool,
    aside: Aside | None = None,
) -> dict[str, Any]:
    """Plan, check and (unless `dry_run`) destroy, record and purge; the caller holds the
    forget lock."""
    from mindledger.adapters.forget_plan import plan_forget

    reader = open_reader(home)
    try:
        keys = open_keys(home, read_only=dry_run)
        try:
            if aside is not None and aside.planner is not None:  # only the events since
                aside.planner.scan(reader)
                plan = aside.planner.plan(reader)
            elif not dry_run:  # the caller holds the forget's locks: its index is written
                from mindledger.forget_aside import plan_of

                plan, _ = plan_of(home, reader, selector)
            else:
                plan = plan_forget(reader, selector, keys)
            existing = len(keys.get(plan.keys)) if plan.keys else 0
        finally:
            keys.close()
    finally:
        reader.close()
    summary = plan.summary(existing)
    if plan.unsealed and not existing:
        raise MindError(
            f"{plan.unsealed} of the {plan.events} events {selector.describe()} names were "
            "written before sealing: their words are stored in the clear and no key "
            "destruction can reach them (nothing was forgotten); see ARCHITECTURE.md, "
            "Forgetting"
        )
    if plan.unsealed:
        summary["unsealed"] = plan.unsealed  # left as they are: said, never hidden
    if dry_run:
        return {"dry_run": True, **summary, "forgotten": False}
    if existing == 0:
        return {"dry_run": False, **summary, "forgotten": False, "already_forgotten": True}
    if via != "server":  # a server forgets its own words; another process stops it
        _stop_background_server(home)
    _require_read_model_free(home)
    # A purge rebuilds the read model from the ledger: on a mind it cannot be brought up to
    # date, the keys would go, the fact be appended and the purge then fail, leaving a
    # pending forget no command can finish. Refused first, as every other write is.
    from mindledger.append_guard import require_projectable

    require_projectable(home)
    # Before the keys go: afterwards nothing can tell which history lines were the
    # forgotten messages, so a crash right after the destruction would leave them for good.
    _scrub_chat_history(home, plan.messages)
    # The first position is no content: the purge starts after it where it can.
    first = {"first_position": plan.first_position}
    note = json.dumps({**summary, "role": role, "via": via, **first}, sort_keys=True)
    marker = home.path / MARKER
    write_private_text(marker, plan.forget_id + "\n")
    keys = open_keys(home, read_only=False)
    try:
        keys.destroy(plan.keys, plan.forget_id, note)
    finally:
        keys.close()
    _crash_point("after-keys")
    served = aside is not None and aside.serves(plan)
    _finish(home, aside_for=plan.forget_id if served else None)
    return {"dry_run": False, **summary, "forgotten": True}


def _finish(home: Home, aside_for: str | None = None) -> int:
    """Finish every forget whose keys are gone: record its fact once, rebuild the read models
    (the forget `aside_for` swaps in the read model it built aside), drop the embeddings
    cache; returns how many were finished."""
    marker = home.path / MARKER
    if not marker.exists():
        return 0
    keys = open_keys(home, read_only=False)
    try:
        pending = keys.pending_forgets()
        for forget_id, note in pending:
            plan = json.loads(note)
            # Unguarded: the keys are gone already, so the fact is recorded whatever the read
            # model can do (the purge below rebuilds it).
            mind = open_mind(home, guarded=False)
            try:
                mind.record_forgotten(plan, plan.get("role", "owner"), plan.get("via", "cli"))
            finally:
                mind.close()
            _crash_point("after-event")
            _purge(home, plan.get("first_position"), aside=forget_id == aside_for)
            _crash_point("after-purge")
            keys.finish_forget(forget_id)
    finally:
        keys.close()
    marker.unlink(missing_ok=True)
    return len(pending)


def _require_read_model_free(home: Home) -> None:
    """Refuse, before any key goes, a forget whose purge could not rebuild the read model
    because another projector holds it."""
    from mindledger.projections.engine.purge import read_model_held

    busy = (
        "another projector (`mind project --follow`?) holds the read model a forget must "
        "rebuild: nothing was forgotten; stop it, then forget again"
    )
    with read_model_held(home.projector_lock, busy):
        pass


def _purge(home: Home, first_position: int | None, *, aside: bool = False) -> None:
    from mindledger.projections.engine.purge import rebuild_in_place

    if aside:
        from mindledger.forget_aside import swap_in

        swap_in(home, first_position)
    else:
        reader = open_reader(home)
        try:
            rebuild_in_place(read_model_paths(home), reader, first_position)
        finally:
            reader.close()
    _prune_embeddings(home)


def _prune_embeddings(home: Home) -> None:
    """The cache of vectors by text keeps only the questions the new read model still shows
    (what `ask` matches against), the vector projection's file only the items it still shows;
    every other row, each forgotten text's among them, goes with the old files."""
    from mindledger.adapters.embeddings import keep_only
    from mindledger.adapters.vector_store import FILE
    from mindledger.adapters.vector_store import keep_only as keep_positions
    from mindledger.compose import home_text_keys, read_model
    from mindledger.projections.retrieval.knowledge_channel import stored_questions
    from mindledger.projections.retrieval.vector_items import in_the_clear

    path = home.path / "embeddings.sqlite"
    vectors = home.path / FILE
    if not path.exists() and not vectors.exists():
        return
    with read_model(home) as con:
        questions = stored_questions(con)
        clear = in_the_clear(con) if vectors.exists() else []
    if path.exists():
        keep_only(path, home_text_keys(home), questions)
    # The vector projection keeps the vectors of what still reads in the clear (its position
    # stays: nothing else needs embedding again), and no page of a forgotten item's.
    keep_positions(vectors, clear)


def _scrub_chat_history(home: Home, messages: list[str]) -> None:
    """Drop the lines of `mind chat`'s history file that were forgotten messages."""
    path = home.path / "chat_history"
    gone = {m.strip() for m in messages if m.strip()}
    if not gone or not path.exists():
        return
    lines = path.read_text(errors="replace").splitlines(keepends=True)
    kept = [line for line in lines if line.strip() not in gone]
    if len(kept) != len(lines):
        tmp = path.with_name(path.name + ".tmp")
        write_private_text(tmp, "".join(kept))
        os.replace(tmp, path)


def finish_pending(home: Home) -> None:
    """Called as a command opens the mind: finish a forget a crash interrupted (a stat when
    there is none)."""
    if _finishing.get() or not (home.path / MARKER).exists():
        return
    with _forget_lock(home, write=False) as writable:
        _finish_or_warn(home, writable)


def _finish_or_warn(home: Home, writable: bool) -> None:
    """`_finish`, or where this process cannot write the home, one warning line: reading goes
    on, but the read model may still hold what the unfinished forget forgot."""
    if writable:
        try:
            _finish(home)
            return
        except LedgerReadOnlyError:
            pass  # the lock file was writable, the ledger or key store is not
    if (home.path / MARKER).exists() and home.path not in _warned:
        _warned.add(home.path)
        warn(
            "a forget is unfinished and this process cannot write the home: what it "
            "forgot may still show here; run any `mind` command where the home is writable to "
            "finish it"
        )
