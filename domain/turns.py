"""The turn pipeline: message first, then context, model, reply and its effects in one save."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from eventsourcing.persistence import IntegrityError

from domain.application import Mind
from domain.commitment import Commitment, episode_id
from domain.concept import Concept, concept_id
from domain.context_port import (
    AssembledContext,
    ContextSource,
    Embed,
    ThreadMatch,
    ToolRun,
    Workspace,
)
from domain.control_lines import (
    ControlLine,
    parse_claim,
    parse_close,
    parse_concept,
    parse_relate,
    split_reply,
)
from domain.errors import MindError
from domain.events import AggregateRoot
from domain.identity import IDENTITY_ID, Identity
from domain.model_port import CompletionModel, ModelFailure
from domain.prompt_text import one_line
from domain.redaction import redact
from domain.settings import thread_params
from domain.tension import TensionParams
from domain.text import clean_token
from domain.thread import Thread
from domain.thread_lines import ThreadLines
from domain.turn import Speaker, Turn, TurnFinishedError

DEFAULT_BUDGET = 2000
CLAIM_TYPES = ("event_exists", "commitment_status", "identity_proposal", "identity_ratify")

PROTOCOL = "\n".join(
    [
        "You may change your own state by adding control lines, each alone on a line:",
        "COMMIT: <text>                    promise to do something",
        "CLOSE: <cid> [reason]             a promise is kept or dropped",
        'CLAIM:<type>={json}               types: event_exists {"id": N}, commitment_status '
        '{"cid": C, "open": true|false}, identity_proposal {"name": N}, identity_ratify '
        '{"name": N}; add "evidence": [N, ...] to cite memory items by their # number',
        "CONCEPT: <token> = <definition>   define a concept such as user.name",
        "RELATE: <a> -> <relation> -> <b>  relate two defined concepts",
        "REFLECT: <text>                   a note to yourself",
        'THREAD: {"label": L, "content": C}  open a thread: a question to come back to',
        'THREAD-WORK: <id> {"file": path} | {"commitment": cid} | {"tool": name}  credit work',
        'THREAD-RESOLVE: <id> {"verdict": answered|superseded|dissolved|abandoned, '
        '"artifact"|"reason": ..., "by"?: id}',
        "Only verified work lowers a thread's tension; mentioning a thread does not.",
        "Control lines are hidden from the user; everything else is your answer.",
    ]
)


AUTONOMY_PROMPT = (
    "(No one wrote this message: this is an autonomy cycle run by your runtime. Look at your "
    "threads by tension, pick one, and do work you can show: change a workspace file, close a "
    "commitment with evidence, or resolve the thread with its verdict.)"
)


def system_prompt(identity: Identity, context: AssembledContext) -> str:
    """The system message: who the mind is, the protocol, and the delimited memory (the name
    is stored text like any other: one line, no tag)."""
    who = (
        f"You are {one_line(identity.name)}, a mind whose memory is an append-only ledger. "
        "Answer the user helpfully and briefly."
    )
    return "\n\n".join(part for part in (who, PROTOCOL, context.rendered) if part)


@dataclass
class TurnOutcome:
    """Everything a turn did, for the CLI and for tests."""

    turn_id: UUID
    seq: int
    status: str
    model: str
    context: list[dict[str, Any]]
    context_tokens: int
    reply: str = ""
    reply_raw: str = ""
    opened: list[str] = field(default_factory=list)
    closed: list[str] = field(default_factory=list)
    claims: list[dict[str, Any]] = field(default_factory=list)
    rejections: list[dict[str, str]] = field(default_factory=list)
    identity: list[str] = field(default_factory=list)
    threads: list[str] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    latency_ms: float = 0.0
    finish_reason: str = ""
    failure: dict[str, str] | None = None
    notification_ids: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class TurnSetting:
    """What a turn's effects need besides the reply: settings, workspace, tool runs, lookups."""

    params: TensionParams
    workspace: Workspace | None
    tools: tuple[ToolRun, ...]
    find_threads: Callable[[str], list[ThreadMatch]]


