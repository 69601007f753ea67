"""The ledger as a readable Markdown transcript: turns, imported messages, commitments, threads
and identity changes in ledger order, each with its position and chain hash.

A turn is written when it finishes (its completed, interrupted or failed event), with the hash
of that event: the hash that covers everything the turn recorded. Events come opened by the
ledger reader (`open_states`): sealed text in the clear, "[forgotten]" where its key is gone;
never an envelope.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from mindledger.adapters.hash_chain import ChainRow
from mindledger.adapters.ledger_export import Genesis, render_state

OPEN_BATCH = 1000  # rows opened per key-store read
# The ledger reader's `open_states`: rows -> their states decoded, sealed fields opened.
Opener = Callable[[list[ChainRow]], list[dict[str, Any]]]

TURN_ENDS = {
    "mind.turn.completed": "completed",
    "mind.turn.interrupted": "interrupted",
    "mind.turn.generation_failed": "failed",
}


@dataclass
class _Turn:
    seq: int = 0
    speaker: str = "user"
    text: str = ""
    time: str = ""
    reply: str | None = None
    model: str = ""
    notes: list[str] = field(default_factory=list)


def transcript(
    genesis: Genesis,
    rows: Iterable[ChainRow],
    events: int,
    head: str | None,
    open_states: Opener,
) -> Iterator[str]:
    """The transcript, a chunk of Markdown at a time; `open_states` opens the rows' states."""
    yield "# Mind transcript\n\n"
    yield f"- ledger: `{genesis.ledger_id}` (created {genesis.created_at})\n"
    yield f"- genesis: `{genesis.genesis}`\n"
    yield f"- events: {events}, head: `{head or genesis.genesis}`\n"
    yield "- check the whole chain with `mind export --format jsonl` and `mind verify --export`\n\n"
    turns: dict[str, _Turn] = {}
    commitments: dict[str, str] = {}  # aggregate -> cid
    threads: dict[str, str] = {}  # aggregate -> label
    for row, state in _opened(rows, open_states):
        time, topic, aggregate = str(state.get("timestamp", "")), row.topic or "", row.originator_id
        at = f"*#{row.position} · {time} · `{row.hash[:16]}`*"
        if topic.startswith("mind.turn.") and aggregate is not None:
            text = _turn_event(turns, aggregate, topic, state, time, row)
        else:
            text = _other_event(topic, state, at, aggregate or "", commitments, threads)
        if text:
            yield text


def _turn_event(
    turns: dict[str, _Turn],
    aggregate: str,
    topic: str,
    state: dict[str, Any],
    time: str,
    row: ChainRow,
) -> str | None:
    turn = turns.setdefault(aggregate, _Turn())
    if topic == "mind.turn.started":
        turn.seq, turn.speaker = int(state.get("seq", 0)), str(state.get("speaker", "user"))
        turn.text, turn.time, turn.model = str(state.get("text", "")), time, str(state.get("model"))
    elif topic == "mind.turn.replied":
        turn.reply = str(state.get("reply", ""))
    elif topic == "mind.turn.line_rejected":
        line, reason = _inline(state.get("line")), _inline(state.get("reason"))
        turn.notes.append(f"rejected line “{line}”: {reason}")
    elif topic == "mind.turn.retried":  # another attempt of a failed turn (shown below)
        turn.notes.append(f"attempt {_inline(state.get('attempt'))}: its message sent again")
    elif topic == "mind.turn.reflected":
        turn.notes.append(f"reflection: {_inline(state.get('text'))}")
    elif topic in TURN_ENDS:
        del turns[aggregate]
        if topic == "mind.turn.generation_failed":  # a retry may follow: its message is kept
            turns[aggregate] = _Turn(turn.seq, turn.speaker, turn.text, turn.time, None, turn.model)
        out = [f"## Turn {turn.seq} ({TURN_ENDS[topic]}) · {_inline(turn.time)}\n\n"]
        out.append(f"**{_inline(turn.speaker)}:**\n\n{_quote(turn.text)}\n\n")
        if turn.reply is not None:
            out.append(f"**reply** ({_inline(turn.model)}):\n\n{_quote(turn.reply)}\n\n")
        if topic == "mind.turn.generation_failed":
            out.append(f"- generation failed: {_inline(state.get('message'))}\n")
        for key in ("opened", "closed", "identity", "threads"):  # what the reply changed
            changed = state.get(key) if topic == "mind.turn.completed" else None
            if isinstance(changed, list) and changed:
                out.append(f"- {key}: {', '.join(_inline(c) for c in changed)}\n")
        for note in turn.notes:
            out.append(f"- {note}\n")
        out.append(f"- hash: `{row.hash}` (position {row.position})\n\n")
        return "".join(out)
    return None


