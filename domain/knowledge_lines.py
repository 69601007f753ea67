"""Knowledge in a turn: the model's `REMEMBER:` and `KNOWLEDGE:` lines (the `ai` role), and a
user message that asks the mind to remember something (the owner's capture). Mixed into
`domain.turn_effects.TurnEffects`: decided against the turn's `Changes`, saved with its reply."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, cast
from uuid import UUID

from mindledger.domain import knowledge_commands as kc
from mindledger.domain.control_lines import parse_knowledge, parse_remember
from mindledger.domain.errors import MindError
from mindledger.domain.knowledge import Judgement, Provenance, content_hash

if TYPE_CHECKING:
    from datetime import datetime

    from mindledger.domain.changes import Changes
    from mindledger.domain.context_port import AssembledContext
    from mindledger.domain.turn import Turn

# "remember that ...", "please remember this: ...", "save this: ..." at the start of a message.
_REQUEST = re.compile(
    r"^\s*(?:please\s*,?\s*)?(?:remember\s+that\b\s*:?|remember\s+this\s*:|remember\s*:|"
    r"save\s+this\s*:)\s*(?P<text>\S.*)$",
    re.IGNORECASE | re.DOTALL,
)
REQUEST_LINE = "(message asking to remember)"


def remember_request(message: str) -> str | None:
    """What a user message asks the mind to remember, or None when it asks nothing of it."""
    match = _REQUEST.match(message)
    return match.group("text").strip() if match else None


def _turn_ref(target: str) -> UUID:
    try:
        return UUID(target)
    except ValueError:
        return UUID(int=0)  # the role is refused before any turn is looked up


class KnowledgeLines:
    """The knowledge side of a reply's effects."""

    if TYPE_CHECKING:
        changes: Changes
        turn: Turn
        seq: int
        context: AssembledContext
        at: datetime
        rejections: list[dict[str, str]]

    def do_remember(self, body: str) -> None:
        question, answer = parse_remember(body)
        sources = [item.id for item in self.context.items]
        provenance = kc.model_provenance(
            self.changes, self.turn.model, self.turn.id.hex, answer, self.at, sources
        )
        kc.capture(
            self.changes, question, answer, self.at, "ai", provenance, turn_id=self.turn.id.hex
        )

    def do_knowledge(self, body: str) -> None:
        """The model may not decide on knowledge: each action goes to the command with the ai
        role, which refuses it (recorded with its reason)."""
        action, target, answer = parse_knowledge(body)
        if action in ("verify", "dispute", "retract"):
            kc.judge(self.changes, target, cast(Judgement, action), "ai", self.at)
        elif action == "edit":
            kc.edit(self.changes, target, answer or "", "ai", self.at)
        elif action == "delete":
            kc.delete(self.changes, target, "ai", self.at)
        elif action in ("approve", "discard"):
            judgement = cast(Judgement, action)
            kc.decide_turn(self.changes, _turn_ref(target), judgement, "ai", self.at)
        else:
            raise MindError(
                f"unknown knowledge action {action!r}; the actions are verify, dispute, "
                "retract, edit, delete, approve and discard"
            )

    def remember_requested(self) -> None:
        """A user message that asks the mind to remember something is captured as the
        owner's (a refused capture is recorded like a refused line)."""
        text = remember_request(self.turn.text) if self.turn.speaker == "user" else None
        if text is None:
            return
        source = Provenance(
            source="owner",
            reference=f"turn {self.turn.id.hex}",
            time=self.at,
            content_hash=content_hash(self.changes.keys, answer=text),
        )
        try:
            kc.capture(
                self.changes, text, text, self.at, "owner", [source], turn_id=self.turn.id.hex
            )
        except MindError as e:
            self.rejections.append({"line": REQUEST_LINE, "reason": str(e)})
            self.turn.reject(REQUEST_LINE, str(e), self.at)
