"""The /v1 routes of the owner's direct changes: close a commitment, resolve a thread, define
a concept, give it an alias. The bearer token is the owner's; each route calls the use case the
matching CLI command calls and answers with what that command prints with `--json`. Writes run
in the turn workers, serialized with the mind's turns in this server."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mindledger.service.endpoints import Call, Endpoint
from mindledger.service.http_api import MIND, in_turn_thread


def _path(call: Call, name: str) -> str:
    return str(call.request.path_params[name])


def _write(call: Call, act: Callable[[Any], Any]) -> Any:
    """The owner's change (a `MindLedger` method's call), in the turn workers."""
    mind = call.the_mind
    return in_turn_thread(call, lambda: act(mind))


# The body's fields are checked by their model (service/bodies.py); the floor checks the rest
# (an unknown CID, a verdict without what it needs) and its errors answer as 4xx.
async def close(call: Call) -> Any:
    cid, reason = _path(call, "cid"), call.body.get("reason")
    return await _write(call, lambda mind: mind.close_commitment(cid, reason))


async def resolve(call: Call) -> Any:
    thread, b = _path(call, "thread"), call.body
    return await _write(
        call,
        lambda mind: mind.resolve_thread(
            thread, b["verdict"], reason=b.get("reason"), artifact=b.get("artifact"), by=b.get("by")
        ),
    )


async def define(call: Call) -> Any:
    token, definition = _path(call, "token"), call.body["definition"]
    return await _write(call, lambda mind: mind.define_concept(token, definition))


async def alias(call: Call) -> Any:
    token, name = _path(call, "token"), call.body["alias"]
    return await _write(call, lambda mind: mind.alias_concept(token, name))


def owner_endpoints() -> list[Endpoint]:
    """The owner's change routes, registered in the /v1 route table."""
    from mindledger.results_listings import (
        CloseResult,
        ConceptAliased,
        ConceptDefined,
        ThreadResolved,
    )
    from mindledger.service import bodies

    return [
        Endpoint(
            "POST",
            f"{MIND}/commitments/{{cid}}/close",
            close,
            "`mind close CID --json`: close an open commitment.",
            body=bodies.CloseBody,
            tags=("commitments",),
            result=CloseResult,
        ),
        Endpoint(
            "POST",
            f"{MIND}/threads/{{thread}}/resolve",
            resolve,
            "`mind thread resolve ID --as VERDICT --json` (ID: a short id, a prefix or a full id).",
            body=bodies.ResolveBody,
            tags=("threads",),
            result=ThreadResolved,
        ),
        Endpoint(
            "POST",
            f"{MIND}/concepts/{{token}}/define",
            define,
            "`mind concept define TOKEN DEFINITION --json` (a new version when it exists).",
            body=bodies.DefineBody,
            tags=("concepts",),
            result=ConceptDefined,
        ),
        Endpoint(
            "POST",
            f"{MIND}/concepts/{{token}}/aliases",
            alias,
            "`mind concept alias TOKEN ALIAS --json`.",
            body=bodies.AliasBody,
            tags=("concepts",),
            result=ConceptAliased,
        ),
    ]
