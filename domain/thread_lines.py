"""THREAD, THREAD-WORK and THREAD-RESOLVE: what a reply may do to threads, and the checks.

Only verified work lowers tension: a file in the workspace changed during this cycle, a
commitment closed in this turn with evidence, or a tool the runtime ran in this turn. Text alone
never counts. Each refused line is recorded on the turn (and shown in the next turn's context).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING
from uuid import UUID

from mindledger.domain import commands
from mindledger.domain.changes import Changes
from mindledger.domain.context_port import AssembledContext, ThreadMatch, ToolRun, Workspace
from mindledger.domain.control_lines import parse_object, parse_thread_ref
from mindledger.domain.errors import MindError
from mindledger.domain.tension import TensionParams

if TYPE_CHECKING:  # loaded on use (its event classes are built only then)
    from mindledger.domain.thread import Thread, ThreadOrigin

WORK_KINDS = ("file", "commitment", "tool")
_CID = re.compile(r"^c[0-9a-f]{10}$")
_EVENT = re.compile(r"^#?(\d+)$")


class ThreadLines:
    """Mixed into a turn's effects: the thread control lines and their verification."""

    # Provided by the effects class this is mixed into.
    at: datetime
    head: int
    context: AssembledContext
    speaker: str
    started_at: datetime
    params: TensionParams
    workspace: Workspace | None
    tools: tuple[ToolRun, ...]
    find_threads: Callable[[str], list[ThreadMatch]]
    closed_with_evidence: set[str]
    changes: Changes

    def _init_thread_lines(self) -> None:
        self.credited: set[UUID] = set()
        self.artifacts: dict[str, str] = {}  # artifact -> the thread it credited this turn
        self.thread_notes: list[str] = []

    def _thread(self, ref: str) -> Thread:
        """A live or resolved thread named by its short id (or a unique label)."""
        from mindledger.domain.thread import Thread

        for item in self.context.items:
            if item.kind == "thread" and item.source_id == ref.lower() and item.stream:
                return self.changes.load(Thread, UUID(item.stream))
        matches = self.find_threads(ref)
        if len(matches) != 1:
            raise MindError(
                f"no thread {ref!r}" if not matches else f"{ref!r} names {len(matches)} threads"
            )
        return self.changes.load(Thread, UUID(matches[0].stream_id))

    def do_thread(self, body: str) -> None:
        from mindledger.domain.thread import Thread, clean_label, short_id

        payload = parse_object(body, "THREAD")
        label, content = payload.get("label"), payload.get("content")
        if not isinstance(label, str) or not isinstance(content, str):
            raise MindError('THREAD needs {"label": text, "content": text}')
        label = clean_label(label)
        live = [m.id for m in self.find_threads(label) if m.status != "resolved"] + [
            short_id(t.id)
            for t in self.changes.changed.values()
            if isinstance(t, Thread) and not t.resolved and t.label.lower() == label.lower()
        ]
        if live:
            raise MindError(f"thread {live[0]} already holds {label!r}; work on it instead")
        allowed: ThreadOrigin = "autonomy" if self.speaker == "autonomy" else "assistant"
        claimed = payload.get("origin")
        downgraded = claimed is not None and claimed != allowed
        thread = Thread.open(
            label, content, allowed, self.at, claimed_origin=str(claimed) if downgraded else None
        )
        self.changes.add(thread)
        note = f"opened {short_id(thread.id)}"
        if downgraded:
            note += f" (origin {claimed!r} is not the model's to claim; recorded as {allowed})"
        self.thread_notes.append(note)

    def do_thread_work(self, body: str) -> None:
        from mindledger.domain.thread import short_id

        ref, payload = parse_thread_ref(body, "THREAD-WORK")
        kinds = [k for k in WORK_KINDS if k in payload]
        if len(kinds) != 1 or not isinstance(payload[kinds[0]], str):
            raise MindError(
                'THREAD-WORK needs one of {"file": path}, {"commitment": cid}, {"tool": name}'
            )
        kind, value = kinds[0], payload[kinds[0]].strip()
        thread = self._thread(ref)
        if thread.resolved:
            raise MindError(f"thread {short_id(thread.id)} is resolved; its tension is frozen")
        if thread.id in self.credited:
            raise MindError(
                f"thread {short_id(thread.id)} was already credited in this turn "
                "(one credit per thread per turn)"
            )
        artifact = f"{kind}:{self._verify_work(kind, value)}"
        if artifact in self.artifacts:
            raise MindError(
                f"{artifact} already credited thread {self.artifacts[artifact]} in this turn "
                "(one artifact credits one thread)"
            )
        thread.work(artifact, self.params.work_credit, self.at)
        self.credited.add(thread.id)
        self.artifacts[artifact] = short_id(thread.id)
        self.thread_notes.append(f"credited {short_id(thread.id)} for {artifact}")

    def _verify_work(self, kind: str, value: str) -> str:
        if kind == "file":
            if self.workspace is None:
                raise MindError("no workspace is configured (`mind config set workspace DIR`)")
            return self.workspace.changed_file(value, self.started_at)
        if kind == "commitment":
            cid = value.lower()
            if cid not in self.closed_with_evidence:
                raise MindError(
                    f"commitment {cid} was not closed with evidence in this turn "
                    "(CLOSE: cid reason citing #N first)"
                )
            return cid
        ran = sorted({t.name for t in self.tools})
        if value not in ran:
            raise MindError(
                f"no tool {value!r} ran in this turn (ran: {', '.join(ran) or 'none'}); "
                "only the runtime records tool runs"
            )
        return value

    def do_thread_resolve(self, body: str) -> None:
        from mindledger.domain.thread import short_id

        ref, payload = parse_thread_ref(body, "THREAD-RESOLVE")
        thread = self._thread(ref)
        verdict = payload.get("verdict")
        artifact, by = payload.get("artifact"), payload.get("by")
        reason = payload.get("reason")
        if not isinstance(verdict, str):
            raise MindError('THREAD-RESOLVE needs {"verdict": ...}')
        if artifact is not None:
            artifact = self._verify_artifact(str(artifact))
        if by is not None:
            superseding = self._thread(str(by))
            if superseding.id == thread.id:
                raise MindError("a thread cannot supersede itself")
            by = short_id(superseding.id)
        commands.resolve_thread(
            self.changes,
            thread.id,
            verdict,
            self.at,
            reason=str(reason) if reason is not None else None,
            artifact=artifact,
            by=by,
        )
        self.thread_notes.append(f"resolved {short_id(thread.id)} as {verdict}")

    def _verify_artifact(self, artifact: str) -> str:
        """An artifact must exist: a memory item (#N), a closed commitment, or a workspace file."""
        text = artifact.strip()
        event = _EVENT.match(text)
        if event:
            n = int(event.group(1))
            if n not in self.context.evidence_ids():
                raise MindError(f"artifact #{n} is not a memory item in this turn's context")
            return f"event:{n}"
        if _CID.match(text.lower()):
            latest = self.changes.latest_episode(text.lower())
            if latest is None or not latest.closed:
                raise MindError(f"artifact {text} is not a closed commitment")
            return f"commitment:{text.lower()}"
        if self.workspace is None:
            raise MindError("no workspace is configured (`mind config set workspace DIR`)")
        return "file:" + self.workspace.existing_file(text)
