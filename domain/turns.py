"""The turn pipeline: message first, then context, model, reply and its effects in one save."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID, uuid4

from eventsourcing.persistence import Recording

from domain import commands
from domain.application import Mind
from domain.autonomy import TickOutcome, run_tick
from domain.changes import Changes
from domain.concept import Concept, concept_id
from domain.context_port import (
    AssembledContext,
    ContextRequest,
    Embed,
    Retrieval,
    ThreadMatch,
    ThreadReads,
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
from domain.identity import Identity
from domain.model_port import CompletionModel, ModelFailure, prompt_fit
from domain.prompt_text import one_line
from domain.redaction import redact
from domain.settings import thread_params
from domain.tension import TensionParams
from domain.text import clean_token
from domain.thread import Thread
from domain.thread_lines import ThreadLines
from domain.turn import Speaker, Turn, TurnFinishedError
from domain.turn_numbers import turn_numbers, unfinished_turns

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


# The protocol for a small model (the embedded 135M one): two control lines in ~56 tokens
# instead of ~260, so its context holds memory rather than rules it rarely follows.
COMPACT_PROTOCOL = "\n".join(
    [
        "To promise something, write a line COMMIT: <text>. When a promise is kept, write a line "
        "CLOSE: <cid>. These lines are hidden from the user.",
        "Answer in one or two short sentences, using the memory the user gives when it helps.",
    ]
)
CUT_OFF_REASON = "the reply was cut off at the token limit before this line ended"


def system_prompt(identity: Identity, context: AssembledContext, compact: bool = False) -> str:
    """The system message: who the mind is, the protocol, and the delimited memory, in that
    order: the part that never changes comes first, so a server's prompt cache reuses it (the
    name is stored text like any other: one line, no tag)."""
    who = (
        f"You are {one_line(identity.name)}, a mind whose memory is an append-only ledger. "
        "Answer the user helpfully and briefly."
    )
    protocol = COMPACT_PROTOCOL if compact else PROTOCOL
    return "\n\n".join(part for part in (who, protocol, context.rendered) if part)


def prompt_messages(
    identity: Identity, context: AssembledContext, text: str, compact: bool = False
) -> list[dict[str, str]]:
    """The messages a turn sends. A small model (`compact`) gets the memory right before the
    question in the user message, and a system message that never changes (all of it cached
    by the server): the 135M model answered from memory there and not from the system message
    (bench/embedded_settings.py)."""
    if not compact:
        return [
            {"role": "system", "content": system_prompt(identity, context)},
            {"role": "user", "content": text},
        ]
    system = system_prompt(identity, AssembledContext([], "", 0), compact=True)
    memory = f"{context.rendered}\n\n" if context.rendered else ""
    return [{"role": "system", "content": system}, {"role": "user", "content": memory + text}]


def unfinished_line(reply: str, lines: list[ControlLine]) -> ControlLine | None:
    """The control line a cut-off reply ends in the middle of (its last line, with no newline
    after it), or None."""
    if not lines or not reply or reply.endswith(("\n", "\r")):
        return None
    last = reply.splitlines()[-1].strip()
    return lines[-1] if lines[-1].raw == last else None


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
    cut_off: bool = False
    failure: dict[str, str] | None = None
    messages: list[dict[str, str]] = field(default_factory=list)  # what the model was sent
    notification_ids: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class TurnSetting:
    """What a turn's effects need besides the reply: settings, workspace, tool runs, lookups."""

    params: TensionParams
    workspace: Workspace | None
    tools: tuple[ToolRun, ...]
    find_threads: Callable[[str], list[ThreadMatch]]


class _Effects(ThreadLines):
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
                self.changes.load(Thread, UUID(item.stream)).mention(self.at)

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
        source, relation, target = parse_relate(body)
        for token in (clean_token(source), clean_token(target)):
            if self.changes.find(Concept, concept_id(token)) is None:
                raise MindError(f"concept {token} is not defined")
        commands.relate_concepts(self.changes, source, target, relation, self.at)

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


@dataclass(frozen=True)
class StartedTurn:
    """A turn's message as saved: its number, its recordings, and the turns of others still
    without an outcome when it was numbered."""

    turn: Turn
    seq: int
    recordings: list[Recording[UUID]]
    unfinished: list[Turn.Started]


