"""`mind recall`: retrieval alone, no model call."""

from __future__ import annotations

from typing import Any

import click

from mindledger.cli.options import as_of_option
from mindledger.cli.render import echo_recall
from mindledger.cli.server_client import NO_SERVER_HELP
from mindledger.compose import Home, clock_from_env, read_model
from mindledger.rules import AsOf


def recall_data(home: Home, query: str, budget: int, as_of: AsOf | None = None) -> dict[str, Any]:
    """What `mind recall --json` prints (the HTTP API's recall too)."""
    from mindledger.compose import embedder, open_mind
    from mindledger.projections.queries.listings import ledger_point
    from mindledger.projections.retrieval.recall import recall as run_recall

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
@click.option("--no-server", is_flag=True, expose_value=False, help=NO_SERVER_HELP)
@click.pass_obj
def recall(home: Home, query: str, budget: int, as_of: AsOf | None, as_json: bool) -> None:
    """Show what the mind would remember for QUERY, why, and at what cost in tokens.

    With `mind config set embedding.recall on`, a vector channel (cosine similarity over the
    latest 2,000 messages, by `embedding.model`; embeddings cached in MIND_HOME) joins the others.

    With --as-of, only what the ledger held at that position or time, and "last May" or "two
    weeks ago" counted from then.

    Example:

        mind recall "When did Caroline go to the support group?" --budget 500 --json

        mind recall "what did I promise last May?" --as-of 2026-06-01T00:00:00Z
    """
    echo_recall(recall_data(home, query, budget, as_of), as_json)


def register(group: click.Group) -> None:
    """Add this command to the `mind` group."""
    group.add_command(recall)