class _Effects(ThreadLines):
    """The aggregates one reply changes, loaded once, saved together."""

    def __init__(
        self,
        mind: Mind,
        turn: Turn,
        seq: int,
        context: AssembledContext,
        head: int,
        setting: TurnSetting,
    ) -> None:
        self.mind, self.turn, self.seq, self.context, self.head = mind, turn, seq, context, head
        self.params, self.workspace, self.tools = setting.params, setting.workspace, setting.tools
        self.find_threads = setting.find_threads
        self.speaker = turn.speaker
        self.started_at = turn.started_at or mind.clock()
        self.closed_with_evidence: set[str] = set()
        self._init_thread_lines()
        self.changed: dict[UUID, AggregateRoot] = {}
        self.outcome_opened: list[str] = []
        self.outcome_closed: list[str] = []
        self.claims: list[dict[str, Any]] = []
        self.rejections: list[dict[str, str]] = []
        self.identity: list[str] = []
        self.at = mind.clock()

    def _load(self, kind: type[Any], stream: UUID) -> Any:
        if stream not in self.changed:
            self.changed[stream] = self.mind._get(kind, stream)
        return self.changed[stream]

    def _exists(self, stream: UUID) -> bool:
        return stream in self.changed or bool(self.mind.recorder.select_events(stream, limit=1))

    def _latest_episode(self, cid: str) -> Commitment | None:
        latest, n = None, 1
        while self._exists(episode_id(cid, n)):
            latest, n = self._load(Commitment, episode_id(cid, n)), n + 1
        return latest

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
                self._load(Thread, UUID(item.stream)).mention(self.at)

    def do_commit(self, body: str) -> None:
        probe = Commitment.open(body, "assistant", 1, self.at)
        latest = self._latest_episode(probe.cid)
        if latest is not None and not latest.closed:
            raise MindError(f"commitment {probe.cid} is already open")
        episode = 1 if latest is None else latest.episode + 1
        commitment = Commitment.open(body, "assistant", episode, self.at)
        self.changed[commitment.id] = commitment
        self.outcome_opened.append(commitment.cid)

    def do_close(self, body: str) -> None:
        cid, reason, evidence = parse_close(body)
        latest = self._latest_episode(cid)
        if latest is None:
            raise MindError(f"unknown CID {cid}")
        self._check_evidence(evidence)
        latest.close(reason, tuple(evidence), self.at)
        self.outcome_closed.append(cid)
        if evidence:
            self.closed_with_evidence.add(cid)

    def do_concept(self, body: str) -> None:
        token, definition = parse_concept(body)
        token = clean_token(token)
        stream = concept_id(token)
        if self._exists(stream):
            self._load(Concept, stream).define(token, definition, self.at)
        else:
            self.changed[stream] = Concept.define_new(token, definition, self.at)

    def do_relate(self, body: str) -> None:
        source, relation, target = parse_relate(body)
        source, target = clean_token(source), clean_token(target)
        for token in (source, target):
            if not self._exists(concept_id(token)):
                raise MindError(f"concept {token} is not defined")
        self._load(Concept, concept_id(source)).relate(target, relation, self.at)

    def do_reflect(self, body: str) -> None:
        self.turn.reflect(body, self.at)

    def do_claim(self, body: str) -> None:
        claim_type, payload_text = parse_claim(body)
        payload = json.loads(payload_text)
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
        latest = self._latest_episode(cid)
        if latest is None:
            raise MindError(f"unknown CID {cid}")
        if not isinstance(is_open, bool) or is_open == latest.closed:
            raise MindError(f"claim is false: {cid} is {'closed' if latest.closed else 'open'}")

    def claim_identity_proposal(self, payload: dict[str, Any]) -> None:
        name = str(payload.get("name", ""))
        self._load(Identity, IDENTITY_ID).propose(name, self.seq, self.at)
        self.identity.append(f"proposed {name}")

    def claim_identity_ratify(self, payload: dict[str, Any]) -> None:
        name = str(payload.get("name", ""))
        self._load(Identity, IDENTITY_ID).ratify(name, self.seq, self.at)
        self.identity.append(f"adopted {name}")


