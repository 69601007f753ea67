"""`mind tick`: one autonomy cycle through the salience gate."""

from __future__ import annotations

from typing import Any

import click

from mindledger.cli.output import echo, emit_json
from mindledger.compose import Home, build_model, open_mind, turn_service


def model_unavailable(home: Home, spec: str) -> str | None:
    """Why no model can run a turn now, or None when one can (checked without calling it)."""
    if spec.startswith("local/"):
        from mindledger.adapters.local_model import model_path

        if model_path() is None:
            return "the local model is not installed (`mind model install-local`)"
        return None
    if spec == "mock":
        return None
    from mindledger.adapters.litellm_model import import_litellm, provider_reason
    from mindledger.compose import load_dotenv

    litellm = import_litellm()  # quiet: it prints a banner on stdout for an unknown provider
    load_dotenv(home)
    try:
        check: dict[str, Any] = litellm.validate_environment(model=spec)
    except Exception as e:  # an unknown provider: LiteLLM cannot tell what it needs
        return f"cannot check model {spec!r}: {provider_reason(str(e))}"
    if not check.get("keys_in_environment", False):
        missing = ", ".join(check.get("missing_keys", [])) or "credentials"
        return f"model {spec} needs {missing} (set it in the environment or MIND_HOME/.env)"
    return None


@click.command()
@click.option("--now", metavar="TIME", help="Decide as of this ISO-8601 UTC time (else MIND_NOW).")
@click.option(
    "--model", "spec", metavar="SPEC", help="Model for a fired cycle (default: the mind's)."
)
@click.option("--mock-reply", metavar="TEXT|@FILE", help="With --model mock: the scripted reply.")
@click.option("--budget", default=2000, show_default=True, type=click.IntRange(200))
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
    from mindledger.cli.turn_cmds import reply_text
    from mindledger.domain.errors import InvalidInputError

    # Refused before anything is recorded, as `mind turn` does: a fired cycle would otherwise
    # record a turn that could only fail.
    if mock_reply is not None and spec != "mock":
        raise InvalidInputError("--mock-reply works only with --model mock")
    mock_reply = reply_text(mock_reply)
    mind = open_mind(home)
    spec = spec or mind.identity().model
    if spec == "mock" and mock_reply is None:
        raise InvalidInputError("--model mock needs --mock-reply TEXT (or @FILE)")
    unavailable = model_unavailable(home, spec)
    service = turn_service(home)
    if now:  # every clock of this command, and nothing outside it
        mind.clock = service.mind.clock = home.with_flags(now=("--now", now)).clock()

    def run_turn() -> Any:
        from mindledger.forget import forget_excluded

        model = build_model(home, spec, mock_reply)
        with forget_excluded(home):  # as `turn_session`: a forget and a turn exclude each other
            return service.run("", model, budget=budget, speaker="autonomy")

    outcome = service.tick(service.mind.clock(), run_turn, unavailable)
    turn: Any = outcome.turn
    data = {
        "tick": outcome.tick_id.hex,
        "fired": outcome.fired,
        "reason": outcome.reason,
        "max_tension": round(outcome.max_tension, 6),
        "top_thread": ("t" + outcome.top_thread[:8]) if outcome.top_thread else None,
        "cycle": outcome.cycle,
        "status": outcome.status,
        "note": outcome.note,
        "turn": None
        if turn is None
        else {
            "id": turn.turn_id.hex,
            "status": turn.status,
            "reply": turn.reply,
            "threads": turn.threads,
            "rejections": turn.rejections,
            "failure": turn.failure,
        },
    }
    if as_json:
        emit_json(data)
        return
    verdict = "fired" if outcome.fired else "suppressed"
    echo(f"{verdict}: {outcome.reason}")
    if outcome.note:
        echo(f"stopped: {outcome.note}")
    if turn is not None:
        from mindledger.cli.turn_cmds import echo_effects

        echo(turn.reply or f"(turn {turn.status})")
        echo_effects(turn)
