"""Commands over the ledger itself: init, status, log, verify."""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path
from typing import Any

import click

from mindledger.cli.init_cleanup import Creation
from mindledger.cli.output import echo, emit_json, table
from mindledger.compose import Home, finish_forgets, open_mind, open_reader, read_model_paths
from mindledger.domain.errors import AlreadyInitialisedError, InvalidInputError, MindError
from mindledger.domain.events import FORGOTTEN_MARK

KINDS = ("identity", "commitment", "concept", "thread", "import")


@click.command()
@click.option("--name", default="Mind", show_default=True, help="The mind's first name.")
@click.option(
    "--postgres",
    "dsn",
    metavar="DSN",
    help="Keep the ledger in PostgreSQL (postgresql://user:pw@host:port/db).",
)
@click.option("--schema", default="", help="PostgreSQL schema for this mind (default public).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def init(home: Home, name: str, dsn: str | None, schema: str, as_json: bool) -> None:
    """Create a new mind (a fresh ledger with its own genesis hash) in the home folder.

    The ledger is a SQLite file in the home folder unless --postgres is given; the DuckDB
    read models always live in the home folder.

    Example:

        mind --home ./echo init --name Echo
    """
    from mindledger.domain.identity import clean_name

    name = clean_name(name)  # a refused name creates nothing
    if home.path.exists() and not home.path.is_dir():
        raise InvalidInputError(
            f"{home.path} is a file, not a folder; give --home (or MIND_HOME) a folder path"
        )
    created = Creation(home)
    try:
        if dsn:
            home.path.mkdir(parents=True, exist_ok=True)
            home.config_file.write_text(
                json.dumps(
                    {
                        **home.config(),
                        "backend": "postgres",
                        "postgres_dsn": dsn,
                        "postgres_schema": schema,
                    },
                    indent=2,
                )
            )
            # The settings this process read before config.json said postgres: the new mind is
            # made where the flags say, as every later command will look for it.
            home = home.with_flags(
                backend=("--postgres", "postgres"),
                postgres_dsn=("--postgres", dsn),
                postgres_schema=("--schema", schema),
            )
        app = open_mind(home, create=True)
        with contextlib.closing(open_reader(home)) as reader:
            ledger_id = reader.meta()[0]
        app.init(name, ledger_id)
    except AlreadyInitialisedError:
        raise  # the mind that is there is someone's: leave it
    except BaseException as e:
        created.undo()
        if isinstance(e, OSError):
            raise MindError(f"cannot create a mind at {home.path} ({e.strerror or e})") from None
        raise
    if as_json:
        emit_json(
            {
                "name": name,
                "home": str(home.path),
                "backend": home.backend(),
                "ledger_id": ledger_id,
            }
        )
        return
    echo(f"Initialised mind {name!r} at {home.path} (ledger {ledger_id[:12]})")


def status_data(home: Home) -> dict[str, Any]:
    """What `mind status --json` prints (the HTTP API's status too)."""
    from mindledger.projections.engine.status import projection_status

    reader = open_reader(home)
    try:
        ledger_id, created_at, _ = reader.meta()
        position, head_hash = reader.head()
    finally:
        reader.close()
    mind = open_mind(home)
    try:
        identity = mind.identity()
    finally:
        mind.close()
    return {
        "home": str(home.path),
        "backend": home.backend(),
        "name": identity.name,
        "model": identity.model,
        "ledger_id": ledger_id,
        "created_at": created_at,
        "head": {"position": position, "hash": head_hash},
        "projections": projection_status(read_model_paths(home), position),
    }


def event_json(row: Any, state: dict[str, Any] | None = None) -> dict[str, Any]:
    """One ledger event as `mind log --json` prints it (the HTTP events stream too); `state`:
    the row's state as the reader opened it (sealed fields in the clear, or "[forgotten]")."""
    if state is None:
        state = json.loads(row.state or b"{}")  # rows join events: a row always has its state
    state = {k: v for k, v in state.items() if k != FORGOTTEN_MARK}
    return {
        "position": row.position,
        "time": state.get("timestamp"),
        "type": row.topic,
        "aggregate": row.originator_id,
        "version": row.version,
        "hash": row.hash,
        "payload": {k: v for k, v in state.items() if k != "timestamp"},
    }


def opened_events(reader: Any, rows: list[Any]) -> list[dict[str, Any]]:
    """`event_json` of each row, its sealed fields opened by the reader."""
    return [event_json(r, s) for r, s in zip(rows, reader.open_states(rows), strict=True)]


def log_events(home: Home, limit: int, kind: str | None = None) -> list[dict[str, Any]]:
    """The latest `limit` events (of one aggregate kind), oldest first: `mind log --json`."""
    reader = open_reader(home)
    try:
        return opened_events(reader, reader.tail(limit, f"mind.{kind}." if kind else ""))
    finally:
        reader.close()


def verify_json(home: Home, head: str | None = None) -> dict[str, Any]:
    """What `mind verify --json` prints: a ledger that cannot be read at all is a failed
    verification, not an error."""
    from mindledger.adapters.hash_chain import VerifyResult

    try:
        result = verify_home(home, head)
    except MindError as e:
        result = VerifyResult(False, 0, None, str(e), None)
    data: dict[str, Any] = result.as_json()
    return data


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def status(home: Home, as_json: bool) -> None:
    """Show the mind's name, model, ledger head and read-model positions.

    Example:

        mind status --json
    """
    data = status_data(home)
    if as_json:
        emit_json(data)
        return
    head = data["head"]
    echo(f"{data['name']} ({data['backend']} ledger at {home.path})")
    echo(f"  model      {data['model']}")
    echo(f"  ledger     {data['ledger_id']} created {data['created_at']}")
    echo(f"  head       position {head['position']}, hash {(head['hash'] or '-')[:16]}")
    for p in data["projections"]:
        echo(f"  projection {p['name']}: position {p['position']}, lag {p['lag']}")


@click.command()
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 100_000))
@click.option("--kind", type=click.Choice(KINDS), help="Only events of one aggregate kind.")
@click.option(
    "--turn",
    "turn_ref",
    metavar="ID",
    help="Instead: the exact messages the model was sent in this turn (id, a prefix, or last).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def log(home: Home, limit: int, kind: str | None, turn_ref: str | None, as_json: bool) -> None:
    """Show the latest events: position, time, type, aggregate and short hash.

    Example:

        mind log --limit 5 --kind commitment

        mind log --turn last
    """
    finish_forgets(home)  # a forget a crash interrupted, before its words are shown
    if turn_ref is not None:
        from mindledger.cli.turn_prompt import echo_prompt, resolve_turn, turn_prompt

        data = turn_prompt(home, resolve_turn(home, turn_ref))
        emit_json(data) if as_json else echo_prompt(data)
        return
    events = log_events(home, limit, kind)
    if as_json:
        emit_json(events)
        return
    shown = [{**e, "hash": e["hash"][:12], "aggregate": e["aggregate"][:8]} for e in events]
    table(shown, ["position", "time", "type", "aggregate", "hash"], "The ledger is empty.")


HEX_DIGEST = re.compile(r"[0-9a-fA-F]{64}")


def _head_hash(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None and not HEX_DIGEST.fullmatch(value.strip()):
        raise click.BadParameter("give a head hash: 64 hexadecimal digits (from `mind status`)")
    return value.strip().lower() if value is not None else None


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option(
    "--head",
    metavar="HASH",
    callback=_head_hash,
    help="Also check that this head hash (one you kept, e.g. from `mind status`) is in the ledger.",
)
@click.option(
    "--export",
    "export_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Instead: check a ledger export (`mind export --format jsonl`), no mind needed.",
)
@click.pass_obj
def verify(home: Home, as_json: bool, head: str | None, export_file: Path | None) -> None:
    """Recompute every hash from the stored bytes; exit 1 at the first bad position.

    Reports deleted, inserted, reordered and changed events, and a ledger that ends before a
    head recorded outside it (the home's ledger-head.json, the read model, or --head).
    With --export FILE it checks an export file line by line instead (exit 1 at the first bad
    line; with --head, also when that hash is no event's hash in the file).

    Example:

        mind verify --json

        mind verify --export ./backup/ledger.jsonl
    """
    if export_file is not None:
        from mindledger.cli.export_cmds import verify_export

        verify_export(export_file, as_json, head)
        return
    from mindledger.adapters.hash_chain import VerifyResult

    try:
        finish_forgets(home)  # a forget a crash interrupted, like every command that opens it
        result = verify_home(home, head)
    except MindError as e:
        if not as_json:
            raise
        result = VerifyResult(False, 0, None, str(e), None)
    if as_json:
        emit_json(result.as_json())
    elif result.ok:
        echo(f"OK: {result.events} events, head {result.head_hash}")
    elif result.first_bad is not None:
        echo(
            f"BROKEN at position {result.first_bad}: {result.reason} "
            f"({result.events} events verified before it)"
        )
    else:
        echo(f"BROKEN: {result.reason} ({result.events} events verified)")
    if not as_json:
        for anchor in result.anchors:
            at = f" (position {anchor.position})" if anchor.position is not None else ""
            echo(f"  anchor {anchor.source}{at}: {anchor.status}")
    if not result.ok:
        raise SystemExit(1)


def verify_home(home: Home, head: str | None = None) -> Any:
    """The verify use case over this home's ledger, with every head kept outside it: the
    anchor file, the published read model and `head` (a hash the user kept)."""
    from mindledger.adapters.hash_chain import AnchorCheck
    from mindledger.adapters.head_anchor import Anchor, HeadAnchorFile
    from mindledger.adapters.verification import verify_ledger
    from mindledger.projections.engine.status import read_model_head

    anchors: list[Anchor] = []
    notes: list[AnchorCheck] = []
    unreadable: list[AnchorCheck] = []
    try:
        kept = HeadAnchorFile(home.head_anchor).read()
        if kept is None:  # a note: homes made before anchors existed have none
            missing = (
                "missing (not a failure: homes made before anchors have none; "
                "the next write starts one)"
            )
            notes.append(AnchorCheck(str(home.head_anchor), None, None, missing))
        else:
            anchors.append(kept)
    except MindError as e:
        unreadable.append(AnchorCheck(str(home.head_anchor), None, None, f"unreadable: {e}"))
    reader = open_reader(home)
    try:
        try:
            projected = read_model_head(read_model_paths(home))
            if projected is not None:
                anchors.append(Anchor("read model", projected[1], projected[0]))
        except MindError as e:
            notes.append(AnchorCheck("read model", None, None, f"unreadable: {e}"))
        if head is not None:
            anchors.append(Anchor("--head", head))
        return verify_ledger(reader, anchors, notes, unreadable=unreadable)
    finally:
        reader.close()


def register(group: click.Group) -> None:
    """Add these commands to the `mind` group."""
    for command in (init, status, log, verify):
        group.add_command(command)
