"""Commands over the ledger itself: init, status, log, verify."""

from __future__ import annotations

from pathlib import Path

import click

from mindledger.cli.arguments import GivenPath
from mindledger.cli.floor import opened
from mindledger.cli.output import echo, emit_json, table
from mindledger.cli.quick_path import print_status
from mindledger.compose import Home
from mindledger.domain.choices import KINDS


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
    from mindledger import init as make

    data = make(home, name, dsn=dsn, schema=schema).model_dump(mode="json")
    if as_json:
        emit_json(data)
        return
    echo(f"Initialised mind {data['name']!r} at {data['home']} (ledger {data['ledger_id'][:12]})")


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def status(home: Home, as_json: bool) -> None:
    """Show the mind's name, model, ledger head and read-model positions.

    Example:

        mind status --json
    """
    print_status(opened(home).status().model_dump(mode="json"), home.path, as_json)


@click.command()
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 100_000))
@click.option("--kind", type=click.Choice(KINDS), help="Only events of one aggregate kind.")
@click.option(
    "--turn",
    "turn_ref",
    metavar="ID",
    help="Instead: the exact messages the model was sent in this turn: last, its number (12 or "
    "#12; all digits is a number first, then an id prefix), its id or 4+ hex digits of it.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def log(home: Home, limit: int, kind: str | None, turn_ref: str | None, as_json: bool) -> None:
    """Show the latest events: position, time, type, aggregate and short hash.

    Example:

        mind log --limit 5 --kind commitment

        mind log --turn last
    """
    if turn_ref is not None:
        from mindledger.cli.turn_prompt import echo_prompt

        data = opened(home).turn_prompt(turn_ref).model_dump(mode="json")
        emit_json(data) if as_json else echo_prompt(data)
        return
    events = opened(home).log(limit, kind).model_dump(mode="json")
    if as_json:
        emit_json(events)
        return
    shown = [{**e, "hash": e["hash"][:12], "aggregate": e["aggregate"][:8]} for e in events]
    table(shown, ["position", "time", "type", "aggregate", "hash"], "The ledger is empty.")


def _head_hash(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    from mindledger.domain.errors import InvalidInputError
    from mindledger.rules import checked_head

    try:
        return checked_head(value)
    except InvalidInputError as e:
        raise click.BadParameter(str(e)) from None


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
    type=GivenPath(exists=True, dir_okay=False, path_type=Path),
    help="Instead: check a ledger export (`mind export --format jsonl`), no mind needed.",
)
@click.option(
    "--deep",
    is_flag=True,
    help="With --export: also read every event as an import would and replay it (slower).",
)
@click.pass_obj
def verify(
    home: Home, as_json: bool, head: str | None, export_file: Path | None, deep: bool
) -> None:
    """Recompute every hash from the stored bytes; exit 1 at the first bad position.

    Reports deleted, inserted, reordered and changed events, and a ledger that ends before a
    head recorded outside it (the home's ledger-head.json, the read model, or --head).

    With --export FILE it checks an export file line by line instead, no mind needed (exit 1
    at the first bad line; with --head, also when that hash is no event's hash in the file).
    Two levels: by default its integrity, as for a home (each line's position, link and hash
    recomputed from the bytes the chain hashed, the count and head); with --deep also what
    `mind import ledger` checks before it writes anything: the carried keys open their
    sealed fields and every event reads and replays into a scratch read model.

    Example:

        mind verify --json

        mind verify --export ./backup/ledger.jsonl

        mind verify --export ./backup/ledger.jsonl --deep
    """
    if export_file is not None:
        from mindledger.cli.export_cmds import verify_export

        verify_export(export_file, as_json, head, deep)
        return
    if deep:
        raise click.UsageError("--deep checks an export file: give --export FILE")
    from mindledger import verify_home

    # Not `MindLedger.verify`: a ledger that cannot be read is an error line here, and a home
    # without a mind is verified as a failure rather than refused; the result is the same.
    data = verify_home(home, head, error_as_failure=as_json).model_dump(mode="json")
    if as_json:
        emit_json(data)
    elif data["ok"]:
        echo(f"OK: {data['events']} events, head {data['head']}")
    elif data["first_bad"] is not None:
        echo(
            f"BROKEN at position {data['first_bad']}: {data['reason']} "
            f"({data['events']} events verified before it)"
        )
    else:
        echo(f"BROKEN: {data['reason']} ({data['events']} events verified)")
    if not as_json:
        for anchor in data["anchors"]:
            at = f" (position {anchor['position']})" if anchor["position"] is not None else ""
            echo(f"  anchor {anchor['source']}{at}: {anchor['status']}")
    if not data["ok"]:
        raise SystemExit(1)


def register(group: click.Group) -> None:
    """Add these commands to the `mind` group."""
    for command in (init, status, log, verify):
        group.add_command(command)
