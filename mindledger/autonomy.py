"""Autonomy: one cycle through the salience gate (`mind tick`), its decision recorded either way."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mindledger.compose import Home, build_model, identity_of, turn_service
from mindledger.domain.budgets import DEFAULT_BUDGET
from mindledger.domain.errors import InvalidInputError
from mindledger.models import model_unavailable


@dataclass(frozen=True)
class TickDone:
    """A recorded tick: the use case's outcome and the object `mind tick --json` prints."""

    outcome: Any
    data: dict[str, Any]


def refuse_stray_mock_reply(spec: str | None, mock_reply: str | None) -> None:
    """Raise InvalidInputError for a scripted reply without model "mock" (before anything is
    recorded; a front-end words it for its own options first)."""
    if mock_reply is not None and spec != "mock":
        raise InvalidInputError('"mock_reply" works only with model "mock"')


def tick(
    home: Home,
    now: str | None = None,
    spec: str | None = None,
    mock_reply: str | None = None,
    budget: int = DEFAULT_BUDGET,
) -> TickDone:
    """Run one autonomy cycle: the gate decides, the decision is recorded, and a fired cycle
    runs a turn with no user message on `spec` (default: the mind's model), or records why no
    model could run it. `now`: an ISO-8601 time every clock of this cycle reads."""
    # Refused before anything is recorded, as a turn is: a fired cycle would otherwise record a
    # turn that could only fail.
    refuse_stray_mock_reply(spec, mock_reply)
    identity = identity_of(home)  # refuses a home with no mind before anything else is checked
    spec = spec or identity.model
    if spec == "mock" and mock_reply is None:
        raise InvalidInputError('model "mock" needs "mock_reply" (the reply text to script)')
    chosen: str = spec
    unavailable = model_unavailable(home, chosen)
    service = turn_service(home)

    def run_turn() -> Any:
        from mindledger.forget_lock import forget_excluded

        model = build_model(home, chosen, mock_reply)
        with forget_excluded(home):  # as `turn_session`: a forget and a turn exclude each other
            return service.run("", model, budget=budget, speaker="autonomy")

    try:
        if now:  # every clock of this cycle, and nothing outside it
            service.mind.clock = home.with_flags(now=("`now`", now)).clock()
        outcome = service.tick(service.mind.clock(), run_turn, unavailable)
    finally:
        service.close()
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
    return TickDone(outcome, data)
