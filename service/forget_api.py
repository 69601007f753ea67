"""The /v1 forget route: `mind forget --json` through the server, with the mind's token (the
owner's: a model never reaches it). The server's warm state for that mind is dropped first, so
no cache keeps what is forgotten."""

from __future__ import annotations

from typing import Any

from mindledger.service.endpoints import Call, Endpoint
from mindledger.service.http_api import MIND, in_turn_thread


async def forget(call: Call) -> Any:
    b = call.body
    kind = b["selector"]  # one of the selectors and a string value: checked by its model
    dry_run = bool(b.get("dry_run", False))
    mind = call.the_mind
    return await in_turn_thread(call, lambda: mind.forget(kind, b["value"], dry_run=dry_run))


def forget_endpoints() -> list[Endpoint]:
    """The forget route, registered in the /v1 route table."""
    from mindledger.results_ledger import ForgetResult
    from mindledger.service.bodies import ForgetBody

    return [
        Endpoint(
            "POST",
            f"{MIND}/forget",
            forget,
            "`mind forget --SELECTOR VALUE --yes --json` (dry_run: counts only, no change).",
            body=ForgetBody,
            tags=("forget",),
            result=ForgetResult,
        )
    ]
