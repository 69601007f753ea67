"""What an interactive chat (`mind chat`) asks of the floor besides the listings: the mind's
name and model, and one turn in this process with its model built only when it is needed."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from mindledger.compose import Home, asker, identity_of, turn_session

if TYPE_CHECKING:
    from mindledger.domain.client_chat import ClientChat
    from mindledger.domain.model_port import CompletionModel
    from mindledger.domain.turns import TurnOutcome


def current_identity(home: Home) -> dict[str, str]:
    """The mind's name and model, as its ledger records them now."""
    identity = identity_of(home)
    return {"name": identity.name, "model": identity.model}


def chat_turn(
    home: Home,
    text: str,
    model: Callable[[], CompletionModel],
    on_reply: Callable[[str], None] | None = None,
    client: ClientChat | None = None,
) -> TurnOutcome:
    """One turn in this process, routed as `mind turn` routes it: a message that exact-matches
    reusable knowledge is answered from it and `model` is never asked for; `on_reply` hears the
    visible reply as it comes (the pieces add up to the recorded reply); `client`, the caller's
    system prompt (checked)."""
    with turn_session(home) as service:
        return asker(home, service, semantic=False).turn(
            text, model, on_reply=on_reply, client=client
        )
