"""`mind tick`: one autonomy cycle through the salience gate."""

from __future__ import annotations

import click

from mindledger.cli.output import echo, emit_json
from mindledger.compose import Home
from mindledger.domain.budgets import DEFAULT_BUDGET, TURN_BUDGET_FLOOR


@click.command()
@click.option("--now", metavar="TIME", help="Decide as of this ISO-8601 UTC time (else MIND_NOW).")
@click.option(
    "--model", "spec", metavar="SPEC", help="Model for a fired cycle (default: the mind's)."
)
@click.option("--mock-reply", metavar="TEXT|@FILE", help="With --model mock: the scripted reply.")
@click.option(
    "--budget",
    default=DEFAULT_BUDGET,
    show_default=True,
    type=click.IntRange(TURN_BUDGET_FLOOR),
    help="Token budget for the memory put in front of the model.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def tick(
    home: Home,
    now: str | None,
    spec: str | None,
    mock_reply: str | None,
    budget: int,
    as_json: bool,
) -> None:
    """Run one autonomy cycle: the salience gate decides, the decision is recorded.

    The gate fires when the highest tension exceeds threads.cycle_threshold, when no cycle was
    ever recorded, or when more than threads.floor_interval hours passed since the last cycle
    (0: always). Otherwise the tick is recorded as suppressed, with the reason. A fired tick runs
    a turn with no user message whose context leads with the threads by tension; with no model
    available it records the decision and stops. Run it from cron or a timer.

    Example:

        mind tick --json

        MIND_ALLOW_PAST_NOW=1 mind tick --now 2026-05-01T12:00:00Z

    A time before the ledger's latest event is refused unless MIND_ALLOW_PAST_NOW=1.
    """
    from mindledger.cli.floor import opened
    from mindledger.cli.turn_cmds import check_mock_flags, echo_effects, reply_text
    from mindledger.results_ledger import TickResult

    # In this command's words, before @FILE is read; a tick takes --mock-reply only with
    # --model mock (never for the mind's own model), hence "" for no --model.
    check_mock_flags(spec or "", mock_reply)
    done = opened(home).run_tick(
        model=spec, mock_reply=reply_text(mock_reply), budget=budget, now=now
    )
    data = TickResult.model_validate(done.data).model_dump(mode="json")  # `MindLedger.tick`'s
    if as_json:
        emit_json(data)
        return
    echo(f"{'fired' if data['fired'] else 'suppressed'}: {data['reason']}")
    if data["note"]:
        echo(f"stopped: {data['note']}")
    turn = done.outcome.turn
    if turn is not None:
        echo(turn.reply or f"(turn {turn.status})")
        echo_effects(turn)
