"""The /v1 knowledge routes: list, show, remember, the owner's decisions on an item or a turn,
and ask. The bearer token is the owner; each route calls the use case the matching CLI
command calls (cli/knowledge_cmds.py) and answers with what that command prints with `--json`.
Writes are serialized with the mind's turns in this server (its turn lock)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mindledger.domain.budgets import DEFAULT_BUDGET
from mindledger.service.endpoints import Call, Endpoint, JsonResponse, Param
from mindledger.service.errors import ApiError, error_body
from mindledger.service.http_api import MIND, in_turn_thread
from mindledger.turn_refs import TURN_REF

KNOWLEDGE = f"{MIND}/knowledge"
ITEM = f"{KNOWLEDGE}/{{ref}}"
AMBIGUOUS = {"409": "The reference names more than one item: nothing changed; see candidates."}
AMBIGUOUS_TURN = {"409": "The reference names more than one turn: nothing changed; see candidates."}


async def _guarded(fn: Callable[[], Any]) -> Any:
    """Answer an ambiguous or unknown reference as JSON (409 with the candidates, 404)."""
    from mindledger.errors import (
        AmbiguousKnowledgeError,
        AmbiguousTurnError,
        UnknownKnowledgeError,
    )

    try:
        return await fn()
    except (AmbiguousKnowledgeError, AmbiguousTurnError) as e:
        # The one error shape; the candidates beside it (an error object has its four fields).
        return JsonResponse(
            {**error_body(409, "ambiguous", str(e)), "candidates": e.candidates}, 409
        )
    except UnknownKnowledgeError as e:
        raise ApiError(404, "not_found", str(e)) from None


def _write(call: Call, act: Callable[[Any], Any]) -> Callable[[], Any]:
    """An owner action (a `MindLedger` method's call), run in the turn workers under the turn
    lock."""
    mind = call.the_mind
    return lambda: in_turn_thread(call, lambda: act(mind))


def _ref(call: Call) -> str:
    return str(call.request.path_params["ref"])


async def list_knowledge(call: Call) -> Any:
    return await call.the_mind.aio.knowledge(call.params.get("all", False))


async def show_knowledge(call: Call) -> Any:
    ref, history = _ref(call), call.params.get("history", False)
    return await _guarded(lambda: call.the_mind.aio.knowledge_item(ref, history=history))


async def remember(call: Call) -> Any:
    b = call.body
    about = b.get("about", [])
    confidence = str(b["confidence"]) if "confidence" in b else None
    return await _write(
        call,
        lambda mind: mind.remember(
            b["text"],
            question=b.get("question"),
            concepts=about,
            state=b.get("state"),
            confidence=confidence,
            freshness=b.get("freshness"),
            reuse=b.get("reuse"),
        ),
    )()


def _judge(judgement: Any) -> Callable[[Call], Any]:
    async def judge(call: Call) -> Any:
        ref, note = _ref(call), call.body.get("note")
        return await _guarded(_write(call, lambda mind: mind.judge(ref, judgement, note)))

    return judge


async def edit(call: Call) -> Any:
    ref, answer = _ref(call), call.body["answer"]
    return await _guarded(_write(call, lambda mind: mind.edit_knowledge(ref, answer)))


async def delete(call: Call) -> Any:
    ref, note = _ref(call), call.body.get("note")
    return await _guarded(_write(call, lambda mind: mind.delete_knowledge(ref, note)))


def _decide(judgement: str) -> Callable[[Call], Any]:
    """`approve` or `discard` (the `MindLedger` methods of those names) on the route's turn."""

    async def decide(call: Call) -> Any:
        turn = str(call.request.path_params["turn"])
        return await _guarded(_write(call, lambda mind: getattr(mind, judgement)(turn)))

    return decide


async def ask(call: Call) -> Any:
    b, mind = call.body, call.the_mind
    done = await in_turn_thread(
        call,
        lambda: mind.ask(
            b["question"],
            current=b.get("current", False),
            model=b.get("model"),
            mock_reply=b.get("mock_reply"),
            api_base=b.get("api_base"),
            budget=b.get("budget", DEFAULT_BUDGET),
        ),
    )
    data = done.model_dump(mode="json")
    if not data.get("failure"):
        return data
    from mindledger.service.turn_answers import failure_status

    failure = data["failure"]
    message = f"generation failed ({failure.get('kind')}): {failure.get('message')}"
    status, code, headers = failure_status(str(failure.get("kind", "")))
    # The one error shape; the ask's record (its turn, kept failed) rides along as `mind_ask`.
    return JsonResponse({**error_body(status, code, message), "mind_ask": data}, status, headers)


def knowledge_endpoints() -> list[Endpoint]:
    """The knowledge routes, registered in the /v1 route table."""
    from mindledger.results import AskResult, KnowledgeChange, KnowledgeList, KnowledgeShown
    from mindledger.service import bodies

    tags = ("knowledge",)
    judged = [
        Endpoint(
            "POST",
            f"{ITEM}/{action}",
            _judge(action),
            f"`mind knowledge {action} REF --json`: {what}",
            body=bodies.NoteBody,
            tags=tags,
            responses=AMBIGUOUS,
            result=KnowledgeChange,
        )
        for action, what in (
            ("verify", "the item becomes verified (0.95)."),
            ("dispute", "the item is disputed: never reused or shown."),
            ("retract", "the item is retracted (0 ppm): never reused or shown."),
        )
    ]
    decided = [
        Endpoint(
            "POST",
            f"{MIND}/turns/{{turn}}/{action}",
            _decide(action),
            f"`mind {action} TURN --json`: {what} {TURN_REF}",
            body=bodies.NoBody,
            tags=tags,
            responses=AMBIGUOUS_TURN,
            result=KnowledgeChange,
        )
        for action, what in (
            ("approve", "its answer becomes verified knowledge (0.95)."),
            ("discard", "its knowledge is retracted (0 ppm)."),
        )
    ]
    return [
        Endpoint(
            "GET",
            KNOWLEDGE,
            list_knowledge,
            "`mind knowledge list --json`.",
            params=(Param("all", "boolean", description="Include deleted items."),),
            tags=tags,
            result=KnowledgeList,
        ),
        Endpoint(
            "GET",
            ITEM,
            show_knowledge,
            "`mind knowledge show REF --json` (REF: an id, an id prefix or the question).",
            params=(Param("history", "boolean", description="Every revision, from the ledger."),),
            tags=tags,
            responses=AMBIGUOUS,
            result=KnowledgeShown,
        ),
        Endpoint(
            "POST",
            KNOWLEDGE,
            remember,
            "`mind remember TEXT --json`: the owner's capture (the same question revises).",
            body=bodies.RememberBody,
            tags=tags,
            result=KnowledgeChange,
        ),
        *judged,
        Endpoint(
            "POST",
            f"{ITEM}/edit",
            edit,
            "`mind knowledge edit REF ANSWER --json`: a revision keeping the previous one.",
            body=bodies.EditBody,
            tags=tags,
            responses=AMBIGUOUS,
            result=KnowledgeChange,
        ),
        Endpoint(
            "POST",
            f"{ITEM}/delete",
            delete,
            "`mind knowledge delete REF --json`: a tombstone revision.",
            body=bodies.NoteBody,
            tags=tags,
            responses=AMBIGUOUS,
            result=KnowledgeChange,
        ),
        *decided,
        Endpoint(
            "POST",
            f"{MIND}/ask",
            ask,
            "`mind ask QUESTION --json`: reusable knowledge, else a turn (a failed model: an "
            "error with the ask as `mind_ask`, 503 when a retry may pass).",
            body=bodies.AskBody,
            tags=tags,
            result=AskResult,
        ),
    ]
