"""Identity: the one long-lived aggregate of a mind (name, self-description, model in use)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal
from uuid import UUID

from mindledger.domain.errors import IdentityError
from mindledger.domain.events import AggregateRoot, DomainEvent, stream_id
from mindledger.domain.settings import check_setting
from mindledger.domain.text import clean_text

IDENTITY_ID = stream_id("identity")
DEFAULT_MODEL = "local/smollm2-135m-instruct"


def clean_name(name: str) -> str:
    """Validate a mind's name: one line, at most 80 characters."""
    return clean_text(name, "name", 80, single_line=True, visible=True)


class Identity(AggregateRoot):
    """Who the mind is: names are proposed, then ratified on a later turn, or owner-adopted."""

    class Created(DomainEvent):
        TOPIC = "mind.identity.created"
        ledger_id: str
        name: str
        model: str

    class NameProposed(DomainEvent):
        TOPIC = "mind.identity.name_proposed"
        name: str
        turn: int

    class NameAdopted(DomainEvent):
        TOPIC = "mind.identity.name_adopted"
        SEALED = {"reason": "own"}
        name: str
        reason: str | None
        via: Literal["owner", "ratified"]
        turn: int | None = None

    class DescriptionRevised(DomainEvent):
        TOPIC = "mind.identity.description_revised"
        SEALED = {"text": "own"}
        text: str

    class ModelSwitched(DomainEvent):
        TOPIC = "mind.identity.model_switched"
        previous: str
        model: str

    class Configured(DomainEvent):
        TOPIC = "mind.identity.configured"
        key: str
        value: str

    def __init__(self, id: UUID) -> None:
        super().__init__(id)
        self.config: dict[str, str] = {}
        self.ledger_id = ""
        self.name = ""
        self.model = DEFAULT_MODEL
        self.descriptions: list[str] = []
        self.history: list[dict[str, object]] = []
        self.proposals: dict[str, int] = {}

    @classmethod
    def create(cls, ledger_id: str, name: str, at: datetime) -> Identity:
        """Start a mind's identity."""
        identity = cls(IDENTITY_ID)
        identity.trigger(
            cls.Created, at, ledger_id=ledger_id, name=clean_name(name), model=DEFAULT_MODEL
        )
        return identity

    def adopt(self, name: str, reason: str | None, at: datetime) -> None:
        """The owner adopts a name directly."""
        name = clean_name(name)
        if name == self.name:
            raise IdentityError(f"the mind is already called {name!r}")
        self.trigger(self.NameAdopted, at, name=name, reason=reason, via="owner")

    def propose(self, name: str, turn: int, at: datetime) -> None:
        """A turn proposes a name; it is adopted only when a later turn ratifies it."""
        name = clean_name(name)
        if name == self.name:
            raise IdentityError(f"the mind is already called {name!r}")
        if name in self.proposals:
            raise IdentityError(f"the name {name!r} is already proposed; ratify it on a later turn")
        self.trigger(self.NameProposed, at, name=name, turn=turn)

    def ratify(self, name: str, turn: int, at: datetime) -> None:
        """A later turn ratifies a proposed name, which adopts it (exactly once)."""
        name = clean_name(name)
        proposed_on = self.proposals.get(name)
        if proposed_on is None:
            raise IdentityError(f"the name {name!r} was never proposed; propose it first")
        if turn <= proposed_on:
            raise IdentityError(
                f"the name {name!r} was proposed on this turn; ratify it on a later turn"
            )
        self.trigger(self.NameAdopted, at, name=name, reason="ratified", via="ratified", turn=turn)

    def describe(self, text: str, at: datetime) -> None:
        """Record a new version of the self-description."""
        self.trigger(self.DescriptionRevised, at, text=clean_text(text, "description", 4000))

    def switch_model(self, model: str, at: datetime) -> None:
        """Record that turns now run on another model; nothing else changes."""
        model = clean_text(model, "model", 200, single_line=True)
        if model != self.model:
            self.trigger(self.ModelSwitched, at, previous=self.model, model=model)

    def configure(self, key: str, value: str, at: datetime) -> bool:
        """Change a setting; False (and nothing recorded) when it already has that value."""
        value = check_setting(key, value)
        if self.config.get(key) == value:
            return False
        self.trigger(self.Configured, at, key=key, value=value)
        return True

    def when_Configured(self, e: Configured) -> None:
        self.config[e.key] = e.value

    def when_Created(self, e: Created) -> None:
        self.ledger_id, self.name, self.model = e.ledger_id, e.name, e.model
        self.history.append({"name": e.name, "at": e.timestamp.isoformat(), "via": "created"})

    def when_NameProposed(self, e: NameProposed) -> None:
        self.proposals[e.name] = e.turn

    def when_NameAdopted(self, e: NameAdopted) -> None:
        self.name = e.name
        self.proposals.pop(e.name, None)
        self.history.append({"name": e.name, "at": e.timestamp.isoformat(), "via": e.via})

    def when_DescriptionRevised(self, e: DescriptionRevised) -> None:
        self.descriptions.append(e.text)

    def when_ModelSwitched(self, e: ModelSwitched) -> None:
        self.model = e.model
