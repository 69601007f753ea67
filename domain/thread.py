"""Thread: something that will not leave the mind alone, until verified work resolves it."""

from __future__ import annotations

from datetime import datetime
from typing import Literal
from uuid import UUID, uuid4

from mindledger.domain.choices import VERDICTS as VERDICTS
from mindledger.domain.errors import ResolutionError, ThreadResolvedError
from mindledger.domain.events import AggregateRoot, DomainEvent
from mindledger.domain.text import clean_text

Verdict = Literal["answered", "superseded", "dissolved", "abandoned"]
ThreadOrigin = Literal["user", "assistant", "owner", "autonomy"]


def clean_label(label: str) -> str:
    """A thread label: one line, at most 120 characters."""
    return clean_text(label, "thread label", 120, single_line=True)


def short_id(thread_id: UUID) -> str:
    """The id users see and type: `t` and the first 8 hex digits."""
    return "t" + thread_id.hex[:8]


class Thread(AggregateRoot):
    """An open question or promise to come back; its tension is computed from recorded time."""

    class Opened(DomainEvent):
        TOPIC = "mind.thread.opened"
        SEALED = {"label": "own", "content": "own"}
        label: str
        content: str
        origin: ThreadOrigin
        # What a model asked for when that origin was not its to claim (it was downgraded).
        claimed_origin: str | None = None

    class Mentioned(DomainEvent):
        TOPIC = "mind.thread.mentioned"

    class Worked(DomainEvent):
        TOPIC = "mind.thread.worked"
        SEALED = {"artifact": "own"}  # a workspace path, a CID or a tool's name
        artifact: str
        credit: float

    class Resolved(DomainEvent):
        TOPIC = "mind.thread.resolved"
        SEALED = {"reason": "own", "artifact": "own"}
        verdict: Verdict
        reason: str | None
        artifact: str | None
        by: str | None

    def __init__(self, id: UUID) -> None:
        super().__init__(id)
        self.label = ""
        self.content = ""
        self.origin = "user"
        self.status = "open"
        self.mentions = 0
        self.last_work_at: datetime | None = None
        self.verdict: str | None = None
        self.reason: str | None = None
        self.artifact: str | None = None
        self.by: str | None = None

    @property
    def resolved(self) -> bool:
        """A resolved thread is a tombstone: kept, frozen."""
        return self.status == "resolved"

    @classmethod
    def open(
        cls,
        label: str,
        content: str,
        origin: ThreadOrigin,
        at: datetime,
        claimed_origin: str | None = None,
    ) -> Thread:
        """Open a new thread with a short label and self-contained content."""
        thread = cls(uuid4())
        thread.trigger(
            cls.Opened,
            at,
            label=clean_label(label),
            content=clean_text(content, "thread content", 800),
            origin=origin,
            claimed_origin=claimed_origin,
        )
        return thread

    def _check_live(self) -> None:
        if self.resolved:
            raise ThreadResolvedError(
                f"thread {short_id(self.id)} is resolved ({self.verdict}) and frozen; "
                "open a new thread instead"
            )

    def mention(self, at: datetime) -> None:
        """Count a mention; mentions never change tension."""
        self._check_live()
        self.trigger(self.Mentioned, at)

    def work(self, artifact: str, credit: float, at: datetime) -> None:
        """Credit verified work on the thread (the caller has verified the artifact)."""
        self._check_live()
        self.trigger(
            self.Worked, at, artifact=clean_text(artifact, "artifact", 1000), credit=credit
        )

    def resolve(
        self,
        verdict: str,
        at: datetime,
        reason: str | None = None,
        artifact: str | None = None,
        by: str | None = None,
    ) -> None:
        """Retire the thread; each verdict names what it requires."""
        self._check_live()
        if verdict not in VERDICTS:
            raise ResolutionError(f"unknown verdict {verdict!r}; use one of {', '.join(VERDICTS)}")
        reason = clean_text(reason, "reason", 2000) if reason else None
        artifact = clean_text(artifact, "artifact", 1000) if artifact else None
        by = by.strip() if by else None
        if verdict == "answered" and not artifact:
            raise ResolutionError(
                "verdict 'answered' needs an artifact (`artifact`: a path or an event id)",
                param="artifact",
            )
        if verdict == "superseded" and not (by and artifact):
            raise ResolutionError(
                "verdict 'superseded' needs the superseding thread (`by`: its id) and an "
                "artifact (`artifact`)",
                param="artifact" if by else "by",
            )
        if verdict in ("dissolved", "abandoned") and not reason:
            raise ResolutionError(f"verdict {verdict!r} needs a reason (`reason`)", param="reason")
        self.trigger(self.Resolved, at, verdict=verdict, reason=reason, artifact=artifact, by=by)

    def when_Opened(self, e: Opened) -> None:
        self.label, self.content, self.origin = e.label, e.content, e.origin

    def when_Mentioned(self, e: Mentioned) -> None:
        self.mentions += 1
        if self.status == "open":
            self.status = "mentioned"

    def when_Worked(self, e: Worked) -> None:
        self.status = "worked"
        self.last_work_at = e.timestamp

    def when_Resolved(self, e: Resolved) -> None:
        self.status, self.verdict = "resolved", e.verdict
        self.reason, self.artifact, self.by = e.reason, e.artifact, e.by
