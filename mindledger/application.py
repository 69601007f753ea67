"""The application floor: one mind, opened once, with one method per use case.

`mindledger.open(home)` builds it from one home folder (settings, ledger, key store, readers,
models, clock) and closes it once. Every front-end calls these methods: the command line's
commands, the server's routes, MCP's tools, the web page. Each returns a typed result
(`mindledger.results`) whose `model_dump(mode="json")` is what the command line's `--json`
prints and every front-end renders, so a use case gives the same data through each; `aio` has
the methods as coroutines. Writes are serialized per mind inside this process (`write_lock`);
reads each open their own read-only session and may run concurrently from worker threads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from uuid import UUID

from mindledger.checked import checked, checked_methods
from mindledger.compose import Home
from mindledger.domain.budgets import (
    DEFAULT_BUDGET,
    TURN_BUDGET_FLOOR,
    check_budget,
)
from mindledger.embedding_use_cases import EmbeddingCommands
from mindledger.file_use_cases import FileCommands
from mindledger.home_use_cases import place
from mindledger.more_use_cases import DirectCommands, KnowledgeCommands
from mindledger.read_model_repair import repaired_methods
from mindledger.read_use_cases import ReadCommands
from mindledger.turn_attempts import AttemptDone, Reattempt, RequestMemory, TurnRequest

if TYPE_CHECKING:
    from mindledger.async_floor import AsyncMindLedger
    from mindledger.domain.application import Mind
    from mindledger.domain.knowledge_ask import Asker
    from mindledger.domain.model_port import CompletionModel
    from mindledger.domain.turns import TurnOutcome, TurnService
    from mindledger.results import AskResult, KnowledgeChange, TurnResult
    from mindledger.results_files import ConfigSet
    from mindledger.results_ledger import (
        ForgetResult,
    )
    from mindledger.results_listings import (
        CloseResult,
        CommitResult,
    )
    from mindledger.turn_stop import KeptTurns


# The key sent with a turn whose `api_base` a caller chose: the home's provider keys (in the
# environment or settings) go only to the base URL the home's settings name, never to one a
# caller supplies (a server's token opens a mind; it does not hand out the owner's keys).
CLIENT_BASE_KEY = "none"


def withhold_keys(model: Any) -> None:
    """Make a LiteLLM model send a placeholder key instead of any stored one."""
    from mindledger.adapters.litellm_model import LiteLLMModel

    if isinstance(model, LiteLLMModel):
        model.settings.api_key = CLIENT_BASE_KEY


@dataclass(frozen=True)
class TurnDone:
    """A finished turn: the use case's outcome and its result (`mind turn --json`)."""

    outcome: TurnOutcome
    result: TurnResult

    @property
    def data(self) -> dict[str, Any]:
        """The result as JSON data (what every front-end prints)."""
        return self.result.model_dump(mode="json")


