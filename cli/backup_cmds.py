"""`mind backup DEST`: the command; the use case is the floor's (`mindledger.backup`)."""

from __future__ import annotations

from pathlib import Path

import click

from mindledger.cli.arguments import GivenPath
from mindledger.cli.output import echo, emit_json, path_text
from mindledger.compose import Home


@click.command()
@click.argument("dest", type=GivenPath(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def backup(home: Home, dest: Path, as_json: bool) -> None:
    """Copy the mind into DEST (a new or empty folder) while it keeps working.

    The ledger and its key store are copied as one instant through SQLite's online backup API
    (never a file copy), with config.json and .env; the read models are left out and rebuild
    on the copy's first read. The copy is verified before it is named DEST, and opens as a
    working mind: `mind --home DEST verify`. DEST is made 0700, its files 0600; it holds the
    keys to every sealed word, so keep it as private as the home. A PostgreSQL mind is backed
    up with `pg_dump` instead (the command says how).

    Example:

        mind backup ~/backups/echo-2026-05-01

        mind --home ~/backups/echo-2026-05-01 verify
    """
    from mindledger.cli.export_cmds import TerminalBar
    from mindledger.cli.floor import opened

    with TerminalBar(not as_json) as bar:
        done = opened(home).backup(dest, progress=bar).model_dump(mode="json")
    if as_json:
        emit_json(done)
        return
    forgotten = f", {done['forgotten_keys']} forgotten keys" if done["forgotten_keys"] else ""
    echo(
        f"backed up {done['events']} events to {path_text(done['dest'])} "
        f"({done['bytes'] / 1024:.1f} KB, head {(done['head'] or '-')[:16]}{forgotten}), "
        f"verified, in {done['seconds']:.2f}s"
    )


def register(group: click.Group) -> None:
    """Add this command to the `mind` group."""
    group.add_command(backup)
