"""Commands for the read side's processes: project (catch up or follow) and replay."""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import click

from mindledger.cli.output import echo, emit_json
from mindledger.compose import Home, open_reader, read_model_paths


def _progress(total: int, enabled: bool) -> Any:
    """A progress bar on a terminal for long catch-ups; a no-op elsewhere."""
    if enabled and total > 5000 and sys.stderr.isatty():
        return click.progressbar(length=total, label="projecting", file=sys.stderr)
    return _NoBar()


class _NoBar:
    def __enter__(self) -> _NoBar:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def update(self, n: int) -> None:
        return None


@click.command()
@click.option("--follow", is_flag=True, help="Keep following new events until SIGINT/SIGTERM.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def project(home: Home, follow: bool, as_json: bool) -> None:
    """Run the projector: bring the DuckDB read models up to the ledger head.

    Without --follow it catches up and exits, printing how many events it applied. With
    --follow it stays running, publishing a read-only copy after every batch, so listings and
    queries in other processes stay current without waiting.

    Example:

        mind project --follow &
    """
    from mindledger.projections.engine.follower import follow as follow_ledger
    from mindledger.projections.engine.projector import Projector
    from mindledger.projections.engine.read_only_home import require_writable
    from mindledger.projections.engine.readmodel import projector_lock

    paths, reader = read_model_paths(home), open_reader(home)
    require_writable(home.path, paths.working, doing="build the read model")
    started = time.perf_counter()
    if follow:

        def report(applied: int, position: int) -> None:
            if not as_json:
                echo(f"applied {applied} events, now at position {position}")

        if not as_json:
            echo("following the ledger; Ctrl-C stops")
        total = follow_ledger(paths, reader, report)
        position = reader.head()[0]
    else:
        with projector_lock(paths.lock, wait=True):
            projector = Projector(paths.working)
            try:
                lag = reader.head()[0] - projector.position()
                with _progress(lag, not as_json) as bar:
                    total = projector.catch_up(reader, on_batch=bar.update, maintain=True)
                projector.publish(paths.published)
                position = projector.position()
            finally:
                projector.close()
    seconds = time.perf_counter() - started
    if as_json:
        emit_json({"applied": total, "position": position, "seconds": round(seconds, 3)})
    else:
        echo(f"applied {total} events in {seconds:.2f}s; read model at position {position}")


@click.command()
@click.option(
    "--into",
    "target",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A new DuckDB file to rebuild into (default: a temporary file).",
)
@click.option(
    "--check", is_flag=True, help="Compare with the live read model; exit 1 if they differ."
)
@click.option("--swap", is_flag=True, help="Make the rebuilt read model the live one.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def replay(home: Home, target: Path | None, check: bool, swap: bool, as_json: bool) -> None:
    """Rebuild every read model from position 0 into a fresh DuckDB file.

    The live read model is never touched, unless --swap makes the rebuild live. Replay makes no
    model calls: two replays of the same ledger give identical tables.

    Example:

        mind replay --into /tmp/rebuilt.duckdb --check
    """
    from mindledger.projections.engine.readmodel import ensure_fresh
    from mindledger.projections.engine.replay import differences, live_position, rebuild, swap_in

    if target is not None:
        from mindledger.cli.output_paths import refuse_home_file

        refuse_home_file(home, target, "--into")
    if swap:
        _require_verified(home)
    paths, reader = read_model_paths(home), open_reader(home)
    if target is None or swap or check:
        from mindledger.projections.engine.read_only_home import require_writable

        require_writable(home.path, paths.working, doing="replay in this home")
    scratch = None
    if target is None:
        scratch = Path(tempfile.mkdtemp(prefix="replay-", dir=home.path))
        target = scratch / "readmodel.duckdb"
    stop = None
    if check:
        ensure_fresh(paths, reader)
        stop = live_position(paths)
    started = time.perf_counter()
    with _progress(reader.head()[0], not as_json) as bar:
        applied = rebuild(target, reader, stop=stop, on_batch=bar.update)
    seconds = time.perf_counter() - started
    diffs = differences(paths.published, target) if check else []
    if swap and not diffs:
        swap_in(paths, target)
    if scratch is not None:
        shutil.rmtree(scratch)  # nothing named it, so nothing should keep it
    data = {
        "into": str(target) if scratch is None else None,
        "applied": applied,
        "seconds": round(seconds, 3),
        "checked": check,
        "identical": not diffs if check else None,
        "differences": diffs,
        "swapped": swap and not diffs,
    }
    if as_json:
        emit_json(data)
    else:
        echo(f"replayed {applied} events into {data['into'] or 'a scratch file'} in {seconds:.2f}s")
        if check:
            echo(
                "identical to the live read model"
                if not diffs
                else f"{len(diffs)} differences from the live read model:"
            )
            for d in diffs:
                echo(f"  {d['table']}: {d['rows']} rows only in {d['only_in']}")
        if data["swapped"]:
            echo("swapped in as the live read model")
    if diffs:
        raise SystemExit(1)


def _require_verified(home: Home) -> None:
    """A swap replaces the read model, which may be the only evidence left of a truncated
    ledger: refuse it unless the ledger verifies against every anchor."""
    from mindledger.cli.ledger_cmds import verify_home
    from mindledger.domain.errors import LedgerUnverifiedError

    result = verify_home(home)
    if not result.ok:
        raise LedgerUnverifiedError(
            f"the ledger does not verify ({result.reason}); nothing was swapped: run "
            "`mind verify` to see why before replacing the read model"
        )


def register(group: click.Group) -> None:
    """Add these commands to the `mind` group."""
    group.add_command(project)
    group.add_command(replay)