@repaired_methods
@checked_methods
class MindLedger(DirectCommands, KnowledgeCommands, FileCommands, ReadCommands, EmbeddingCommands):
    """One mind's use cases over one home. Open it with `mindledger.open(home)`; close it once
    (it is a context manager). Blocking: a server calls it from worker threads."""

    def __init__(self, home: Home) -> None:
        home.require()
        self.home = home
        self.write_lock = threading.RLock()
        self._service: TurnService | None = None
        self._models: dict[tuple[str, str | None], CompletionModel] = {}
        self._withhold_client_keys = False
        self._name: str | None = None
        self._aio: AsyncMindLedger | None = None
        self._requests = RequestMemory()
        self._kept: KeptTurns | None = None  # turns failures kept, to record interrupted

    def __enter__(self) -> MindLedger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def path(self) -> Path:
        """The mind's home folder."""
        return self.home.path

    @property
    def app(self) -> Mind:
        """The event-sourced application over this mind's ledger (opened once, with the turn
        pipeline that shares it)."""
        return self._turns().mind

    @property
    def aio(self) -> AsyncMindLedger:
        """These use cases as coroutines, each run in a worker thread (for async programs)."""
        from mindledger.async_floor import AsyncMindLedger

        if self._aio is None:
            self._aio = AsyncMindLedger(self)
        return self._aio

    @property
    def name(self) -> str:
        """The mind's name (its identity's; a turn may change it)."""
        if self._name is None:
            from mindledger.compose import identity_of

            # Read without opening the turn pipeline when it is not open (a server's start).
            opened = self._service is not None
            self._name = (self.app.identity() if opened else identity_of(self.home)).name
        return self._name

    # -- turns and asking ------------------------------------------------------------------

    def turn(
        self,
        text: str,
        *,
        model: str | None = None,
        mock_reply: str | None = None,
        api_base: str | None = None,
        budget: int = DEFAULT_BUDGET,
        on_delta: Callable[[str], None] | None = None,
        system: str | None = None,
        history: Sequence[Mapping[str, Any]] = (),
        sampling: Mapping[str, Any] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_choice: str | Mapping[str, Any] | None = None,
        parallel_tool_calls: bool | None = None,
        response_format: Mapping[str, Any] | None = None,
        tool_results: Sequence[Mapping[str, str]] = (),
        via: str = "api",
        name: str | None = None,
    ) -> TurnResult:
        """Say `text` to the mind and return the turn as `mind turn --json` prints it.

        `model`: a LiteLLM model string, `local/...` (the embedded model) or `mock` (with
        `mock_reply`, the scripted reply); default the mind's model. `budget`: tokens of
        memory put in front of the model (at least 200). `on_delta` hears the visible reply as
        it streams (control lines never; the pieces add up to the recorded reply). A model that
        fails is not an exception: the turn is recorded failed (`status` "failed", `failure`
        says why) and the message stays.

        A caller's own chat: `system`, its system prompt (sent after the mind's, quoted, and
        recorded sealed with the message); `history`, the earlier messages of its conversation
        (`{"role": "user"|"assistant", "content": ...}`, sent before the message and recorded
        in the turn's prompt); `sampling`, settings for this reply (`temperature`, `top_p`,
        `max_tokens`, `stop`, `seed`, `presence_penalty`, `frequency_penalty`, `user`;
        checked by range, passed to the model, recorded). Each is refused, never ignored, when
        it cannot be honoured (InvalidInputError naming it as `param`).

        Tools and structured output, in OpenAI's shape, passed to a model that takes them
        (UnsupportedParameterError naming the model otherwise): `tools`, `tool_choice`,
        `parallel_tool_calls`, `response_format`. A reply that calls tools completes its turn
        with `tool_calls` (ids the mind gives); `tool_results` (`{"tool_call_id", "content"}`,
        with `text` empty) are the message of the next turn, which `follows` the one that
        asked. The caller's assistant messages in `history` may carry `tool_calls` and its
        tool messages (`{"role": "tool", "tool_call_id", "content"}`) sit between them.
        `name`: who says `text` (1 to 64 letters, digits, `_` or `-`, as OpenAI's messages
        name their speaker; a user or assistant message of `history` may carry one too), sent
        with the message and recorded in the turn's prompt.
        Messages in `history` the mind never saw (none of its own turns' messages or replies,
        none an earlier request brought) are recorded as observed in the client's
        conversation, with `via` (the route they came by) and the turn they preceded
        (`domain/client_history.py`, decision 0020)."""
        return self.run_turn(
            text,
            model=model,
            mock_reply=mock_reply,
            api_base=api_base,
            budget=budget,
            on_delta=on_delta,
            system=system,
            history=history,
            sampling=sampling,
            tools=tools,
            tool_choice=tool_choice,
            parallel_tool_calls=parallel_tool_calls,
            response_format=response_format,
            tool_results=tool_results,
            via=via,
            name=name,
        ).result

    def run_turn(
        self,
        text: str,
        *,
        model: str | None = None,
        mock_reply: str | None = None,
        api_base: str | None = None,
        budget: int = DEFAULT_BUDGET,
        on_delta: Callable[[str], None] | None = None,
        system: str | None = None,
        history: Sequence[Mapping[str, Any]] = (),
        sampling: Mapping[str, Any] | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_choice: str | Mapping[str, Any] | None = None,
        parallel_tool_calls: bool | None = None,
        response_format: Mapping[str, Any] | None = None,
        tool_results: Sequence[Mapping[str, str]] = (),
        retry_of: UUID | None = None,
        on_start: Callable[[str], None] | None = None,
        via: str = "api",
        name: str | None = None,
    ) -> TurnDone:
        """`turn`, with the use case's outcome beside its JSON (for front-ends that render
        more than the JSON, such as the command line's effect lines). `retry_of`: a failed
        turn this is another attempt of, whose message `text` is (see `attempt_turn`).
        `on_start` hears the turn's id as soon as it is recorded, before the model answers (a
        stream named after its turn)."""
        from mindledger.compose import asker
        from mindledger.domain.client_chat import checked_chat
        from mindledger.domain.errors import InvalidInputError
        from mindledger.domain.model_port import sampled
        from mindledger.domain.sampling import checked_sampling
        from mindledger.domain.tool_use import checked_results, checked_tools, tooled
        from mindledger.forget_lock import forget_excluded
        from mindledger.results import TurnResult
        from mindledger.turns import turn_json

        check_budget(budget, TURN_BUDGET_FLOOR)
        offered = checked_tools(tools, tool_choice, parallel_tool_calls, response_format)
        results = checked_results(tool_results)
        if results and text.strip():
            raise InvalidInputError(
                "give `text` or `tool_results`, not both: tool results are a turn's message",
                param="tool_results",
            )
        chat = checked_chat(system, history, offered, results, name)
        settings = checked_sampling(sampling)
        with self.write_lock:
            completion_model = self._model(model, mock_reply, api_base)
            # Refused here, before anything is recorded.
            tooled(sampled(completion_model, settings), offered)
            service = self._turns()
            self._settle_kept()  # an earlier turn's, before this one's recovery would
            try:
                # A message whose intent reusable knowledge answers is answered from it.
                with forget_excluded(self.home):
                    routed: Asker | Reattempt = asker(self.home, service, semantic=False)
                    if retry_of is not None:  # an attempt of a turn the model failed: to it again
                        routed = Reattempt(service, retry_of)
                    outcome = routed.turn(
                        text,
                        lambda: completion_model,
                        budget=budget,
                        on_reply=on_delta,
                        client=chat,
                        sampling=settings,
                        on_start=on_start,
                    )
            except BaseException as e:
                self._drop_turns()  # a fresh pipeline next time, in case this one broke
                self._kept_by(e)
                raise
            if chat.history:  # what the caller holds that the mind never saw
                preceded = f"{via} before turn {outcome.turn_id.hex}"
                # Whose conversation it is: the request's end user. Not its system prompt,
                # which a chat engine rewrites each request (retrieved context, the time):
                # each was a new conversation observing the same messages again. ("user\x00":
                # the name it had when the system prompt was part of it and none was given.)
                user = getattr(settings, "user", None)
                caller = f"{user}\x00" if user else ""
                _observe_unseen(self.home, service.mind, chat.history, preceded, caller)
            done = TurnDone(
                outcome, TurnResult.model_validate(turn_json(self.home, service, outcome))
            )
        self._name = done.result.identity.name or self._name
        self._settle(service)
        return done

    # After a turn, catch the read session kept for the next one up to it in the background
    # (`_settle`); a process that makes one turn and ends (`mind turn`) does it before it
    # returns instead, so the read model and its summary are at the head for the next command
    # (a listing then prints from the summary without loading DuckDB).
    settle_between_turns = True

    def _settle(self, service: TurnService) -> None:
        """Catch the read session this mind keeps between turns up to the turn just recorded,
        in a thread while the caller takes the answer (here, for a one-turn process): the
        next turn then starts from a current read model instead of projecting this one's
        events first (the write lock keeps the pipeline to this thread meanwhile; a next turn
        waits for it)."""
        settle = getattr(service.retrieval, "settle", None)
        if settle is None:
            return
        if not self.settle_between_turns:
            with self.write_lock:
                settle()
            return

        def run() -> None:
            with self.write_lock:
                if self._service is service:  # not dropped or closed meanwhile
                    settle(summarise=False)  # written as the kept session closes

        threading.Thread(target=run, name="mind-settle", daemon=True).start()

    def attempt_turn(
        self, request: TurnRequest, text: str, turn_args: Mapping[str, Any]
    ) -> AttemptDone:
        """`run_turn(text, **turn_args)` for a client's request that may be a retry
        (`mindledger.turn_attempts`): a repeat of a completed request is its recorded answer
        (`replayed`, nothing written); a repeat of a failed one is another attempt of that
        turn; an idempotency key reused for another request is refused."""
        from mindledger.domain.turn import TurnFinishedError
        from mindledger.turn_attempts import attempt_turn

        def run(again: UUID | None) -> TurnDone:
            if again is not None:
                try:
                    return self.run_turn(text, retry_of=again, **turn_args)
                except TurnFinishedError:
                    pass  # no longer failed (interrupted, say): a new turn it is
            return self.run_turn(text, **turn_args)

        with self.write_lock:  # a retry waits for the attempt it repeats
            return attempt_turn(self._requests, request, run)

    def ask(
        self,
        question: str,
        *,
        current: bool = False,
        model: str | None = None,
        mock_reply: str | None = None,
        api_base: str | None = None,
        budget: int = DEFAULT_BUDGET,
    ) -> AskResult:
        """`mind ask --json`: reusable knowledge answers without the model, else a turn whose
        answer is kept as unverified knowledge. `current`: stored answers revalidate."""
        from mindledger.compose import asking
        from mindledger.forget_lock import forget_excluded
        from mindledger.knowledge import ask_json
        from mindledger.results import AskResult

        check_budget(budget, TURN_BUDGET_FLOOR)
        with self.write_lock:
            service = self._turns()
            self._settle_kept()
            try:
                with forget_excluded(self.home), asking(self.home, service) as asker:
                    outcome = asker.ask(
                        question, lambda: self._model(model, mock_reply, api_base), current, budget
                    )
            except BaseException as e:
                self._drop_turns()
                self._kept_by(e)
                raise
        return AskResult.model_validate(ask_json(outcome))

    def chat_turn(
        self,
        text: str,
        model: Callable[[], Any],
        on_delta: Callable[[str], None] | None = None,
        system: str | None = None,
    ) -> TurnDone:
        """One turn of a chat session, routed as `turn` routes it, whose `model()` is asked
        for only when the message needs one (reusable knowledge may answer it without).
        `system`: the session's own system prompt, as `turn` takes it."""
        from mindledger.chat_session import chat_turn
        from mindledger.domain.client_chat import checked_chat
        from mindledger.results import TurnResult
        from mindledger.turns import outcome_json

        client = checked_chat(system) if system is not None else None
        with self.write_lock:
            self._settle_kept()
            try:
                outcome = chat_turn(self.home, text, model, on_delta, client)
            except BaseException as e:
                self._kept_by(e)
                raise
        result = TurnResult.model_validate(outcome_json(self.home, outcome))
        self._name = result.identity.name or self._name
        return TurnDone(outcome, result)

    def current_identity(self) -> dict[str, str]:
        """The mind's name and model as its ledger records them now (no read model needed)."""
        from mindledger.chat_session import current_identity

        return current_identity(self.home)

    def model_for(self, spec: str | None, mock_reply: str | None, api_base: str | None) -> Any:
        """The completion model a turn would use (checked: `mock` needs a scripted reply)."""
        return self._model(spec, mock_reply, api_base)

    def _model(self, spec: str | None, mock_reply: str | None, api_base: str | None) -> Any:
        from mindledger.turns import turn_model

        if mock_reply is not None:  # scripted: cheap, and never shared between calls
            return turn_model(self.home, spec, mock_reply, api_base, self._identity_model)
        key = (spec or "", api_base)
        if key not in self._models:  # the embedded model's client stays warm between turns
            model = turn_model(self.home, spec, None, api_base, self._identity_model)
            if (
                self._withhold_client_keys
                and api_base is not None
                and not self._configured_base(api_base)
            ):
                withhold_keys(model)
            self._models[key] = model
        return self._models[key]

    def _identity_model(self) -> str:
        return self.app.identity().model

    def _configured_base(self, api_base: str) -> bool:
        configured = self.home.settings.api_base
        return configured is not None and configured.rstrip("/") == api_base.rstrip("/")

    def _kept_by(self, e: BaseException) -> None:
        """Record interrupted the turn whose message the failure `e` kept unanswered, if it
        kept one (`mindledger.turn_stop.KeptTurns`): now, else before the next turn."""
        if self._kept is None:
            from mindledger.turn_stop import KeptTurns

            self._kept = KeptTurns(self.home)
        self._kept.failed(e)

    def _settle_kept(self) -> None:
        """The kept turns the ledger refused to record interrupted when they failed (a server
        lives on after a full disk): now, before a turn's recovery takes them for the turns of
        a process that stopped."""
        if self._kept is not None:
            self._kept.settle()

    def _turns(self) -> TurnService:
        from mindledger.compose import turn_service

        with self.write_lock:
            if self._service is None:
                self._service = turn_service(self.home)
            return self._service

    def _drop_turns(self) -> None:
        with self.write_lock:
            if self._service is not None:
                service, self._service = self._service, None
                service.close()

    # -- owner writes ----------------------------------------------------------------------

    # How this object's forgets are recorded (`Forgotten.via`): a program calling the floor.
    via = "python"

    def forget(self, kind: str, value: str, *, dry_run: bool = False) -> ForgetResult:
        """`mind forget --KIND VALUE --yes --json` (`dry_run`: counts only). What this object
        holds warm (the turn pipeline, model clients) is dropped first."""
        from mindledger.forget import forget_data, selector_of
        from mindledger.results_ledger import ForgetResult

        selector = selector_of(kind, value)
        if dry_run:
            with self.write_lock:
                data = forget_data(self.home, selector, dry_run=True, via=self.via)
        else:
            # The read model is built aside while turns go on; they wait only while the keys
            # go and it is swapped in.
            from mindledger.memory_release import release_freed_memory

            try:
                data = forget_data(
                    self.home, selector, dry_run=False, via=self.via, exclusive=self._exclusive
                )
            finally:
                release_freed_memory()  # what its plan and catch-up batches freed
        return ForgetResult.model_validate(data)

    @contextmanager
    def _exclusive(self) -> Iterator[None]:
        """This mind's writes held off, and what it holds warm dropped (a forget's part)."""
        with self.write_lock:
            self._drop_turns()
            self._models.clear()
            self._requests.clear()
            yield

    def commit(
        self,
        text: str,
        *,
        origin: str = "owner",
        thread: str | None = None,
        concepts: Sequence[str] = (),
    ) -> CommitResult:
        """`mind commit TEXT --json`: open a commitment (`{"cid", "episode", "opened"}`; the
        same open text is a no-op with `opened` false)."""
        from mindledger.commitments import commit
        from mindledger.results_listings import CommitResult

        with self.write_lock:
            return CommitResult.model_validate(commit(self.home, text, origin, thread, concepts))

    def close_commitment(self, cid: str, reason: str | None = None) -> CloseResult:
        """`mind close CID --json`: close an open commitment."""
        from mindledger.commitments import close
        from mindledger.results_listings import CloseResult

        with self.write_lock:
            return CloseResult.model_validate(close(self.home, cid, reason))

    def remember(
        self,
        text: str,
        *,
        question: str | None = None,
        concepts: Sequence[str] = (),
        state: str | None = None,
        confidence: float | str | None = None,
        freshness: str | None = None,
        reuse: str | None = None,
    ) -> KnowledgeChange:
        """`mind remember TEXT --json`: keep the owner's knowledge, the answer to `question`
        (default: `text` itself); `confidence` a fraction from 0 to 1."""
        from mindledger.domain.errors import InvalidInputError
        from mindledger.domain.knowledge import FRESHNESS
        from mindledger.knowledge import change_json, remember_item
        from mindledger.results import KnowledgeChange

        if freshness is not None and freshness not in FRESHNESS:
            raise InvalidInputError(
                f"remember: freshness {freshness!r} is not one of {', '.join(FRESHNESS)}"
            )
        with self.write_lock:
            change = remember_item(
                self.home,
                text,
                question,
                concepts,
                state,
                None if confidence is None else str(confidence),
                freshness,
                reuse,
            )
        return KnowledgeChange.model_validate(change_json(change))

    def configure(self, key: str, value: str) -> ConfigSet:
        """`mind config set KEY VALUE --json`: change one of this mind's settings (recorded;
        `changed` false when it had that value)."""
        from mindledger.configuration import configure
        from mindledger.results_files import ConfigSet

        with self.write_lock:
            return ConfigSet.model_validate(configure(self.home, key, value))

    def owner_write(self, act: Callable[[Home], Any]) -> Any:
        """Run one owner action on the home, serialized with this mind's turns here."""
        with self.write_lock:
            return act(self.home)

    def interrupt_own_turns(self, reason: str) -> list[str]:
        """Record as interrupted every turn this process started on the mind that has no
        outcome yet (a server stopping before a model answered); their ids. Takes no write
        lock: the turn still running holds it (see `mindledger.turn_stop`)."""
        from mindledger.turn_stop import interrupt_own_turns

        return interrupt_own_turns(self.home, reason)

    def warm(self) -> None:
        """Open what the first call would: the turn pipeline and a read session."""
        self._turns()
        self.status()

    def close(self) -> None:
        """Release the ledger and read-model connections (the object may be used again: what
        it needs is opened anew)."""
        self._drop_turns()
        self._models.clear()


