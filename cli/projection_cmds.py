"""Commands for the read side's processes: project (catch up or follow) and replay."""

from __future__ import annotations

from pathlib import Path

import click

from mindledger.cli.arguments import GivenPath
from mindledger.cli.export_cmds import PROGRESS_FROM, TerminalBar
from mindledger.cli.output import echo, emit_json
from mindledger.compose import Home

# `mind project` and `mind replay` have always drawn a bar only for more than 5000 events.
PROJECT_PROGRESS_FROM = PROGRESS_FROM + 1


@click.command()
@click.option("--follow", is_flag=True, help="Keep following new events until SIGINT/SIGTERM.")
@click.option(
    "--vectors",
    is_flag=True,
    help="Then embed every stored item not embedded yet (recall's vector channel).",
)
@click.option(
    "--rebuild-vectors", is_flag=True, help="Embed every stored item again, from position 0."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def project(home: Home, follow: bool, vectors: bool, rebuild_vectors: bool, as_json: bool) -> None:
    """Run the projector: bring the DuckDB read models up to the ledger head.

    Without --follow it catches up and exits, printing how many events it applied. With
    --follow it stays running, publishing a read-only copy after every batch, so listings and
    queries in other processes stay current without waiting; it also embeds new stored items
    for recall's vector channel in the background (as `mind serve` does), which --vectors
    does here once.

    Example:

        mind project --follow &
    """
    from mindledger.cli.floor import opened

    mind = opened(home)
    if follow:

        def following() -> None:
            if not as_json:
                echo("following the ledger; Ctrl-C stops")

        def report(applied: int, position: int) -> None:
            if not as_json:
                echo(f"applied {applied} events, now at position {position}")

        data = mind.follow(following, report).model_dump(mode="json")
    else:
        with TerminalBar(not as_json, PROJECT_PROGRESS_FROM) as bar:
            data = mind.project(
                progress=bar, vectors=vectors, rebuild_vectors=rebuild_vectors
            ).model_dump(mode="json")
    if as_json:
        emit_json(data)
    else:
        echo(
            f"applied {data['applied']} events in {data['seconds']:.2f}s; "
            f"read model at position {data['position']}"
        )
        done = data.get("vectors")
        if done is not None:
            echo(
                f"embedded {done['embedded']} items and {done.get('windows', 0)} windows in "
                f"{done['seconds']:.2f}s; vectors at "
                f"position {done['position']}"
                if done["model"]
                else "vectors are off (embedding.recall or embedding.model off, or no model)"
            )


@click.command()
@click.option(
    "--into",
    "target",
    type=GivenPath(dir_okay=False, path_type=Path),
    help="A new DuckDB file to rebuild into (default: a temporary file); a name that is "
    "there already, a symbolic link included, is refused.",
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
    from mindledger.cli.floor import opened

    with TerminalBar(not as_json, PROJECT_PROGRESS_FROM) as bar:
        replayed = opened(home).replay(target, check=check, swap=swap, progress=bar)
    data = replayed.model_dump(mode="json")
    diffs = data["differences"]
    if as_json:
        emit_json(data)
    else:
        echo(
            f"replayed {data['applied']} events into {data['into'] or 'a scratch file'} "
            f"in {data['seconds']:.2f}s"
        )
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


def register(group: click.Group) -> None:
    """Add these commands to the `mind` group."""
    group.add_command(project)
    group.add_command(replay)