class TurnService:
    """Runs turns against a model through the ports; the ledger records every step."""

    def __init__(
        self,
        mind: Mind,
        context: ContextSource,
        pid: int,
        host: str,
        is_dead: Callable[[int, str], bool],
        workspace: Callable[[dict[str, str]], Workspace] | None = None,
        embedder: Callable[[dict[str, str]], Embed | None] | None = None,
        secrets: Sequence[str] = (),
    ) -> None:
        self.mind, self.context, self.pid, self.host = mind, context, pid, host
        self.secrets = tuple(secrets)  # redacted from failure messages before they are recorded
        self.is_dead = is_dead
        # Both built from the mind's settings, which each turn reads once with its identity.
        self.workspace, self.embedder = workspace, embedder

    def __enter__(self) -> TurnService:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the ledger and read-side connections: a chat that left one pair open per
        turn slowed with every turn (each SQLite commit deals with every open connection of
        the file) and would run out of file descriptors."""
        self.context.close()
        self.mind.close()

    def recover(self, mine: UUID | None = None) -> list[str]:
        """Mark turns whose process died before their outcome as interrupted (exactly once);
        `mine` is the turn this process is running."""
        marked = []
        for unfinished in self.context.unfinished_turns():
            if mine is not None and UUID(unfinished.stream_id) == mine:
                continue
            if not self.is_dead(unfinished.pid, unfinished.host):
                continue
            turn = self.mind._get(Turn, UUID(unfinished.stream_id))
            try:
                turn.interrupt(
                    "the process running this turn stopped before its outcome", self.mind.clock()
                )
                self.mind._save(turn)
                marked.append(unfinished.stream_id)
            except (TurnFinishedError, IntegrityError):
                continue  # finished meanwhile, or another process marked it first
        return marked

    def run(
        self,
        text: str,
        model: CompletionModel,
        budget: int = DEFAULT_BUDGET,
        on_token: Callable[[str], None] | None = None,
        speaker: Speaker = "user",
        tools: Sequence[ToolRun] = (),
    ) -> TurnOutcome:
        """One turn; a model failure is recorded and returned, never raised. `tools` are the
        tool runs the runtime made for this turn (the only tool work a reply may cite)."""
        identity = self.mind.identity()
        setting = TurnSetting(
            thread_params(identity.config),
            self.workspace(identity.config) if self.workspace else None,
            tuple(tools),
            self._find_threads,
        )
        with self.context:  # one read session for the turn's reads, closed before the model
            seq = self.context.next_seq()
            turn = Turn.start(
                text, speaker, seq, model.name, self.pid, self.host, self.mind.clock()
            )
            recordings = self.mind.save(*turn.collect())  # alone: it survives any failure
            self.recover(mine=turn.id)
            context = self.context.assemble(
                text,
                budget,
                turn.id.hex,
                self.mind.clock(),
                lead_with_threads=not text,
                embed=self.embedder(identity.config) if self.embedder else None,
            )
        outcome = TurnOutcome(
            turn.id, seq, "started", model.name, [i.record() for i in context.items], context.tokens
        )
        outcome.notification_ids = [r.notification.id for r in recordings if r.notification]
        messages = [{"role": "system", "content": system_prompt(identity, context)}]
        # A turn with no message is an autonomy cycle; the model still needs a user turn.
        messages.append({"role": "user", "content": text or AUTONOMY_PROMPT})
        try:
            completion = model.complete(messages, on_token)
        except ModelFailure as failure:
            message = redact(failure.message, self.secrets)
            turn.fail(failure.kind, message, model.name, self.mind.clock())
            recordings = self.mind.save(*turn.collect())
            outcome.status, outcome.failure = "failed", {"kind": failure.kind, "message": message}
            outcome.notification_ids += [r.notification.id for r in recordings if r.notification]
            return outcome
        return self._finish(turn, seq, context, completion, outcome, setting)

    def _find_threads(self, given: str) -> list[ThreadMatch]:
        with self.context:
            return self.context.find_threads(given)

    def _finish(
        self,
        turn: Turn,
        seq: int,
        context: AssembledContext,
        completion: Any,
        outcome: TurnOutcome,
        setting: TurnSetting,
    ) -> TurnOutcome:
        visible, lines = split_reply(completion.text)
        # Work and resolutions are checked after every other line, so a CLOSE anywhere in the
        # reply counts for a THREAD-WORK that cites it.
        lines.sort(key=lambda line: line.keyword in ("THREAD-WORK", "THREAD-RESOLVE"))
        for attempt in range(5):
            work_turn = self.mind._get(Turn, turn.id)
            effects = _Effects(
                self.mind, work_turn, seq, context, self.context.ledger_head(), setting
            )
            work_turn.reply(
                effects.at,
                reply_raw=completion.text,
                reply=visible,
                model=completion.model,
                provider=completion.provider,
                usage=completion.usage,
                latency_ms=completion.latency_ms,
                finish_reason=completion.finish_reason,
                mock=completion.mock,
            )
            for line in lines:
                effects.apply(line)
            effects.mentions(visible, context)
            work_turn.complete(
                effects.at,
                context=[i.record() for i in context.items] + context.dropped,
                context_tokens=context.tokens,
                context_dropped=context.dropped_total,
                opened=effects.outcome_opened,
                closed=effects.outcome_closed,
                claims=effects.claims,
                rejections=effects.rejections,
                identity=effects.identity,
                changed_streams=[s.hex for s in effects.changed],
                threads=effects.thread_notes,
            )
            turn_events = work_turn.collect()
            others = [e for a in effects.changed.values() for e in a.collect()]
            try:
                recordings = self.mind.save(turn_events[0], *others, *turn_events[1:])
                break
            except IntegrityError:
                if attempt == 4:
                    raise  # the reply is still in memory; the turn stays 'started' for recovery
        outcome.status, outcome.reply, outcome.reply_raw = "complete", visible, completion.text
        outcome.opened, outcome.closed = effects.outcome_opened, effects.outcome_closed
        outcome.claims, outcome.rejections = effects.claims, effects.rejections
        outcome.identity, outcome.usage = effects.identity, dict(completion.usage)
        outcome.threads = effects.thread_notes
        outcome.latency_ms, outcome.finish_reason = completion.latency_ms, completion.finish_reason
        outcome.model = completion.model
        outcome.notification_ids += [r.notification.id for r in recordings if r.notification]
        return outcome
