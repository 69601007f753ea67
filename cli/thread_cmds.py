"""Commands for threads: thread open/resolve, threads."""

from __future__ import annotations

import click

from mindledger.cli.autonomy_cmds import tick
from mindledger.cli.floor import opened
from mindledger.cli.options import as_of_option
from mindledger.cli.output import echo, emit_json, table
from mindledger.compose import Home
from mindledger.domain.choices import VERDICTS
from mindledger.rules import AsOf


@click.group()
def thread() -> None:
    """Open and resolve threads: questions and promises that stay with the mind.

    Example:

        mind thread open "Why did the import fail?" --content "It failed on 3 May..."
    """


@thread.command(name="open")
@click.argument("label")
@click.option("--content", required=True, help="Self-contained content (at most 800 chars).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def open_(home: Home, label: str, content: str, as_json: bool) -> None:
    """Open a thread labelled LABEL (at most 120 characters); prints its id.

    Example:

        mind thread open "Ask about the launch date" --content "The user hinted at May"
    """
    done = opened(home).open_thread(label, content).model_dump(mode="json")
    if as_json:
        emit_json(done)
        return
    echo(done["id"])
    demand = done["triage"]
    if demand:
        lowest = ", ".join(f"{c['id']} {c['label']!r}" for c in demand["candidates"])
        echo(
            f"triage: {demand['live']} live threads, cap {demand['cap']}; resolve some "
            f"(`mind thread resolve ID`). Lowest tension: {lowest}",
            err=True,
        )


@thread.command()
@click.argument("thread_id", metavar="ID")
@click.option("--as", "verdict", type=click.Choice(VERDICTS), required=True)
@click.option("--reason", help="Required for dissolved and abandoned.")
@click.option("--artifact", help="Required for answered and superseded: a path or event id.")
@click.option("--by", help="The superseding thread id (for superseded).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def resolve(
    home: Home,
    thread_id: str,
    verdict: str,
    reason: str | None,
    artifact: str | None,
    by: str | None,
    as_json: bool,
) -> None:
    """Resolve thread ID with a verdict; the thread is then kept, frozen.

    Example:

        mind thread resolve t1a2b3c4d --as dissolved --reason "the question no longer applies"
    """
    mind = opened(home)
    resolved = mind.resolve_thread(thread_id, verdict, reason=reason, artifact=artifact, by=by)
    done = resolved.model_dump(mode="json")
    if as_json:
        emit_json(done)
        return
    echo(f"resolved {done['id']} as {verdict}")


@click.command()
@click.option("--all", "include_resolved", is_flag=True, help="Include resolved threads.")
@as_of_option()
@click.option("--metrics", is_flag=True, help="Show the discriminator metrics instead.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def threads(
    home: Home, include_resolved: bool, as_of: AsOf | None, metrics: bool, as_json: bool
) -> None:
    """List live threads by tension, highest first (all of them with --all).

    Tension grows with the hours since a thread's last credited work and is computed exactly as
    of now (MIND_NOW, or --as-of: a ledger position or a time); mentions never lower it. When
    more threads are live than threads.max_live_threads, a triage demand names the five with
    the lowest tension.

    --metrics: Spearman's rho between tension order and staleness order over live threads
    (PENDING under 100 cycles, PASS below 0.7) and reach (cycles whose top thread changed to one
    opened more than 10 cycles earlier).

    Example:

        mind threads --json

        mind threads --metrics
    """
    if metrics:
        figures = opened(home).thread_metrics(as_of).model_dump(mode="json")
        if as_json:
            emit_json(figures)
        else:
            for key, value in figures.items():
                echo(f"{key:>14}  {value}")
        return
    if as_json:
        emit_json(opened(home).threads(include_resolved, as_of).model_dump(mode="json"))
        return
    mind = opened(home)
    rows = mind.threads(include_resolved, as_of).model_dump(mode="json")
    demand = mind.thread_triage(as_of).model_dump(mode="json")["demand"]
    table(rows, ["id", "tension", "hours_unworked", "status", "mentions", "label"], "No threads.")
    if demand:
        lowest = ", ".join(f"{c['id']} ({c['tension']:.2f})" for c in demand["candidates"])
        echo(
            f"triage: {demand['live']} live threads, cap {demand['cap']}; lowest tension: {lowest}",
            err=True,
        )


def register(group: click.Group) -> None:
    """Add these commands to the `mind` group."""
    group.add_command(thread)
    group.add_command(threads)
    group.add_command(tick)
