"""`mind recall`: retrieval alone, no model call."""

from __future__ import annotations

from typing import Any

import click

from cli.compose import Home, clock_from_env, read_model
from cli.options import AsOf, as_of_option
from cli.output import echo, emit_json, table


def recall_data(home: Home, query: str, budget: int, as_of: AsOf | None = None) -> dict[str, Any]:
    """What `mind recall --json` prints (the HTTP API's recall too)."""
    from cli.compose import embedder, open_mind
    from projections.queries.listings import ledger_point
    from projections.retrieval.recall import recall as run_recall

    mind = open_mind(home)
    try:
        embed = embedder(home, mind.identity().config)
    finally:
        mind.close()
    with read_model(home) as con:
        position, now = None, clock_from_env()()
        if as_of is not None:
            position, at = ledger_point(con, as_of.position, as_of.time)
            now = at or now
        context = run_recall(con, query, budget, now, as_of=position, embed=embed)
    items = [
        {
            "id": i.id,
            "source_id": i.source_id,
            "kind": i.kind,
            "channel": i.channel,
            "score": i.score,
            "reason": i.reason,
            "tokens": i.tokens,
            "day": i.day,
            "text": i.text,
            "clipped": i.clipped,
        }
        for i in context.items
    ]
    return {"items": items, "tokens": context.tokens, "dropped": context.dropped_total}


@click.command()
@click.argument("query")
@click.option(
    "--budget",
    default=2000,
    show_default=True,
    type=click.IntRange(50),
    help="Token budget for the items (counted on the rendered text).",
)
@as_of_option()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def recall(home: Home, query: str, budget: int, as_of: AsOf | None, as_json: bool) -> None:
    """Show what the mind would remember for QUERY, why, and at what cost in tokens.

    With `mind config set embedding.model PROVIDER/MODEL`, a vector channel (cosine similarity
    over the latest 2,000 messages, embeddings cached in MIND_HOME) joins the others.

    With --as-of, only what the ledger held at that position or time, and "last May" or "two
    weeks ago" counted from then.

    Example:

        mind recall "When did Caroline go to the support group?" --budget 500 --json

        mind recall "what did I promise last May?" --as-of 2026-06-01T00:00:00Z
    """
    data = recall_data(home, query, budget, as_of)
    items = data["items"]
    if as_json:
        emit_json(data)
        return
    table(items, ["id", "channel", "score", "tokens", "day", "text"], "Nothing to recall.")
    echo(f"{data['tokens']} tokens, {len(items)} items, {data['dropped']} over budget")


def register(group: click.Group) -> None:
    """Add this command to the `mind` group."""
    group.add_command(recall)