@checked
def open(home: str | Path | Home | None = None, **overrides: Any) -> MindLedger:
    """The mind at `home` (default `$MIND_HOME`, else the per-user data folder), made by `mind
    init`. `overrides`: settings that win over every other source, by name (`now`,
    `api_base`, `model_timeout`, ... as `mind config show` lists them)."""
    return MindLedger(place(home, overrides))


def _observe_unseen(
    home: Home, mind: Any, history: Sequence[Mapping[str, Any]], session: str, caller: str
) -> None:
    """Record a caller's unseen earlier messages as observed (`record_unseen`), after its turn
    is recorded. A failure here (a database gone for a moment, a full disk) is a warning, not
    the request's: failing it made a client retry a turn the ledger holds (a second turn),
    and the client sends the same messages again with its next request, which observes them."""
    from mindledger.domain import client_history
    from mindledger.error_report import log_failure
    from mindledger.notices import warn
    from mindledger.safe_text import configured_secrets

    try:
        client_history.record_unseen(mind, history, session, caller)
    except Exception as e:  # the turn is done: its answer must stand
        error_id = log_failure(e, home.path, configured_secrets(home.path))
        where = f" (error {error_id} in logs/errors.log)" if error_id else ""
        warn(
            "the turn is recorded, but the caller's earlier messages it never saw were not "
            f"observed{where}; its next request that sends them observes them"
        )
