"""Commands for threads: thread open/resolve, threads."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import click

from mindledger.cli.autonomy_cmds import tick
from mindledger.cli.options import as_of_option
from mindledger.cli.output import echo, emit_json, table
from mindledger.compose import Home, open_mind, read_model
from mindledger.domain.errors import UnknownThreadError
from mindledger.domain.thread import VERDICTS, short_id
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
    from mindledger.compose import clock_from_env
    from mindledger.projections.queries import thread_queries

    thread_id = open_mind(home).open_thread(label, content)
    now = clock_from_env()()
    with read_model(home) as con:
        params = thread_queries.settings_as_of(con, now)
        demand = thread_queries.triage(
            thread_queries.threads_by_tension(con, now, params=params), params
        )
    if as_json:
        emit_json({"id": short_id(thread_id), "stream_id": thread_id.hex, "triage": demand})
        return
    echo(short_id(thread_id))
    if demand:
        lowest = ", ".join(f"{c['id']} {c['label']!r}" for c in demand["candidates"])
        echo(
            f"triage: {demand['live']} live threads, cap {demand['cap']}; resolve some "
            f"(`mind thread resolve ID`). Lowest tension: {lowest}",
            err=True,
        )


def resolve_thread_id(home: Home, given: str) -> UUID:
    """Turn a short id (`t1a2b3c4d`), a prefix or a full id into the thread's stream id."""
    from mindledger.projections.queries import thread_queries

    with read_model(home) as con:
        matches = thread_queries.find_threads(con, given)
    if len(matches) != 1:
        raise UnknownThreadError(
            f"no thread has id {given!r}; `mind threads --all` lists them"
            if not matches
            else f"{given!r} matches {len(matches)} threads; give more digits"
        )
    return UUID(matches[0].stream_id)


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
    stream = resolve_thread_id(home, thread_id)
    open_mind(home).resolve_thread(stream, verdict, reason=reason, artifact=artifact, by=by)
    if as_json:
        emit_json({"id": short_id(stream), "stream_id": stream.hex, "verdict": verdict})
        return
    echo(f"resolved {short_id(stream)} as {verdict}")


def _when(con: Any, as_of: AsOf | None) -> Any:
    from mindledger.compose import clock_from_env
    from mindledger.projections.queries.listings import ledger_point

    when = clock_from_env()()
    if as_of is not None:
        when = ledger_point(con, as_of.position, as_of.time)[1] or when
    return when


def thread_listing(
    home: Home, include_resolved: bool = False, as_of: AsOf | None = None
) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """The threads by tension (what `mind threads --json` prints) and the triage demand."""
    from mindledger.projections.queries import thread_queries

    with read_model(home) as con:
        when = _when(con, as_of)
        params = thread_queries.settings_as_of(con, when)
        rows = thread_queries.threads_by_tension(con, when, include_resolved, params)
    live = [r for r in rows if r["status"] not in ("resolved", "forgotten")]
    return rows, thread_queries.triage(live, params)


def thread_metrics(home: Home, as_of: AsOf | None = None) -> dict[str, Any]:
    """What `mind threads --metrics --json` prints."""
    from mindledger.projections.queries import thread_queries

    with read_model(home) as con:
        figures: dict[str, Any] = thread_queries.metrics(con, _when(con, as_of))
    return figures


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
        figures = thread_metrics(home, as_of)
    else:
        rows, demand = thread_listing(home, include_resolved, as_of)
    if metrics:
        if as_json:
            emit_json(figures)
        else:
            for key, value in figures.items():
                echo(f"{key:>14}  {value}")
        return
    if as_json:
        emit_json(rows)
        return
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
