"""A turn's result shaped like the Persistent Mind Model's `pmm_turn` MCP tool result.

PMM's names where they map (its one-shot turn: `assistant`, `assistant_raw`,
`generation_status`, `generation_failure`, `event_range`, `opened`, `closed`, `claims`,
`validation_failures`, `identity_updates`, `events` on request), built from the same turn
object `mind turn --json` prints, plus the mind's own few fields (`turn`, `seq`, `model`,
`usage`, `finish_reason`, `cut_off`, `mind`).
"""

from __future__ import annotations

from typing import Any

from mindledger.application import MindLedger


def turn_result(
    mind: MindLedger,
    data: dict[str, Any],
    notification_ids: list[int],
    include_events: bool = False,
) -> dict[str, Any]:
    """The pmm_turn-shaped result of one turn. `data`: the `mind turn --json` object;
    `notification_ids`: the turn's events (`TurnOutcome.notification_ids`)."""
    events = mind.turn_events(notification_ids).model_dump(mode="json")
    failure = data.get("failure")
    result: dict[str, Any] = {
        "assistant": data["reply"],
        "assistant_raw": data["reply_raw"],
        "generation_status": data["status"],
        "generation_failure": (
            None
            if failure is None
            else {
                "status": failure["kind"],
                "partial_response": "",  # a failed turn records no reply at all
                "meta": {"kind": failure["kind"], "message": failure["message"]},
            }
        ),
        "event_range": data["events"],
        "opened": data["opened"],
        "closed": data["closed"],
        "claims": data["claims"],
        "validation_failures": data["rejections"],
        "identity_updates": [
            {
                "kind": e["type"].removeprefix("mind.identity."),
                "content": e["payload"],
                "meta": {"position": e["position"]},
            }
            for e in events
            if e["type"].startswith("mind.identity.")
        ],
        "turn": data["turn"],
        "seq": data["seq"],
        "model": data["model"],
        "usage": data["usage"],
        "finish_reason": data["finish_reason"],
        "cut_off": data["cut_off"],
        "mind": data["identity"]["name"],
    }
    if include_events:
        result["events"] = events
    return result
