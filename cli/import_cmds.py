"""`mind import`: bring conversations from elsewhere into the ledger (no model calls)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from cli.compose import Home, open_mind
from cli.output import echo, emit_json

PATH = click.Path(exists=True, dir_okay=False, path_type=Path)


@click.group(name="import")
def import_() -> None:
    """Import conversations as observed messages; re-importing adds nothing new.

    Example:

        mind import locomo ../shared/data/locomo/locomo10.json --sample conv-26
    """


@import_.command()
@click.argument("path", type=PATH)
@click.option("--sample", metavar="ID", help="Only this sample (e.g. conv-26).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def locomo(home: Home, path: Path, sample: str | None, as_json: bool) -> None:
    """Import the LoCoMo benchmark file: every turn with its speaker, session time and dia_id.

    Example:

        mind import locomo locomo10.json --sample conv-26
    """
    from adapters.importers import import_locomo

    done = import_locomo(open_mind(home), path, sample)
    if as_json:
        emit_json(done)
        return
    for d in done:
        echo(f"{d['sample']}: {import_summary(d)}")


@import_.command()
@click.argument("path", type=PATH)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def chat(home: Home, path: Path, as_json: bool) -> None:
    """Import a JSONL transcript: one {"role", "content", "time"?} object per line.

    Example:

        mind import chat history.jsonl
    """
    from adapters.importers import import_chat

    done = import_chat(open_mind(home), path)
    if as_json:
        emit_json(done)
    else:
        echo(f"{done['source']}: {import_summary(done)}")


def import_summary(done: dict[str, Any]) -> str:
    """`3 messages added, 2 skipped (1 already imported, 1 empty message)`."""
    reasons = ", ".join(f"{n} {why}" for why, n in done["skipped_reasons"].items())
    return f"{done['added']} messages added, {done['skipped']} skipped" + (
        f" ({reasons})" if reasons else ""
    )


def register(group: click.Group) -> None:
    """Add these commands to the `mind` group."""
    from cli.export_cmds import import_ledger

    import_.add_command(import_ledger)
    group.add_command(import_)
