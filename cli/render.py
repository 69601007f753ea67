"""What `mind turn` and `mind recall` print, from their JSON: one function per command, used by
the in-process command and by the fast path (`cli.fast_path`) alike, so the two cannot drift.

Standard library and `domain` only: the fast path imports this before it decides."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mindledger.cli.output import OutputFailedError, echo, emit_json, table
from mindledger.cli.turn_lines import effect_lines

RECALL_COLUMNS = ["id", "channel", "score", "tokens", "day", "text"]

# The keys that say a write changed nothing (false), or only counted (`dry_run` true).
UNCHANGED = ("opened", "closed", "added", "changed", "forgotten")
# The keys that name what a write recorded, the most telling first.
NAMES = (
    "turn",
    "cid",
    "forget_id",
    "id",
    "tick",
    "token",
    "key",
    "name",
    "model",
    "file",
    "source",
)


def recorded_words(done: Mapping[str, Any] | None) -> str:
    """What to add to a failed stdout's line when the command's write (`done`, its JSON) was
    recorded all the same, naming it so that it is not run again; "" when nothing was."""
    if done is None or done.get("dry_run") is True:
        return ""
    if any(done.get(key) is False or done.get(key) == 0 for key in UNCHANGED if key in done):
        return ""
    if done.get("route") == "memory" and not done.get("stored"):  # an ask memory answered
        return ""
    named = next(((key, done[key]) for key in NAMES if isinstance(done.get(key), str)), None)
    what = f" ({named[0]} {named[1]})" if named is not None else ""
    return f"; it was recorded all the same{what}: see `mind log` before running it again"


def unchanged_words(done: Mapping[str, Any] | None) -> str:
    """What to add to a failed stdout's line when the command's write (`done`, its JSON)
    changed nothing (a dry run, or it was already done: the same commitment again, a selector
    already forgotten), so that nobody wonders whether it took; "" when no write ran or it
    recorded something (`recorded_words` says that)."""
    if done is None:
        return ""
    if done.get("dry_run") is True:
        return "; nothing was recorded"
    if any(done.get(key) is False or done.get(key) == 0 for key in UNCHANGED if key in done):
        return "; nothing was recorded (it was already done)"
    return ""


def echo_turn(turn: Mapping[str, Any], as_json: bool) -> int:
    """Print a turn as `mind turn` does (the JSON, or the reply with its effects); returns the
    exit status: 1 when generation failed (the message stays in the ledger), else 0. A stdout
    that cannot be written is one line saying the turn was recorded all the same."""
    try:
        return _echo_turn(turn, as_json)
    except OutputFailedError as e:
        raise e.saying(
            f"; turn {turn['turn']} was recorded all the same ({turn['status']}, positions "
            f"{turn['events']['first']}-{turn['events']['last']}): see `mind log --turn "
            f"{turn['turn']}`"
        ) from None


def _echo_turn(turn: Mapping[str, Any], as_json: bool) -> int:
    if as_json:
        emit_json(turn)
    elif turn["status"] == "complete":
        echo(turn["reply"])
        for line in effect_lines(turn):
            echo(line, err=True)
    if turn["status"] != "failed":
        return 0
    if not as_json:
        failure = turn["failure"]
        echo(
            f"Error: generation failed ({failure['kind']}): {failure['message']}; the message "
            f"is kept at position {turn['events']['first']}",
            err=True,
        )
    return 1


def echo_recall(data: Mapping[str, Any], as_json: bool) -> None:
    """Print a recall as `mind recall` does: the JSON, or a table and a summary line."""
    if as_json:
        emit_json(data)
        return
    items = data["items"]
    table(items, RECALL_COLUMNS, "Nothing to recall.")
    echo(f"{data['tokens']} tokens, {len(items)} items, {data['dropped']} over budget")
    vectors = data.get("vectors") or {}
    if vectors.get("state") == "on" and vectors.get("lag"):
        echo(
            f"vectors lag: {vectors['lag']} events not embedded yet (embedded up to "
            f"{vectors['position']}; `mind project --vectors` catches up)"
        )
