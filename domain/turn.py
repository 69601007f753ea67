"""Turn: one stream per exchange: the message, then exactly one outcome."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal
from uuid import UUID, uuid4

from mindledger.domain.errors import InvalidInputError, MindError
from mindledger.domain.events import AggregateRoot, DomainEvent
from mindledger.domain.text import clean_text

# "tool": a turn whose message is the results of the tool calls an earlier turn's reply made.
Speaker = Literal["user", "autonomy", "tool"]
MESSAGE_LIMIT = 100_000
# A model reply is stored up to this many characters (a provider may ignore max_tokens); what
# is over is dropped and the reply is marked cut off, like one stopped at the token limit.
REPLY_LIMIT = MESSAGE_LIMIT


class TurnFinishedError(MindError):
    """Raised when an outcome is recorded for a turn that already has one."""


class Turn(AggregateRoot):
    """A message, what the model replied, and what the reply changed."""

    class Started(DomainEvent):
        TOPIC = "mind.turn.started"
        SEALED = {
            "text": "own",
            "system": "own",
            "sampling": "own",
            "tooling": "own",
            "tool_results": "own",
        }
        text: str
        speaker: Speaker
        seq: int
        model: str
        pid: int
        host: str
        # Added later (absent from older events, which read as None): the caller's own system
        # prompt and the sampling settings it chose for this reply (domain/sampling.py), both
        # the caller's words, so sealed with the message and forgotten with it.
        system: str | None = None
        sampling: dict[str, Any] | None = None
        # Added later still (older events read as None): the tools and response format
        # the caller offered (domain/tool_use.py), the tool results that are this turn's
        # message ({"tool_call_id", "content"}; speaker "tool"), and the turn whose reply asked
        # for them (its id; None when no result names a call the mind made).
        tooling: dict[str, Any] | None = None
        tool_results: list[dict[str, str]] | None = None
        follows: str | None = None

    class Replied(DomainEvent):
        TOPIC = "mind.turn.replied"
        SEALED = {"reply_raw": "own", "reply": "own", "tool_calls": "own", "prompt": "context"}
        reply_raw: str
        reply: str
        model: str
        provider: str
        usage: dict[str, int]
        latency_ms: float
        finish_reason: str
        mock: bool
        # The reply stopped at the token limit (finish_reason "length"): kept, not a failure.
        cut_off: bool = False
        # The messages the model was sent, exactly (shown by `mind log --turn`); an
        # assistant's may hold `tool_calls` (content None), a tool's `tool_call_id`.
        prompt: list[dict[str, Any]] = []
        # The tools the reply calls (OpenAI's shape, ids the mind gave: domain/tool_use.py);
        # added later, older replies (and those that call none) read as None. A reply that
        # calls tools ends its turn: the results start the next.
        tool_calls: list[dict[str, Any]] | None = None

    class GenerationFailed(DomainEvent):
        TOPIC = "mind.turn.generation_failed"
        SEALED = {"message": "own", "prompt": "context", "context": "context"}
        kind: str
        message: str
        model: str
        prompt: list[dict[str, Any]] = []  # what the model was sent, as on Replied
        # The memory items the prompt quoted, as on Completed (a failed turn has no Completed):
        # a forget finds here whether this prompt must go too.
        context: list[dict[str, Any]] = []

    class LineRejected(DomainEvent):
        TOPIC = "mind.turn.line_rejected"
        SEALED = {"line": "own", "reason": "own"}
        line: str
        reason: str

    class ClaimAccepted(DomainEvent):
        TOPIC = "mind.turn.claim_accepted"
        claim_type: str
        payload: dict[str, Any]

    class Reflected(DomainEvent):
        TOPIC = "mind.turn.reflected"
        SEALED = {"text": "own"}
        text: str

    class Completed(DomainEvent):
        TOPIC = "mind.turn.completed"
        SEALED = {"context": "context", "rejections": "own", "threads": "own"}
        context: list[dict[str, Any]]
        context_tokens: int
        opened: list[str]
        closed: list[str]
        claims: list[dict[str, Any]]
        rejections: list[dict[str, str]]
        identity: list[str]
        changed_streams: list[str]
        threads: list[str] = []  # what the reply did to threads, in words
        # How many candidates were over the budget; `context` records the first 20 of them.
        context_dropped: int = 0

    class Interrupted(DomainEvent):
        TOPIC = "mind.turn.interrupted"
        reason: str

    class Retried(DomainEvent):
        """A failed turn attempted again (a client's retry of the same request): the same
        message, another try at its reply; the attempt's outcome follows on this stream."""

        TOPIC = "mind.turn.retried"
        attempt: int  # this attempt's number: the first attempt is 1, so 2 or more
        pid: int  # the process running this attempt, as on Started (for recovery)
        host: str

    def __init__(self, id: UUID) -> None:
        super().__init__(id)
        self.text = ""
        self.speaker = "user"
        self.seq = 0
        self.model = ""
        self.pid = 0
        self.host = ""
        self.status = "started"
        self.replied = False
        self.started_at: datetime | None = None
        self.attempts = 1
        self.tool_call_ids: list[str] = []  # the ids of the calls its reply made
        self.follows: str | None = None  # the turn whose calls its message answers

    @classmethod
    def start(
        cls,
        text: str,
        speaker: Speaker,
        seq: int,
        model: str,
        pid: int,
        host: str,
        at: datetime,
        id: UUID | None = None,
        system: str | None = None,
        sampling: dict[str, Any] | None = None,
        tooling: dict[str, Any] | None = None,
        tool_results: list[dict[str, str]] | None = None,
        follows: str | None = None,
    ) -> Turn:
        """Record the message that opens a turn (`id`: chosen before the turn is numbered;
        `system`, `sampling` and `tooling`: the caller's system prompt, settings and tools,
        when given; `tool_results`: the message of a "tool" turn, which `follows` a turn)."""
        if speaker == "user":
            try:
                text = clean_text(text, "message", MESSAGE_LIMIT)
            except InvalidInputError as e:  # named, so a client hears which field it was
                raise InvalidInputError(str(e), param="text") from None
        turn = cls(id or uuid4())
        extra: dict[str, Any] = {}
        if system is not None:
            extra["system"] = system
        if sampling:
            extra["sampling"] = sampling
        if tooling:
            extra["tooling"] = tooling
        if tool_results:
            extra["tool_results"] = tool_results
        if follows is not None:
            extra["follows"] = follows
        turn.trigger(
            cls.Started,
            at,
            text=text,
            speaker=speaker,
            seq=seq,
            model=model,
            pid=pid,
            host=host,
            **extra,
        )
        return turn

    def _check_open(self) -> None:
        if self.status != "started":
            raise TurnFinishedError(f"turn {self.id} is already {self.status}")

    def reply(self, at: datetime, **fields: Any) -> None:
        """Record the model's complete reply."""
        self._check_open()
        self.trigger(self.Replied, at, **fields)

    def fail(
        self,
        kind: str,
        message: str,
        model: str,
        at: datetime,
        prompt: list[dict[str, Any]] | None = None,
        context: list[dict[str, Any]] | None = None,
    ) -> None:
        """Record that the model produced no usable reply (and what it was sent, from which
        memory items)."""
        self._check_open()
        self.trigger(
            self.GenerationFailed,
            at,
            kind=kind,
            message=message[:2000],
            model=model,
            prompt=prompt or [],
            context=context or [],
        )

    def reject(self, line: str, reason: str, at: datetime) -> None:
        """Record a control line that was refused, and why."""
        self.trigger(self.LineRejected, at, line=line[:2000], reason=reason)

    def accept_claim(self, claim_type: str, payload: dict[str, Any], at: datetime) -> None:
        """Record a claim that checked out."""
        self.trigger(self.ClaimAccepted, at, claim_type=claim_type, payload=payload)

    def reflect(self, text: str, at: datetime) -> None:
        """Record a reflection the model wrote."""
        self.trigger(self.Reflected, at, text=clean_text(text, "reflection", 4000))

    def complete(self, at: datetime, **record: Any) -> None:
        """Close the turn with its record."""
        self._check_open()
        self.trigger(self.Completed, at, **record)

    def interrupt(self, reason: str, at: datetime) -> None:
        """Close a turn whose process died before its outcome was recorded."""
        self._check_open()
        self.trigger(self.Interrupted, at, reason=reason)

    def retry(self, pid: int, host: str, at: datetime) -> None:
        """Attempt a failed turn again (its message stays; the attempt's outcome follows)."""
        if self.status != "failed":
            raise TurnFinishedError(f"turn {self.id} is {self.status}, not failed: not retried")
        self.trigger(self.Retried, at, attempt=self.attempts + 1, pid=pid, host=host)

    def when_Retried(self, e: Retried) -> None:
        self.status, self.attempts, self.pid, self.host = "started", e.attempt, e.pid, e.host

    def when_Started(self, e: Started) -> None:
        self.text, self.speaker, self.seq, self.model = e.text, e.speaker, e.seq, e.model
        self.pid, self.host = e.pid, e.host
        self.started_at = e.timestamp
        self.follows = e.follows

    def when_Replied(self, e: Replied) -> None:
        self.replied = True
        self.tool_call_ids = [c.get("id", "") for c in e.tool_calls or ()]

    def when_GenerationFailed(self, e: GenerationFailed) -> None:
        self.status = "failed"

    def when_LineRejected(self, e: LineRejected) -> None:
        pass

    def when_ClaimAccepted(self, e: ClaimAccepted) -> None:
        pass

    def when_Reflected(self, e: Reflected) -> None:
        pass

    def when_Completed(self, e: Completed) -> None:
        self.status = "complete"

    def when_Interrupted(self, e: Interrupted) -> None:
        self.status = "interrupted"
