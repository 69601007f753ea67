"""A turn's model and its documented JSON (`mind turn --json`, the API's turn, MCP's turn)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mindledger.compose import Home, build_model, identity_of, open_reader
from mindledger.domain.errors import InvalidInputError

if TYPE_CHECKING:
    from mindledger.domain.turns import TurnService


def turn_json(home: Home, service: TurnService, outcome: Any) -> dict[str, Any]:
    """The documented JSON of a turn (`mind turn --json`, the HTTP API's turn), the mind's name
    read from the application the turn ran on (not opened again)."""
    return outcome_json(home, outcome, service.mind.identity().name)


def outcome_json(home: Home, outcome: Any, name: str | None = None) -> dict[str, Any]:
    """The documented JSON of a turn; `name`: the mind's (read from the ledger when absent)."""
    reader = open_reader(home)
    try:
        positions = reader.positions(outcome.notification_ids)
    finally:
        reader.close()
    if name is None:
        name = identity_of(home).name
    return {
        "turn": outcome.turn_id.hex,
        "seq": outcome.seq,
        "status": outcome.status,
        "reply": outcome.reply,
        "reply_raw": outcome.reply_raw,
        "opened": outcome.opened,
        "closed": outcome.closed,
        "claims": outcome.claims,
        "rejections": outcome.rejections,
        "identity": {"name": name, "changes": outcome.identity},
        "threads": outcome.threads,
        "context": outcome.context,
        "context_tokens": outcome.context_tokens,
        "model": outcome.model,
        "usage": outcome.usage,
        "latency_ms": outcome.latency_ms,
        "finish_reason": outcome.finish_reason,
        "cut_off": outcome.cut_off,
        "failure": outcome.failure,
        "events": {
            "first": positions[0] if positions else None,
            "last": positions[-1] if positions else None,
        },
        "tool_calls": getattr(outcome, "tool_calls", None) or None,
        "follows": getattr(outcome, "follows", None),
    }


# A mind set to `mock` (`mind model set mock`) turned without a script.
MIND_ON_MOCK = (
    'the mind\'s model is "mock", which needs a scripted reply (`mock_reply`) or another '
    "model (mind model set MODEL)"
)


def turn_model(
    home: Home,
    spec: str | None,
    mock_reply: str | None,
    api_base: str | None,
    mind_model: Callable[[], str] | None = None,
) -> Any:
    """The model a turn runs on: `spec`, else the mind's (`mind_model`, else read from the
    ledger); `mock` needs a scripted reply (the text itself: reading `@FILE` is the command
    line's business)."""
    if mock_reply is not None and spec not in (None, "mock"):
        raise InvalidInputError('"mock_reply" works only with model "mock"', param="mock_reply")
    if mock_reply is not None and not mock_reply.strip():  # MIND_MOCK_REPLY's rule too
        raise InvalidInputError(
            '"mock_reply" is blank: give the reply text to script', param="mock_reply"
        )
    named = spec
    if spec is None and mind_model is not None:
        spec = mind_model()
    elif spec is None:
        spec = identity_of(home).model
    if spec == "mock" and mock_reply is None:  # the setting's script (MIND_MOCK_REPLY), if any
        mock_reply = home.settings.mock_reply
    if spec == "mock" and mock_reply is None and named == "mock":  # in the request's words
        raise InvalidInputError(
            'model "mock" needs "mock_reply" (the reply text to script)', param="mock_reply"
        )
    if spec == "mock" and mock_reply is None:  # refused before a turn records anything
        raise InvalidInputError(MIND_ON_MOCK, param="mock_reply")
    try:
        return build_model(home, spec, mock_reply, api_base)
    except InvalidInputError as e:  # a model the caller named and no provider serves: theirs
        if named is not None and e.param is None:
            e.param = "model"
        raise
