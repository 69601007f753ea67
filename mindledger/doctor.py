"""`mind doctor`: what this installation has (the optional parts) and whether a home is sound
(its ledger verifies, its read model is current, its keys are there, no stale server record,
its files private). It opens no `MindLedger`: a home too broken to open is still examined,
each check on its own, one failing check never stopping the next.

`fix` changes only what cannot lose data: it takes the group's and others' bits off the
home's files and removes a server.json whose process is gone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from mindledger.compose import Home, open_keys, read_model_paths
from mindledger.domain.errors import MindError
from mindledger.home_modes import loose_entries, quiet, tighten_home
from mindledger.optional_parts import parts_report
from mindledger.server_files import remove_stale_record, server_file, server_record

SHOWN = 3  # loose files named in a line; the rest counted


@dataclass(frozen=True)
class Check:
    """One check of a home: `ok`, `behind` (a warning: nothing is wrong that use does not
    mend), `fail`, or `skipped` (an earlier check failed that this one needs)."""

    name: str
    status: str
    detail: str
    fix: str = ""


def doctor(home: Home, *, fix: bool = False) -> dict[str, Any]:
    """What `mind doctor --json` prints: `ok` (no home check failed), the checks, what `fix`
    changed, and every optional part."""
    fixed: list[str] = []
    checks = _checks(home, fix, fixed)
    return {
        "home": str(home.path),
        "ok": not any(c.status == "fail" for c in checks),
        "checks": [asdict(c) for c in checks],
        "fixed": fixed,
        "parts": parts_report(),
    }


def _checks(home: Home, fix: bool, fixed: list[str]) -> list[Check]:
    if not home.path.is_dir():
        what = "is a file" if home.path.exists() else "does not exist"
        return [Check("home", "fail", f"{home.path} {what}", "run `mind init`")]
    quiet(home.path)  # the modes check below says it; no warning line on top
    checks = [Check("home", "ok", str(home.path)), _server(home, fix, fixed)]
    gate = _guarded("settings", _settings, home)  # the rest need the settings, then a mind
    checks.append(gate)
    if gate.status == "ok":
        gate = _guarded("mind", _mind, home)
        checks.append(gate)
    for name, check in (("ledger", _ledger), ("keys", _keys), ("read model", _read_model)):
        ready = gate.status == "ok"
        checks.append(_guarded(name, check, home) if ready else _skipped(name, gate.name))
    # Last: opening the ledger and the read model may have made a lock or journal file.
    checks.append(_modes(home, fix, fixed))
    return checks


def _guarded(name: str, check: Callable[[Home], Check], home: Home) -> Check:
    try:
        return check(home)
    except MindError as e:
        return Check(name, "fail", str(e))
    except Exception as e:  # a boundary: doctor reports what broke and goes on to the next
        return Check(name, "fail", f"{type(e).__name__}: {e}")


def _skipped(name: str, after: str) -> Check:
    return Check(name, "skipped", f"not checked: the {after} check did not pass")


def _modes(home: Home, fix: bool, fixed: list[str]) -> Check:
    if fix:
        fixed += [f"{e.line(home.path)}, now private" for e in tighten_home(home.path)]
    loose = loose_entries(home.path)
    if not loose:
        return Check("modes", "ok", "the home is 0700 and its files are the owner's only")
    named = "; ".join(e.line(home.path) for e in loose[:SHOWN])
    more = f"; and {len(loose) - SHOWN} more" if len(loose) > SHOWN else ""
    return Check(
        "modes",
        "fail",
        f"other users may read or enter {len(loose)} of the home's files: {named}{more}",
        f"run `mind doctor --fix --home {home.path}`",
    )


def _server(home: Home, fix: bool, fixed: list[str]) -> Check:
    running, stale = server_record(home.path)
    if stale and fix:
        remove_stale_record(home.path)
        running, stale = server_record(home.path)
        if not stale:
            fixed.append(f"removed the stale {server_file(home.path).name}")
    if stale:
        return Check(
            "server",
            "fail",
            f"{server_file(home.path)} names a server that is not running (a stale record)",
            f"run `mind doctor --fix --home {home.path}` to remove it",
        )
    if running is not None:
        return Check("server", "ok", f"a server runs (pid {running.get('pid')})")
    return Check("server", "ok", "no server runs; none is recorded")


def _settings(home: Home) -> Check:
    loaded = home.loaded  # SettingError (a MindError) names the bad value
    return Check("settings", "ok", f"backend {loaded.values.backend}")


def _mind(home: Home) -> Check:
    if not home.exists():
        return Check("mind", "fail", f"no mind at {home.path}", "run `mind init`")
    return Check("mind", "ok", f"a {home.backend()} ledger")


def _ledger(home: Home) -> Check:
    from mindledger.ledger_reads import verify_home

    result = verify_home(home)
    if not result.ok:
        return Check(
            "ledger",
            "fail",
            f"the ledger fails verification: {result.reason}",
            "run `mind verify` for the details",
        )
    return Check("ledger", "ok", f"verifies ({result.events} events)")


def _keys(home: Home) -> Check:
    if home.backend() != "postgres" and not home.key_store.is_file():
        return Check(
            "keys",
            "fail",
            f"{home.key_store.name} is missing: sealed text cannot be opened",
            "restore it from a backup of this home",
        )
    keys = open_keys(home)
    try:
        pending = keys.pending_forgets()
    finally:
        keys.close()
    if pending:
        return Check("keys", "behind", f"{len(pending)} forget(s) unfinished", "run any command")
    unopened = _first_unopened(home)
    if unopened is not None:
        return Check("keys", "fail", unopened, "restore the key store from a backup of this home")
    return Check("keys", "ok", "the key store opens every sealed field")


def _first_unopened(home: Home) -> str | None:
    """Where the first sealed field its key will not open is, else None: `mind verify` checks
    the chain, not the keys, so a key store from another copy of the home passes it."""
    from mindledger.compose import open_reader
    from mindledger.domain.errors import LedgerCorruptError

    reader = open_reader(home)
    try:
        batch: list[Any] = []
        for row in reader.rows():
            batch.append(row)
            if len(batch) == 2000:
                _open_batch(reader, batch)
                batch = []
        _open_batch(reader, batch)
    except _Unopened as e:
        return str(e)
    except LedgerCorruptError as e:  # raised by an opening outside a batch: said as it is
        return str(e)
    finally:
        reader.close()
    return None


class _Unopened(Exception):
    """A sealed field that would not open, with the position of its event."""


def _open_batch(reader: Any, rows: list[Any]) -> None:
    from mindledger.domain.errors import LedgerCorruptError

    try:
        reader.open_states(rows)
    except LedgerCorruptError:
        for row in rows:  # one by one, to name the event
            try:
                reader.open_states([row])
            except LedgerCorruptError as e:
                raise _Unopened(f"position {row.position}: {first_clause(str(e))}") from None
        raise


def first_clause(text: str) -> str:
    """The message up to its advice (doctor gives its own)."""
    return text.split("; restore it from", 1)[0]


def _read_model(home: Home) -> Check:
    from mindledger.compose import open_reader
    from mindledger.projections.engine.status import projection_status

    reader = open_reader(home)
    try:
        head = reader.head()[0]
    finally:
        reader.close()
    paths = read_model_paths(home)
    stopped = _projection_stop(home)
    if stopped is not None:
        return stopped
    if not paths.working.exists() and not paths.published.exists():  # readers use either
        return Check("read model", "behind", "not built yet", "run `mind project`")
    try:
        (status,) = projection_status(paths, head)
    except Exception as e:  # the working file, read directly (in a read-only home, say)
        from mindledger.projections.engine.duckdb_files import damaged

        if not damaged(e):
            raise
        return _damaged(e, home)
    if status["lag"]:
        return Check(
            "read model",
            "behind",
            f"at position {status['position']}, {status['lag']} event(s) behind the ledger",
            "run `mind project` (any read catches up too)",
        )
    return Check("read model", "ok", f"current (position {status['position']})")


def _projection_stop(home: Home) -> Check | None:
    """A `fail` naming the event projection cannot get past, else None (caught up, as any read
    would: the read model is derived, so catching it up changes nothing of the mind's)."""
    from mindledger.compose import read_model
    from mindledger.projections.engine.duckdb_files import damaged
    from mindledger.projections.engine.projector import ProjectionError

    try:
        with read_model(home):
            return None
    except ProjectionError as e:
        where = f"position {e.position}" if e.position is not None else "an event"
        first = (e.reason.splitlines() or [""])[0][:200]
        return Check(
            "read model",
            "fail",
            f"projection stops at {where}: {first}",
            "`mind log` shows the event; this mindledger cannot read it (a newer one may), "
            "so turns are refused until one does",
        )
    except Exception as e:
        if not damaged(e):
            raise
        return _damaged(e, home)


def _damaged(e: Exception, home: Home) -> Check:
    """The `fail` for a damaged read-model file, and how to rebuild it."""
    from mindledger.projections.engine.read_only_home import writable

    first = (str(e).splitlines() or [""])[0][:200]
    fix = (
        "run `mind replay --swap` (it rebuilds the read model from the ledger; nothing is "
        "lost), or any read such as `mind recall`, which rebuilds it first"
    )
    if not writable(home.path, read_model_paths(home).working):
        fix = "run `mind replay --swap` where the home can be written (this process cannot)"
    return Check("read model", "fail", f"damaged: {first}", fix)
