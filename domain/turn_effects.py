"""A reply's control lines as effects: each line runs the same command the CLI runs, on the
turn's `Changes`; a refused line is recorded with its reason."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import Any, NamedTuple
from uuid import UUID

from mindledger.domain import commands
from mindledger.domain.changes import Changes
from mindledger.domain.context_port import (
    AssembledContext,
    ThreadMatch,
    ToolRun,
    Workspace,
)
from mindledger.domain.control_lines import (
    ControlLine,
    json_value,
    parse_claim,
    parse_close,
    parse_concept,
    parse_relate,
    reply_lines,
)
from mindledger.domain.errors import MindError
from mindledger.domain.knowledge_lines import KnowledgeLines
from mindledger.domain.tension import TensionParams
from mindledger.domain.text import clean_token
from mindledger.domain.thread_lines import ThreadLines
from mindledger.domain.turn import Turn

CLAIM_TYPES = ("event_exists", "commitment_status", "identity_proposal", "identity_ratify")
CUT_OFF_REASON = "the reply was cut off at the token limit before this line ended"


def unfinished_line(reply: str, lines: list[ControlLine]) -> ControlLine | None:
    """The control line a cut-off reply ends in the middle of (its last line, with no newline
    after it), or None."""
    if not lines or not reply or reply.endswith("\n"):
        return None
    last = reply_lines(reply)[-1].strip()
    return lines[-1] if lines[-1].raw == last else None


class TurnSetting(NamedTuple):
    """What a turn's effects need besides the reply: settings, workspace, tool runs, lookups."""

    params: TensionParams
    workspace: Workspace | None
    tools: tuple[ToolRun, ...]
    find_threads: Callable[[str], list[ThreadMatch]]


class TurnEffects(ThreadLines, KnowledgeLines):
    """What one reply's control lines do, decided against the turn's `Changes` (saved together
    with the reply) through the same commands the CLI uses."""

    def __init__(
        self,
        changes: Changes,
        turn: Turn,
        seq: int,
        context: AssembledContext,
        setting: TurnSetting,
        at: datetime,
    ) -> None:
        self.changes, self.turn, self.seq, self.context = changes, turn, seq, context
        self.head = context.head
        self.params, self.workspace, self.tools = setting.params, setting.workspace, setting.tools
        self.find_threads = setting.find_threads
        self.speaker = turn.speaker
        self.started_at = turn.started_at or at
        self.closed_with_evidence: set[str] = set()
        self._init_thread_lines()
        self.outcome_opened: list[str] = []
        self.outcome_closed: list[str] = []
        self.claims: list[dict[str, Any]] = []
        self.rejections: list[dict[str, str]] = []
        self.identity: list[str] = []
        self.at = at

    def apply(self, line: ControlLine) -> None:
        try:
            getattr(self, "do_" + line.keyword.lower().replace("-", "_"))(line.body)
        except (MindError, ValueError) as e:
            reason = str(e) if not isinstance(e, json.JSONDecodeError) else f"malformed JSON: {e}"
            self.rejections.append({"line": line.raw, "reason": reason})
            self.turn.reject(line.raw, reason, self.at)

    def mentions(self, reply: str, context: AssembledContext) -> None:
        """Count a mention for each live thread in context whose id or label the reply names;
        a mention changes nothing but the counter (it never lowers tension)."""
        lowered = reply.lower()
        for item in context.items:
            if item.kind != "thread" or not item.source_id or item.stream is None:
                continue
            label = item.text.split("] ", 1)[-1].split(": ", 1)[0].lower()
            if item.source_id.lower() in lowered or (len(label) > 3 and label in lowered):
                from mindledger.domain.thread import Thread

                self.changes.load(Thread, UUID(item.stream)).mention(self.at)

    def do_forget(self, body: str) -> None:
        """A model may never forget: refused (and recorded, like every refused line)."""
        from mindledger.domain.forgetting import check_forget_role  # its events: only here

        check_forget_role("ai")

    def do_commit(self, body: str) -> None:
        opened = commands.open_commitment(self.changes, body, "assistant", self.at)
        if not opened.opened:
            raise MindError(f"commitment {opened.cid} is already open")
        self.outcome_opened.append(opened.cid)

    def do_close(self, body: str) -> None:
        cid, reason, evidence = parse_close(body)
        if self.changes.latest_episode(cid) is None:
            raise MindError(f"unknown CID {cid}")
        self._check_evidence(evidence)
        commands.close_commitment(self.changes, cid, reason, tuple(evidence), self.at)
        self.outcome_closed.append(cid)
        if evidence:
            self.closed_with_evidence.add(cid)

    def do_concept(self, body: str) -> None:
        token, definition = parse_concept(body)
        commands.define_concept(self.changes, token, definition, self.at)

    def do_relate(self, body: str) -> None:
        from mindledger.domain.concept import Concept, concept_id  # only a reply that relates

        source, relation, target = parse_relate(body)
        for token in (clean_token(source), clean_token(target)):
            if self.changes.find(Concept, concept_id(token)) is None:
                raise MindError(f"concept {token} is not defined")
        commands.relate_concepts(self.changes, source, target, relation, self.at)

    def do_reflect(self, body: str) -> None:
        self.turn.reflect(body, self.at)

    def do_claim(self, body: str) -> None:
        claim_type, payload_text = parse_claim(body)
        payload = json_value(payload_text)
        if not isinstance(payload, dict):
            raise ValueError("a claim's JSON must be an object")
        if claim_type not in CLAIM_TYPES:
            raise MindError(f"unknown claim type {claim_type!r}")
        evidence = payload.get("evidence", [])
        if not isinstance(evidence, list) or not all(isinstance(i, int) for i in evidence):
            raise MindError("evidence must be a list of event ids")
        self._check_evidence(evidence)
        getattr(self, "claim_" + claim_type)(payload)
        self.claims.append({"type": claim_type, **payload})
        self.turn.accept_claim(claim_type, payload, self.at)

    def _check_evidence(self, evidence: list[int]) -> None:
        missing = [i for i in evidence if not 1 <= i <= self.head]
        if missing:
            raise MindError(f"evidence names events that do not exist: {missing}")
        unseen = sorted(set(evidence) - self.context.evidence_ids())
        if unseen:
            raise MindError(f"evidence not retrieved in this turn's context: {unseen}")

    def claim_event_exists(self, payload: dict[str, Any]) -> None:
        event = payload.get("id")
        if not isinstance(event, int) or not 1 <= event <= self.head:
            raise MindError(f"claim is false: there is no event {event}")

    def claim_commitment_status(self, payload: dict[str, Any]) -> None:
        cid, is_open = str(payload.get("cid", "")).lower(), payload.get("open")
        latest = self.changes.latest_episode(cid)
        if latest is None:
            raise MindError(f"unknown CID {cid}")
        if not isinstance(is_open, bool) or is_open == latest.closed:
            raise MindError(f"claim is false: {cid} is {'closed' if latest.closed else 'open'}")

    def claim_identity_proposal(self, payload: dict[str, Any]) -> None:
        name = str(payload.get("name", ""))
        commands.propose_name(self.changes, name, self.seq, self.at)
        self.identity.append(f"proposed {name}")

    def claim_identity_ratify(self, payload: dict[str, Any]) -> None:
        name = str(payload.get("name", ""))
        commands.ratify_name(self.changes, name, self.seq, self.at)
        self.identity.append(f"adopted {name}")
