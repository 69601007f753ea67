"""`mind recall`: retrieval alone, no model call."""

from __future__ import annotations

import click

from mindledger.cli.floor import opened
from mindledger.cli.options import NO_SERVER_HELP, as_of_option
from mindledger.cli.render import echo_recall
from mindledger.compose import Home
from mindledger.domain.budgets import DEFAULT_BUDGET, RECALL_BUDGET_FLOOR
from mindledger.rules import AsOf


@click.command()
@click.argument("query")
@click.option(
    "--budget",
    default=DEFAULT_BUDGET,
    show_default=True,
    type=click.IntRange(RECALL_BUDGET_FLOOR),
    help="Token budget for the items (counted on the rendered text).",
)
@as_of_option()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--no-server", is_flag=True, expose_value=False, help=NO_SERVER_HELP)
@click.pass_obj
def recall(home: Home, query: str, budget: int, as_of: AsOf | None, as_json: bool) -> None:
    """Show what the mind would remember for QUERY, why, and at what cost in tokens.

    A vector channel (cosine similarity over the latest 2,000 messages, by `embedding.model`)
    joins the others once the vector projection has embedded them (beside a served mind or
    `mind project --follow`, or `mind project --vectors`); the summary says when it lags.
    `mind config set embedding.recall off` turns it off.

    With --as-of, only what the ledger held at that position or time, and "last May" or "two
    weeks ago" counted from then.

    Example:

        mind recall "When did Caroline go to the support group?" --budget 500 --json

        mind recall "what did I promise last May?" --as-of 2026-06-01T00:00:00Z
    """
    echo_recall(opened(home).recall(query, budget, as_of).model_dump(mode="json"), as_json)


def register(group: click.Group) -> None:
    """Add this command to the `mind` group."""
    group.add_command(recall)
