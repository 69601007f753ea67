"""Identity: owner adoption, proposal then ratification on a later turn, model switches."""

from __future__ import annotations

import pytest

from mindledger.domain.application import Mind
from mindledger.domain.errors import IdentityError, NotInitialisedError
from mindledger.domain.identity import DEFAULT_MODEL


def test_the_owner_adopts_a_name_directly(app: Mind) -> None:
    app.adopt_name("Nova", reason="chosen together")

    identity = app.identity()
    assert identity.name == "Nova"
    assert [h["via"] for h in identity.history] == ["created", "owner"]


def test_a_proposed_name_is_adopted_only_when_ratified_on_a_later_turn(app: Mind) -> None:
    app.propose_name("Vega", turn=10)
    assert app.identity().name == "Echo"

    app.ratify_name("Vega", turn=12)

    assert app.identity().name == "Vega"
    assert app.identity().history[-1]["via"] == "ratified"


def test_ratifying_on_the_same_turn_is_rejected(app: Mind) -> None:
    app.propose_name("Vega", turn=10)

    with pytest.raises(IdentityError, match="later turn"):
        app.ratify_name("Vega", turn=10)

    assert app.identity().name == "Echo"


def test_ratification_adopts_exactly_once(app: Mind) -> None:
    app.propose_name("Vega", turn=10)
    app.ratify_name("Vega", turn=11)

    with pytest.raises(IdentityError, match="never proposed"):
        app.ratify_name("Vega", turn=12)

    assert [h["name"] for h in app.identity().history] == ["Echo", "Vega"]


def test_switching_the_model_is_recorded_and_changes_nothing_else(app: Mind) -> None:
    cid = app.open_commitment("Keep the diary").cid
    assert app.identity().model == DEFAULT_MODEL

    app.set_model("ollama/llama3.2")

    identity = app.identity()
    assert (identity.model, identity.name) == ("ollama/llama3.2", "Echo")
    assert app.commitment(cid).closed is False


def test_a_second_init_is_rejected(app: Mind) -> None:
    from mindledger.domain.errors import AlreadyInitialisedError

    with pytest.raises(AlreadyInitialisedError, match="Echo"):
        app.init("Other", "another-ledger")


def test_commands_before_init_say_to_run_init() -> None:
    from mindledger.adapters.memory_ledger import MEMORY_ENV

    fresh = Mind(env=dict(MEMORY_ENV))

    with pytest.raises(NotInitialisedError, match="mind init"):
        fresh.open_commitment("anything")
