"""Asking: an exact intent match that assesses as reuse answers from memory with no model call
(`memory-exact`); else a question at cosine >= 0.78 to an item's question that assesses as reuse
(`memory-semantic`); else a normal turn, whose answer is kept as an unverified model item unless
an item for that intent exists (never overwritten). Every route, with its reasons and scores, is
recorded in the ledger (`Ask.Routed`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import uuid4

from mindledger.domain.ask import Ask, Route, Via
from mindledger.domain.client_chat import ClientChat
from mindledger.domain.control_lines import split_reply
from mindledger.domain.knowledge import Knowledge
from mindledger.domain.knowledge_assessment import assess
from mindledger.domain.knowledge_port import KnowledgeReads
from mindledger.domain.model_port import Completion, CompletionModel
from mindledger.domain.sampling import Sampling
from mindledger.domain.turns import DEFAULT_BUDGET, TurnOutcome, TurnService

SEMANTIC_MIN = 0.78  # cosine between the question and an item's question
PARTICULARS_DIFFER = "particulars-differ"  # a candidate's reason: names or numbers differ
_WORD = re.compile(r"[\w'-]+")
CANDIDATES_KEPT = 5
MEMORY_MODEL = "memory/knowledge"


@dataclass
class AskOutcome:
    """Where an answer came from, why, and what it was."""

    route: Route
    answer: str
    decision: str
    reasons: list[str]
    item: Knowledge | None = None
    score: float | None = None
    semantic: str = "on"
    candidates: list[dict[str, Any]] = field(default_factory=list)
    turn: TurnOutcome | None = None
    stored: bool = False  # a generated answer kept as a new item


class MemoryAnswer:
    """The model port answered from memory: a reused item's answer, with no model call. A
    line of it that reads like a control line is quoted, so stored text never acts."""

    name = MEMORY_MODEL

    def __init__(self, answer: str) -> None:
        self.answer = answer

    def complete(
        self, messages: list[dict[str, Any]], on_token: Callable[[str], None] | None = None
    ) -> Completion:
        _, lines = split_reply(self.answer)
        raw = {line.raw for line in lines}
        text = "\n".join(
            "> " + line if line.strip() in raw else line for line in self.answer.split("\n")
        )
        if on_token:
            on_token(text)
        return Completion(text, MEMORY_MODEL, "knowledge")


class Asker:
    """The ask use case, and the same exact routing for turns."""

    def __init__(
        self, turns: TurnService, reads: KnowledgeReads | None, off: str = "no-embedding-model"
    ) -> None:
        """`reads`: semantic matching, or None when it is off (`off` says why)."""
        self.turns, self.mind, self.reads, self.off = turns, turns.mind, reads, off

    def ask(
        self,
        question: str,
        model: Callable[[], CompletionModel],
        current: bool = False,
        budget: int = DEFAULT_BUDGET,
    ) -> AskOutcome:
        """Answer `question` from memory when an item may be reused, else through a turn."""
        self.mind.identity()
        now = self.mind.clock()
        semantic = "on" if self.reads is not None else f"off: {self.off}"
        item = self.mind.knowledge_for(question)
        exact = assess(item, now, current)
        if exact.decision == "reuse" and item is not None:
            found = AskOutcome("memory-exact", item.answer, "reuse", [], item, 1.0, semantic)
            return self._record(question, found, current)
        candidates = self._candidates(question, now, current, item)
        for c in candidates:
            if c["score"] >= SEMANTIC_MIN and c["decision"] == "reuse":
                match = self.mind.knowledge_item(c["intent_hash"])
                assert match is not None
                found = AskOutcome(
                    "memory-semantic",
                    match.answer,
                    "reuse",
                    [],
                    match,
                    c["score"],
                    semantic,
                    candidates,
                )
                return self._record(question, found, current)
        if item is not None and not item.deleted:
            score: float | None = 1.0
        else:
            score = candidates[0]["score"] if candidates else None
        turn = self.turns.run(question, model(), budget=budget)
        outcome = AskOutcome(
            "model",
            turn.reply,
            exact.decision,
            exact.reasons,
            item,
            score,
            semantic,
            candidates,
            turn,
        )
        if turn.status == "complete" and turn.reply.strip():
            sources = [c["id"] for c in turn.context if isinstance(c.get("id"), int)]
            stored = self.mind.store_model_answer(
                question, turn.reply, turn.model, turn.turn_id.hex, sources
            )
            outcome.stored = stored is not None
            outcome.item = self.mind.knowledge_for(question)
        return self._record(question, outcome, current)

    def _candidates(
        self, question: str, now: datetime, current: bool, exact: Knowledge | None
    ) -> list[dict[str, Any]]:
        """The items whose questions are nearest the question's (best first), each assessed;
        none when semantic matching is off."""
        if self.reads is None:
            return []
        own = exact.intent_hash if exact is not None else None
        scored = [
            (s.score, s.known)
            for s in self.reads.similar(question, CANDIDATES_KEPT + 1)
            if s.known.intent_hash != own
        ]
        found = []
        for score, q in scored[:CANDIDATES_KEPT]:
            verdict = assess(self.mind.knowledge_item(q.intent_hash), now, current)
            decision, reasons = verdict.decision, verdict.reasons
            if particulars_differ(question, q.question):
                decision, reasons = "reject", [*reasons, PARTICULARS_DIFFER]
            found.append(
                {
                    "item": q.item_id,
                    "intent_hash": q.intent_hash,
                    "score": round(score, 6),
                    "decision": decision,
                    "reasons": reasons,
                }
            )
        return found

    def _record(
        self, question: str, outcome: AskOutcome, current: bool, via: Via = "ask"
    ) -> AskOutcome:
        item = outcome.item
        ask = Ask(uuid4())
        ask.trigger(
            Ask.Routed,
            self.mind.clock(),
            question=question,
            # The item's own hash when one answered (an item from before keyed hashes keeps
            # its sha256 one), else the question's in this mind.
            intent_hash=item.intent_hash
            if item is not None and item.version
            else self.mind.intent_hash_of(question),
            route=outcome.route,
            decision=outcome.decision,
            reasons=outcome.reasons,
            score=outcome.score,
            item_id=item.item_id if item is not None and item.version else None,
            turn_id=outcome.turn.turn_id.hex if outcome.turn is not None else None,
            current=current,
            via=via,
            semantic=outcome.semantic,
            candidates=outcome.candidates,
        )
        self.mind.record(ask)
        return outcome

    def turn(
        self,
        text: str,
        model: Callable[[], CompletionModel],
        budget: int = DEFAULT_BUDGET,
        on_token: Callable[[str], None] | None = None,
        on_reply: Callable[[str], None] | None = None,
        client: ClientChat | None = None,
        sampling: Sampling | None = None,
        on_start: Callable[[str], None] | None = None,
    ) -> TurnOutcome:
        """A turn: a message whose intent exact-matches reusable knowledge is answered from it
        without the model (recorded as such); any other goes to the model. `on_token`,
        `on_reply`, `client`, `sampling` and `on_start` as `TurnService.run`: a turn with a
        caller's system prompt, conversation or settings always goes to the model (a stored
        answer could honour none of them)."""
        own = not client and not sampling
        item = self.mind.knowledge_for(text) if own and text.strip() else None
        if item is None or assess(item, self.mind.clock()).decision != "reuse":
            return self.turns.run(
                text,
                model(),
                budget=budget,
                on_token=on_token,
                on_reply=on_reply,
                client=client,
                sampling=sampling,
                on_start=on_start,
            )
        turn = self.turns.run(
            text,
            MemoryAnswer(item.answer),
            budget=budget,
            on_token=on_token,
            on_reply=on_reply,
            on_start=on_start,
        )
        semantic = "on" if self.reads is not None else f"off: {self.off}"
        outcome = AskOutcome(
            "memory-exact", item.answer, "reuse", [], item, 1.0, semantic, turn=turn
        )
        self._record(text, outcome, False, via="turn")
        return turn


def particulars_differ(asked: str, known: str) -> bool:
    """Whether one question names a particular the other does not: a word holding a digit
    (a code, a date, a room), or a capitalised word past the first (a name, an acronym).
    An embedding scores "What is code 1-4?" against "What is code 1-1?" at ~0.8, so a
    paraphrase's score alone reused the wrong item's answer. A particular is compared as a
    word of the other question, case aside: "Where does alice live?" still matches "Where does
    Alice live?". A question in another language that keeps the name still matches; one that
    does not goes to the model, which costs a model call, not a wrong answer."""
    asked_words, known_words = _WORD.findall(asked), _WORD.findall(known)
    asked_set = {w.casefold() for w in asked_words}
    known_set = {w.casefold() for w in known_words}
    return any(p not in known_set for p in _particulars(asked_words)) or any(
        p not in asked_set for p in _particulars(known_words)
    )


def _particulars(words: list[str]) -> set[str]:
    found = set()
    for i, word in enumerate(words):
        if any(c.isdigit() for c in word) or (i > 0 and word[:1].isupper() and word != "I"):
            found.add(word.casefold())
    return found
