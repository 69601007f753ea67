"""`mind import`: bring conversations from elsewhere into the ledger (no model calls)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from mindledger.cli.arguments import GivenPath
from mindledger.cli.export_cmds import TerminalBar
from mindledger.cli.output import echo, emit_json, table
from mindledger.compose import Home

PATH = GivenPath(exists=True, dir_okay=False, path_type=Path)
IMPORT_PROGRESS_FROM = 1000  # items: an import's file is read whole first, so a bar helps sooner


@click.group(name="import")
def import_() -> None:
    """Import conversations as observed messages; re-importing adds nothing new.

    Run `mind init` first: an import goes into an existing mind.

    Example:

        mind init --name Echo
        mind import locomo ../shared/data/locomo/locomo10.json --sample conv-26
        mind import pmm ledger.json
        mind import chatgpt chatgpt-export.zip
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
    from mindledger.cli.floor import opened

    done = opened(home).import_locomo(path, sample).model_dump(mode="json")
    if as_json:
        emit_json(done)
        return
    for d in done:
        echo(f"{d['sample']}: {import_summary(d)}")


@import_.command()
@click.argument("path", type=PATH)
@click.option(
    "--conversation",
    metavar="NAME",
    help=(
        "Import into the conversation of this name: a new one, the one this transcript is "
        "(again, grown, or a part of it), or one it continues (its first message is not there); "
        "one holding another transcript that begins alike is refused."
    ),
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def chat(home: Home, path: Path, conversation: str | None, as_json: bool) -> None:
    """Import a JSONL transcript: one {"role", "content", "time"?} object per line.

    A transcript is known by its messages, not its file name: importing it again adds
    nothing, a grown copy (the same first messages, then more) adds the new ones, and a
    transcript that differs is another conversation. Conversations imported by earlier
    versions (named after their file) are found the same way, whatever the file is called now.

    With --conversation NAME the transcript goes into that conversation: when it is new, when
    the transcript is that conversation from some message on (again, grown, or a later part),
    or when it continues it (its first message is not there: a day's log after the day
    before). A different transcript is never folded into another: one whose first message is
    in NAME but whose next ones differ is refused and nothing is written; import it without
    --conversation, or give a new NAME.

    Example:

        mind import chat history.jsonl
        mind import chat monday.jsonl --conversation work
        mind import chat tuesday.jsonl --conversation work
    """
    from mindledger.cli.floor import opened

    done = opened(home).import_chat(path, conversation).model_dump(mode="json")
    if as_json:
        emit_json(done)
    else:
        echo(f"{done['file']} into {done['source']}: {import_summary(done)}")


@import_.command()
@click.argument("path", type=PATH)
@click.option(
    "--accept-broken",
    is_flag=True,
    help="Import even when some hashes do not recompute (the breaks are recorded with it).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def pmm(home: Home, path: Path, accept_broken: bool, as_json: bool) -> None:
    """Import a Persistent Mind Model ledger export (a JSON array of hash-linked events).

    Run `mind init` first (the import goes into that mind). The chain is verified first with
    PMM's own hash rule: a file with an event whose hash does not recompute, or whose prev_hash
    does not name the event before it (a deleted, cut or swapped event), is refused unless
    --accept-broken; forks are reported. Messages, commitments, concepts and names become those
    here, with PMM's times; every other event is kept as an imported record (`mind log`, `mind
    query`, recall). Events already imported from the same PMM ledger (by PMM id and hash) are
    skipped, so a later, longer export adds only what is new.

    Example:

        mind init --name Echo
        mind import pmm chat_session_ledger.json
    """
    from mindledger.cli.floor import opened

    with TerminalBar(not as_json, IMPORT_PROGRESS_FROM) as bar:
        imported = opened(home).import_pmm(path, accept_broken=accept_broken, progress=bar)
    done = imported.model_dump(mode="json")
    if as_json:
        emit_json(done)
        return
    echo(
        f"{done['source']}: {done['events']} PMM events, {done['added']} imported, "
        f"{done['skipped']} already imported"
    )
    # Link breaks (only with --accept-broken) are named when there are some.
    links = f"{_faults(done['link_breaks'], 'link break')}, " if done["link_breaks"] else ""
    echo(f"chain: {_faults(done['breaks'], 'hash break')}, {links}{_faults(done['forks'], 'fork')}")
    table(done["kinds"], ["kind", "became", "count"], "no events")
    for row in done["kinds"]:
        if "reason" in row:
            echo(f"  {row['count']} {row['kind']} not accepted: {row['reason']}")


@import_.command()
@click.argument("path", type=PATH)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def chatgpt(home: Home, path: Path, as_json: bool) -> None:
    """Import a ChatGPT data export: its conversations.json, or the export's zip.

    Run `mind init` first. Each conversation's current branch (from its current node up to the
    root) becomes an observed conversation with speakers, times and title; re-importing adds
    only new messages. A message with control characters is stored with them escaped (`\\x1b`),
    one over 100,000 characters as several parts; both are counted in notes.

    Example:

        mind init --name Echo
        mind import chatgpt chatgpt-export.zip
    """
    from mindledger.cli.floor import opened

    with TerminalBar(not as_json, IMPORT_PROGRESS_FROM) as bar:
        done = opened(home).import_chatgpt(path, progress=bar).model_dump(mode="json")
    if as_json:
        emit_json(done)
        return
    echo(f"{done['source']}: {done['conversations']} conversations, {import_summary(done)}")
    for what, n in done["notes"].items():
        echo(f"  {n} {what}")


def _faults(ids: list[str], what: str) -> str:
    if not ids:
        return f"no {what}s"
    shown = "; ".join(ids[:5]) + (f"; and {len(ids) - 5} more" if len(ids) > 5 else "")
    return f"{len(ids)} {what}{'s' if len(ids) > 1 else ''} (PMM id {shown})"


def import_summary(done: dict[str, Any]) -> str:
    """`3 messages added, 2 skipped (1 already imported, 1 empty message)`."""
    reasons = ", ".join(f"{n} {why}" for why, n in done["skipped_reasons"].items())
    return f"{done['added']} messages added, {done['skipped']} skipped" + (
        f" ({reasons})" if reasons else ""
    )


def register(group: click.Group) -> None:
    """Add these commands to the `mind` group."""
    from mindledger.cli.export_cmds import import_ledger

    import_.add_command(import_ledger)
    group.add_command(import_)
