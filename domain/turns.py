"""The turn pipeline: message first, then context, model, reply and its effects in one save."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple
from uuid import UUID, uuid4

from eventsourcing.persistence import Recording

from mindledger.domain.application import Mind
from mindledger.domain.changes import Changes
from mindledger.domain.client_chat import ClientChat
from mindledger.domain.context_port import (
    AssembledContext,
    ContextRequest,
    Embed,
    PendingContext,
    Retrieval,
    ThreadReads,
    ToolRun,
    Workspace,
)
from mindledger.domain.control_lines import (
    split_reply,
)
from mindledger.domain.model_port import CompletionModel, ModelFailure, prompt_fit, sampled
from mindledger.domain.prompts import AUTONOMY_PROMPT, prompt_messages
from mindledger.domain.redaction import redact, without_prompt
from mindledger.domain.reply_stream import ReplyStream
from mindledger.domain.sampling import Sampling
from mindledger.domain.settings import DEFAULT_RECALL_SPANS, RECALL_SPANS, thread_params
from mindledger.domain.tool_use import MAX_CALLS, asking_turn, call_id, tooled
from mindledger.domain.turn import REPLY_LIMIT, Speaker, Turn, TurnFinishedError
from mindledger.domain.turn_effects import CUT_OFF_REASON, TurnEffects, TurnSetting, unfinished_line
from mindledger.domain.turn_kept import note_kept
from mindledger.domain.turn_numbers import turn_numbers, unfinished_turns

if TYPE_CHECKING:
    from mindledger.domain.autonomy import TickOutcome
    from mindledger.domain.identity import Identity

DEFAULT_BUDGET = 2000


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
    messages: list[dict[str, Any]] = field(default_factory=list)  # what the model was sent
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # the reply's, ids given
    follows: str | None = None  # the turn whose tool calls this turn's message answers
    notification_ids: list[int] = field(default_factory=list)


class StartedTurn(NamedTuple):
    """A turn's message as saved: its number, its recordings, and the turns of others still
    without an outcome when it was numbered."""

    turn: Turn
    seq: int
    recordings: list[Recording[UUID]]
    unfinished: list[Turn.Started | Turn.Retried]


def _listeners(
    on_token: Callable[[str], None] | None, stream: ReplyStream | None
) -> Callable[[str], None] | None:
    """One token callback for the model: the raw listener, then the visible stream."""
    if stream is None:
        return on_token

    def hear(token: str) -> None:
        if on_token is not None:
            on_token(token)
        stream.feed(token)

    return hear


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
        self,
        text: str,
        speaker: Speaker,
        model: str,
        turn_id: UUID | None = None,
        system: str | None = None,
        sampling: Sampling | None = None,
        client: ClientChat | None = None,
    ) -> StartedTurn:
        """Save a turn's message with the next turn number, alone (it survives any failure).
        The number comes from the ledger in the same transaction: a concurrent turn that took
        it makes this one number again. `system`, `sampling`: the caller's, recorded with it;
        `client`: its tools, and the tool results that are the message (linked to the turn
        whose reply made the calls)."""
        settings = sampling.chosen() if sampling else None
        client = client or ClientChat()
        follows = self._asking_turn(client.results)

        def command(changes: Changes) -> tuple[Turn, list[Turn.Started | Turn.Retried]]:
            numbers = turn_numbers(changes)
            unfinished = unfinished_turns(changes, numbers)
            at = self.mind.clock()
            turn = Turn.start(
                text,
                speaker,
                numbers.seq + 1,
                model,
                self.pid,
                self.host,
                at,
                id=turn_id,
                system=system,
                sampling=settings,
                tooling=client.tooling.chosen() or None,
                tool_results=[dict(r) for r in client.results] or None,
                follows=follows,
            )
            numbers.give(turn.id, [t.originator_id.hex for t in unfinished], at)
            changes.add(turn)  # first: the message's position is the turn's first
            changes.add(numbers)
            return turn, unfinished

        (turn, unfinished), recordings = self.mind.decide_recorded(command)
        return StartedTurn(turn, turn.seq, recordings, unfinished)

    def retry(self, turn_id: UUID) -> StartedTurn:
        """Open a failed turn for another attempt (`Turn.Retried`, alone, as a message is):
        its number and message stay; the attempt's outcome follows on its stream."""

        def command(changes: Changes) -> Turn:
            turn = changes.load(Turn, turn_id)
            turn.retry(self.pid, self.host, self.mind.clock())
            return turn

        turn, recordings = self.mind.decide_recorded(command)
        return StartedTurn(turn, turn.seq, recordings, [])

    def _asking_turn(self, results: Sequence[dict[str, str]]) -> str | None:
        """The turn whose reply made a call these results answer (the first that names one
        the mind gave and that turn's reply holds; its calls are gone once forgotten). Read
        as events, not loaded: an id a client made up may name any stream, or none."""
        for result in results:
            asked = asking_turn(result["tool_call_id"])
            events = list(self.mind.events.get(asked)) if asked is not None else []
            if not events or not isinstance(events[0], Turn.Started):
                continue
            for event in events:
                calls = event.tool_calls or () if isinstance(event, Turn.Replied) else ()
                if any(c.get("id") == result["tool_call_id"] for c in calls):
                    return event.originator_id.hex
        return None

    def recover(self, unfinished: Sequence[Turn.Started | Turn.Retried]) -> list[str]:
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
        on_reply: Callable[[str], None] | None = None,
        client: ClientChat | None = None,
        sampling: Sampling | None = None,
        retry_of: UUID | None = None,
        on_start: Callable[[str], None] | None = None,
    ) -> TurnOutcome:
        """One turn; a model failure is recorded and returned, never raised. `tools` are the
        tool runs the runtime made for this turn (the only tool work a reply may cite).
        `on_token` hears the raw model text; `on_reply` the visible reply as it comes (no
        control line ever; the pieces add up to `outcome.reply`, all heard before the reply is
        recorded). `client`: the caller's system prompt and earlier messages; `sampling`: its
        settings for this reply (a model that cannot take them refuses before anything is
        recorded). `retry_of`: a failed turn this is another attempt of (`retry`), whose
        message this `text` is. `on_start` hears the turn's id once its start is recorded
        (before the model is asked: a stream can be named after its turn)."""
        client = client or ClientChat()
        model = tooled(sampled(model, sampling), client.tooling)
        if client.results:
            speaker, text = "tool", ""  # the message is the results
        identity = self.mind.identity()
        setting = TurnSetting(
            thread_params(identity.config),
            self.workspace(identity.config) if self.workspace else None,
            tuple(tools),
            self.threads.find_threads,
        )
        compact, budget = prompt_fit(model, budget)
        turn_id = retry_of or uuid4()
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
                spans=identity.config.get(RECALL_SPANS, DEFAULT_RECALL_SPANS) == "on",
            )
        )
        try:
            if retry_of is None:
                started = self.start(
                    text, speaker, model.name, turn_id, client.system, sampling, client
                )
            else:
                started = self.retry(retry_of)
            self.recover(started.unfinished)
        except BaseException:
            pending.cancel()
            raise
        try:
            return self._answer(
                started,
                pending,
                model,
                identity,
                text,
                compact,
                client,
                setting,
                on_start,
                on_token,
                on_reply,
            )
        except BaseException as e:  # the message is recorded: the error says which turn keeps it
            note_kept(e, turn_id)
            raise

    def _answer(
        self,
        started: StartedTurn,
        pending: PendingContext,
        model: CompletionModel,
        identity: Identity,
        text: str,
        compact: bool,
        client: ClientChat,
        setting: TurnSetting,
        on_start: Callable[[str], None] | None,
        on_token: Callable[[str], None] | None,
        on_reply: Callable[[str], None] | None,
    ) -> TurnOutcome:
        """`run` once the turn's message is recorded (`started`): its context, the model's
        answer (or its failure, recorded) and the reply with its effects."""
        turn_id = started.turn.id
        if on_start is not None:
            on_start(turn_id.hex)
        context = pending.result()
        turn, seq = started.turn, started.seq
        outcome = TurnOutcome(
            turn.id, seq, "started", model.name, [i.record() for i in context.items], context.tokens
        )
        outcome.follows = turn.follows
        outcome.notification_ids = [r.notification.id for r in started.recordings if r.notification]
        # A turn with no message is an autonomy cycle; the model still needs a user turn.
        messages = prompt_messages(identity, context, text or AUTONOMY_PROMPT, compact, client)
        outcome.messages = messages
        stream = ReplyStream(on_reply, REPLY_LIMIT) if on_reply is not None else None
        try:
            completion = model.complete([dict(m) for m in messages], _listeners(on_token, stream))
        except ModelFailure as failure:
            # The prompt is recorded beside the failure; a provider's quote of it is not kept.
            message = without_prompt(redact(failure.message, self.secrets), messages)
            turn.fail(
                failure.kind, message, model.name, self.mind.clock(), messages, outcome.context
            )
            recordings = self.mind.record(turn)
            outcome.status, outcome.failure = "failed", {"kind": failure.kind, "message": message}
            outcome.notification_ids += [r.notification.id for r in recordings if r.notification]
            return outcome
        if stream is not None:
            stream.finish(completion.text)
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
        if len(completion.text) > REPLY_LIMIT:
            # Keep what fits and treat the rest as cut off at the limit, control lines included.
            completion = replace(
                completion, text=completion.text[:REPLY_LIMIT], finish_reason="length"
            )
        visible, lines = split_reply(completion.text)
        # The calls get ids the mind gives: the results that answer them name this turn.
        calls = [
            {**c, "id": call_id(turn.id, n)}
            for n, c in enumerate(completion.tool_calls[:MAX_CALLS])
        ]
        # A cut-off reply is kept, but a control line it stops in the middle of never applies.
        cut_off = completion.finish_reason == "length"
        partial = unfinished_line(completion.text, lines) if cut_off else None
        if partial is not None:
            lines.remove(partial)
        # Work and resolutions are checked after every other line, so a CLOSE anywhere in the
        # reply counts for a THREAD-WORK that cites it.
        lines.sort(key=lambda line: line.keyword in ("THREAD-WORK", "THREAD-RESOLVE"))

        # The turn as its message's save left it: the first attempt decides on it (read back,
        # it would be the same, at the cost of a query and a decoding); a concurrent writer
        # that moved its stream meanwhile makes that attempt lose, and the next loads it.
        fresh = [turn]

        def reply(changes: Changes) -> TurnEffects:
            # Decided again on fresh state if a concurrent writer changed a stream it touched;
            # when every attempt loses, the reply is still in memory and the turn stays
            # 'started' for recovery.
            if fresh:
                work_turn = fresh.pop()
                changes.add(work_turn)
            else:
                work_turn = changes.load(Turn, turn.id)
            changes.around = work_turn  # the reply first, the turn's record last
            effects = TurnEffects(changes, work_turn, seq, context, setting, self.mind.clock())
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
                tool_calls=calls or None,
            )
            effects.remember_requested()  # "remember that ..." from the user: the owner's
            for line in lines:
                effects.apply(line)
            if partial is not None:
                effects.rejections.append({"line": partial.raw, "reason": CUT_OFF_REASON})
                work_turn.reject(partial.raw, CUT_OFF_REASON, effects.at)
            effects.mentions(visible, context)
            work_turn.complete(
                effects.at,
                # The items' records as the outcome holds them (built once: ~150 items a turn).
                context=outcome.context + context.dropped,
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
        outcome.cut_off, outcome.tool_calls = cut_off, calls
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
        from mindledger.domain.autonomy import run_tick  # a turn builds no tick events

        return run_tick(self.mind, self.threads, now, run_turn, unavailable)
