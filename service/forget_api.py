"""The /v1 forget route: `mind forget --json` through the server, with the mind's token (the
owner's: a model never reaches it). The server's warm state for that mind is dropped first, so
no cache keeps what is forgotten."""

from __future__ import annotations

from typing import Any

from mindledger.service.endpoints import Call, Endpoint, Field
from mindledger.service.errors import ApiError
from mindledger.service.http_api import MIND, in_turn_thread

SELECTORS = ("turn", "conversation", "speaker", "commitment", "concept", "thread", "knowledge")


async def forget(call: Call) -> Any:
    b = call.body
    kind = b["selector"]
    if kind not in (*SELECTORS, "before"):
        raise ApiError(
            400, "bad_request", f"'selector' must be one of {', '.join(SELECTORS)}, before"
        )
    if not isinstance(b["value"], str):
        raise ApiError(400, "bad_request", "field 'value' must be a string")
    dry_run = bool(b.get("dry_run", False))
    mind = call.the_mind
    return await in_turn_thread(call, lambda: mind.forget(kind, b["value"], dry_run=dry_run))


def forget_endpoints() -> list[Endpoint]:
    """The forget route, registered in the /v1 route table."""
    from mindledger.results_ledger import ForgetResult

    return [
        Endpoint(
            "POST",
            f"{MIND}/forget",
            forget,
            "`mind forget --SELECTOR VALUE --yes --json` (dry_run: counts only, no change).",
            body=(
                Field("selector", "string", True, f"One of {', '.join(SELECTORS)}, before."),
                Field("value", "string", True, "The id, name, CID, token or ISO-8601 time."),
                Field("dry_run", "boolean", description="Count what would go; change nothing."),
            ),
            tags=("forget",),
            result=ForgetResult,
        )
    ]