def _other_event(
    topic: str,
    state: dict[str, Any],
    at: str,
    aggregate: str,
    commitments: dict[str, str],
    threads: dict[str, str],
) -> str | None:
    if topic == "mind.conversation.message_observed":
        said = f"**{_inline(state.get('speaker'))}** ({_inline(state.get('said_at'))}):"
        return f"{said}\n\n{_quote(str(state.get('text', '')))}\n\n{at}\n\n"
    if topic == "mind.commitment.opened":
        commitments[aggregate] = " ".join(str(state.get("cid", "")).replace("`", "'").split())
        return (
            f"- commitment **opened** `{commitments[aggregate]}`: {_inline(state.get('text'))} "
            f"(origin {_inline(state.get('origin'))}) {at}\n\n"
        )
    if topic == "mind.commitment.closed":
        reason = f": {_inline(state.get('reason'))}" if state.get("reason") else ""
        return f"- commitment **closed** `{commitments.get(aggregate, '?')}`{reason} {at}\n\n"
    if topic == "mind.thread.opened":
        threads[aggregate] = _inline(state.get("label"))
        return f"- thread **opened** {threads[aggregate]}: {_inline(state.get('content'))} {at}\n\n"
    if topic == "mind.thread.resolved":
        return (
            f"- thread **resolved** {threads.get(aggregate, '?')}: "
            f"{_inline(state.get('verdict'))} {at}\n\n"
        )
    return _identity_event(topic, state, at)


def _identity_event(topic: str, state: dict[str, Any], at: str) -> str | None:
    if topic == "mind.identity.created":
        return (
            f"- identity **created**: {_inline(state.get('name'))} "
            f"({_inline(state.get('model'))}) {at}\n\n"
        )
    if topic == "mind.identity.name_adopted":
        name, via = _inline(state.get("name")), _inline(state.get("via"))
        return f"- identity **name adopted**: {name} ({via}) {at}\n\n"
    if topic == "mind.identity.name_proposed":
        return f"- identity **name proposed**: {_inline(state.get('name'))} {at}\n\n"
    if topic == "mind.identity.description_revised":
        return f"- identity **description**: {_inline(state.get('text'))} {at}\n\n"
    if topic == "mind.identity.model_switched":
        previous, model = _inline(state.get("previous")), _inline(state.get("model"))
        return f"- identity **model**: {previous} → {model} {at}\n\n"
    return None


def _opened(
    rows: Iterable[ChainRow], open_states: Opener
) -> Iterator[tuple[ChainRow, dict[str, Any]]]:
    """Each row with its opened state, a batch at a time. A state the export carries as raw
    bytes (`render_state`: not canonical JSON, none written by this code) shows as no fields."""
    rows = iter(rows)
    while chunk := list(islice(rows, OPEN_BATCH)):
        readable = [r for r in chunk if "payload" in render_state(bytes(r.state or b""))]
        states = dict(zip((r.position for r in readable), open_states(readable), strict=True))
        for row in chunk:
            yield row, states.get(row.position, {})


def _inline(value: object) -> str:
    """A value on one line (a newline in a name or reason would break the list item), made
    inert (`_inert`)."""
    return _inert(" ".join(str(value).split()))


def _quote(text: str) -> str:
    return "\n".join(f"> {_inert(line)}" for line in text.splitlines()) or ">"


# Text in the transcript comes from users, models and imported files; Markdown viewers render
# raw HTML and follow links. HTML-significant characters become entities and Markdown's link
# and image brackets (and the backslash that could undo an escape) are escaped, so `<script>`,
# `<img onerror=...>`, `<javascript:...>` and `[x](javascript:...)` show as the text they are.
_INERT = str.maketrans(
    {"&": "&amp;", "<": "&lt;", ">": "&gt;", "\\": "\\\\", "[": "\\[", "]": "\\]", "`": "\\`"}
)


def _inert(text: str) -> str:
    """`text` as Markdown that shows it literally: no HTML, no links, no code spans."""
    return text.translate(_INERT)