class TurnService:
    """The turn and tick use cases: runs turns against a model through the ports; the ledger
    records every step."""

    def __init__(
        self,
        mind: Mind,
        retrieval: Retrieval,
        threads: ThreadReads,
        pid: int,
        host: str,
        is_dead: Callable[[int, str], bool],
        workspace: Callable[[dict[str, str]], Workspace] | None = None,
        embedder: Callable[[dict[str, str]], Embed | None] | None = None,
        secrets: Sequence[str] = (),
    ) -> None:
        self.mind, self.retrieval, self.threads = mind, retrieval, threads
        self.pid, self.host, self.is_dead = pid, host, is_dead
        self.secrets = tuple(secrets)  # redacted from failure messages before they are recorded
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
        self.retrieval.close()
        self.mind.close()

    def start(
        self, text: str, speaker: Speaker, model: str, turn_id: UUID | None = None
    ) -> StartedTurn:
        """Save a turn's message with the next turn number, alone (it survives any failure).
        The number comes from the ledger in the same transaction: a concurrent turn that took
        it makes this one number again."""

        def command(changes: Changes) -> tuple[Turn, list[Turn.Started]]:
            numbers = turn_numbers(changes)
            unfinished = unfinished_turns(changes, numbers)
            at = self.mind.clock()
            turn = Turn.start(
                text, speaker, numbers.seq + 1, model, self.pid, self.host, at, id=turn_id
            )
            numbers.give(turn.id, [t.originator_id.hex for t in unfinished], at)
            changes.add(turn)  # first: the message's position is the turn's first
            changes.add(numbers)
            return turn, unfinished

        (turn, unfinished), recordings = self.mind.decide_recorded(command)
        return StartedTurn(turn, turn.seq, recordings, unfinished)

    def recover(self, unfinished: Sequence[Turn.Started]) -> list[str]:
        """Mark the turns whose process died before their outcome as interrupted (exactly
        once); the others are still running, or on a host this process cannot check."""
        marked = []
        for started in unfinished:
            if not self.is_dead(started.pid, started.host):
                continue

            def interrupt(changes: Changes, stream: UUID = started.originator_id) -> None:
                changes.load(Turn, stream).interrupt(
                    "the process running this turn stopped before its outcome", self.mind.clock()
                )

            try:
                self.mind.decide(interrupt)
                marked.append(started.originator_id.hex)
            except TurnFinishedError:
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
            self.threads.find_threads,
        )
        compact, budget = prompt_fit(model, budget)
        turn_id = uuid4()
        # Asked before the message is saved: the read overlaps the save, and sees the mind as
        # it was just before the message.
        pending = self.retrieval.context(
            ContextRequest(
                text,
                budget,
                turn_id.hex,
                self.mind.clock(),
                lead_with_threads=not text,
                embed=self.embedder(identity.config) if self.embedder else None,
            )
        )
        try:
            started = self.start(text, speaker, model.name, turn_id)
            self.recover(started.unfinished)
        except BaseException:
            pending.cancel()
            raise
        context = pending.result()
        turn, seq = started.turn, started.seq
        outcome = TurnOutcome(
            turn.id, seq, "started", model.name, [i.record() for i in context.items], context.tokens
        )
        outcome.notification_ids = [r.notification.id for r in started.recordings if r.notification]
        # A turn with no message is an autonomy cycle; the model still needs a user turn.
        messages = prompt_messages(identity, context, text or AUTONOMY_PROMPT, compact)
        outcome.messages = messages
        try:
            completion = model.complete([dict(m) for m in messages], on_token)
        except ModelFailure as failure:
            message = redact(failure.message, self.secrets)
            turn.fail(failure.kind, message, model.name, self.mind.clock(), messages)
            recordings = self.mind.record(turn)
            outcome.status, outcome.failure = "failed", {"kind": failure.kind, "message": message}
            outcome.notification_ids += [r.notification.id for r in recordings if r.notification]
            return outcome
        return self._finish(turn, seq, context, completion, outcome, setting)

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
        # A cut-off reply is kept, but a control line it stops in the middle of never applies.
        cut_off = completion.finish_reason == "length"
        partial = unfinished_line(completion.text, lines) if cut_off else None
        if partial is not None:
            lines.remove(partial)
        # Work and resolutions are checked after every other line, so a CLOSE anywhere in the
        # reply counts for a THREAD-WORK that cites it.
        lines.sort(key=lambda line: line.keyword in ("THREAD-WORK", "THREAD-RESOLVE"))

        def reply(changes: Changes) -> _Effects:
            # Decided again on fresh state if a concurrent writer changed a stream it touched;
            # when every attempt loses, the reply is still in memory and the turn stays
            # 'started' for recovery.
            work_turn = changes.load(Turn, turn.id)
            changes.around = work_turn  # the reply first, the turn's record last
            effects = _Effects(changes, work_turn, seq, context, setting, self.mind.clock())
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
                cut_off=cut_off,
                prompt=outcome.messages,
            )
            for line in lines:
                effects.apply(line)
            if partial is not None:
                effects.rejections.append({"line": partial.raw, "reason": CUT_OFF_REASON})
                work_turn.reject(partial.raw, CUT_OFF_REASON, effects.at)
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
                changed_streams=[s.hex for s in changes.changed if s != turn.id],
                threads=effects.thread_notes,
            )
            return effects

        effects, recordings = self.mind.decide_recorded(reply)
        outcome.status, outcome.reply, outcome.reply_raw = "complete", visible, completion.text
        outcome.opened, outcome.closed = effects.outcome_opened, effects.outcome_closed
        outcome.claims, outcome.rejections = effects.claims, effects.rejections
        outcome.identity, outcome.usage = effects.identity, dict(completion.usage)
        outcome.threads = effects.thread_notes
        outcome.latency_ms, outcome.finish_reason = completion.latency_ms, completion.finish_reason
        outcome.cut_off = cut_off
        outcome.model = completion.model
        outcome.notification_ids += [r.notification.id for r in recordings if r.notification]
        return outcome

    def tick(
        self,
        now: datetime,
        run_turn: Callable[[], TurnOutcome] | None,
        unavailable: str | None,
    ) -> TickOutcome:
        """One autonomy cycle: the gate decides (recorded); a fired cycle runs `run_turn`."""
        return run_tick(self.mind, self.threads, now, run_turn, unavailable)
