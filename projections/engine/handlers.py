"""One handler per event type: how each event changes the read-model rows."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import Any, NamedTuple

import orjson

from mindledger.domain.text import FORGOTTEN_MARK
from mindledger.projections.retrieval.names import name_key

TABLE_OF_KIND = {
    "identity": "identity",
    "commitment": "commitments",
    "concept": "concepts",
    "thread": "threads",
    "turn": "turns",
    "conversation": "conversations",
    "tick": "ticks",
    "knowledge": "knowledge",
}


def json_text(value: Any) -> str:
    """A JSON column's text: only ever parsed back, so orjson's spelling where it has one (a
    turn's context, ~30 KB: 0.19 ms by `json.dumps`, 0.02 by orjson, in every turn's
    catch-up), json's where orjson refuses (integers past 64 bits, deep nesting)."""
    try:
        return orjson.dumps(value).decode()
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(value)


class Ev(NamedTuple):
    """An event as the projector sees it: position, time, topic, stream, version, payload.
    (A tuple: built once per event, it costs a third of a frozen dataclass.)"""

    position: int
    time: datetime
    topic: str
    stream: str
    version: int
    hash: str
    state: dict[str, Any]
    raw: bytes = b""


class Rows:
    """The rows a batch touches: entity rows by stream, and appended rows."""

    def __init__(self, loaded: dict[str, dict[str, dict[str, Any]]]) -> None:
        self.entities = loaded
        # Which streams already had a row, so only those need deleting before the rewrite.
        self.loaded = {table: set(rows) for table, rows in loaded.items()}
        self.appended: dict[str, list[dict[str, Any]]] = {}
        # Positions of indexed documents no longer current (`docs.live` turns false).
        self.superseded: list[int] = []
        # The indexed documents (a row for most events), as columns: position, kind, stream,
        # text (each is live when indexed). Their texts are tokenised when the batch is
        # written, all at once (`Projector._write`), not one document at a time here.
        self.docs: tuple[list[int], list[str], list[str], list[str]] = ([], [], [], [])

    def entity(self, table: str, stream: str) -> dict[str, Any]:
        """The current row of a stream (a new empty one when the stream is new)."""
        rows = self.entities.setdefault(table, {})
        if stream not in rows:
            rows[stream] = {"stream_id": stream}
        return rows[stream]

    def append(self, table: str, row: dict[str, Any]) -> None:
        """Add a row to an append-only table."""
        self.appended.setdefault(table, []).append(row)


Handler = Callable[[Rows, Ev], None]


def registrar(table: dict[str, Handler]) -> Callable[[str], Callable[[Handler], Handler]]:
    """A `@handles(topic)` decorator that records a module's handlers in that module's `table`
    (`projections.engine.registry` lists the modules)."""

    def handles(topic: str) -> Callable[[Handler], Handler]:
        def register(fn: Handler) -> Handler:
            if topic in table:
                raise ValueError(f"two handlers for {topic}")
            table[topic] = fn
            return fn

        return register

    return handles


# This module's handlers (messages, commitments, concepts, identity, turns, conversations).
HANDLERS: dict[str, Handler] = {}
handles = registrar(HANDLERS)


def forgotten(e: Ev) -> bool:
    """Whether the event's own words were forgotten (their key destroyed): it is still
    projected, with "[forgotten]" for its words, but never indexed or offered to retrieval."""
    return bool(e.state.get(FORGOTTEN_MARK))


def index(rows: Rows, e: Ev, kind: str, text: str) -> None:
    """Add a document to the lexical index (the docs and doc_terms tables); a forgotten event
    is not indexed."""
    if e.state.get(FORGOTTEN_MARK):  # `forgotten` inline: a call a document
        return
    docs = rows.docs
    docs[0].append(e.position)
    docs[1].append(kind)
    docs[2].append(e.stream)
    docs[3].append(text)


def _message(
    rows: Rows, e: Ev, *, indexed: str | None = None, searchable: bool = True, **fields: Any
) -> None:
    """Append a row to `messages` at this event's position and, when searchable, index it for
    retrieval (`indexed` overrides the indexed text, e.g. to add the message it answers). A
    forgotten message gets no row: every retrieval channel reads messages from here."""
    if forgotten(e):
        return
    rows.append(
        "messages",
        {
            "position": e.position,
            "turn_id": None,
            "source_id": None,
            "conversation": None,
            **fields,
        },
    )
    if searchable:
        index(rows, e, "message", indexed if indexed is not None else fields["text"])


def _history(rows: Rows, e: Ev, change: str, **fields: Any) -> None:
    rows.append(
        "identity_history",
        {
            "position": e.position,
            "time": e.time,
            "change": change,
            "name": None,
            "model": None,
            "via": None,
            "reason": None,
            "turn": None,
            **fields,
        },
    )


@handles("mind.identity.created")
def identity_created(rows: Rows, e: Ev) -> None:
    s = e.state
    rows.entity("identity", e.stream).update(
        ledger_id=s["ledger_id"],
        name=s["name"],
        model=s["model"],
        description=None,
        created_at=e.time,
        updated_at=e.time,
        pending_proposals=[],
    )
    _history(rows, e, "created", name=s["name"], model=s["model"], via="created")


@handles("mind.identity.name_proposed")
def name_proposed(rows: Rows, e: Ev) -> None:
    row = rows.entity("identity", e.stream)
    row["pending_proposals"] = [*(row.get("pending_proposals") or []), e.state["name"]]
    row["updated_at"] = e.time
    _history(rows, e, "name_proposed", name=e.state["name"], turn=e.state["turn"])


@handles("mind.identity.name_adopted")
def name_adopted(rows: Rows, e: Ev) -> None:
    s = e.state
    row = rows.entity("identity", e.stream)
    row["name"], row["updated_at"] = s["name"], e.time
    row["pending_proposals"] = [p for p in row.get("pending_proposals") or [] if p != s["name"]]
    _history(
        rows,
        e,
        "name_adopted",
        name=s["name"],
        via=s["via"],
        reason=s.get("reason"),
        turn=s.get("turn"),
    )


@handles("mind.identity.description_revised")
def description_revised(rows: Rows, e: Ev) -> None:
    row = rows.entity("identity", e.stream)
    row["description"], row["updated_at"] = e.state["text"], e.time
    _history(rows, e, "description_revised")


@handles("mind.identity.model_switched")
def model_switched(rows: Rows, e: Ev) -> None:
    row = rows.entity("identity", e.stream)
    row["model"], row["updated_at"] = e.state["model"], e.time
    _history(rows, e, "model_switched", model=e.state["model"])


@handles("mind.commitment.opened")
def commitment_opened(rows: Rows, e: Ev) -> None:
    s, stream = e.state, e.stream
    stated = s.get("opened_at")
    # Every column at once (a new row replaces any there: each column is set): a third of
    # the handler's time went to `entity` and `update`'s keyword dict, and commitments are
    # half of a bulk catch-up's events.
    rows.entities.setdefault("commitments", {})[stream] = {
        "stream_id": stream,
        "cid": s["cid"],
        "episode": s["episode"],
        "text": s["text"],
        "status": "open",
        "origin": s["origin"],
        # An imported ledger's own time when it gave one (the event's time is the import's).
        "opened_at": datetime.fromisoformat(stated) if stated else e.time,
        "closed_at": None,
        "close_reason": None,
        "thread": s.get("thread_id"),
        "concepts": s.get("concepts", []),
        "evidence": [],
        "opened_position": e.position,
        "closed_position": None,
    }
    index(rows, e, "commitment", s["text"])


@handles("mind.commitment.closed")
def commitment_closed(rows: Rows, e: Ev) -> None:
    s = e.state
    row = rows.entity("commitments", e.stream)
    if row.get("status") == "open":
        rows.superseded.append(row["opened_position"])
    stated = s.get("closed_at")
    row["status"] = "closed"
    row["closed_at"] = datetime.fromisoformat(stated) if stated else e.time
    row["close_reason"] = s.get("reason")
    row["evidence"] = s.get("evidence", [])
    row["closed_position"] = e.position


@handles("mind.concept.defined")
def concept_defined(rows: Rows, e: Ev) -> None:
    s = e.state
    row = rows.entity("concepts", e.stream)
    # Schema 1 called the definition "text" (see Concept.Defined.upcast_v1_v2).
    definition = s["definition"] if "definition" in s else s["text"]
    token = s["token"]
    version = row.get("version")
    row["token"], row["definition"], row["updated_at"] = token, definition, e.time
    row["version"] = (version or 0) + 1
    if "aliases" not in row:
        row["aliases"] = []
    if row.get("defined_at") is None:
        row["defined_at"], row["defined_position"] = e.time, e.position
        _name(rows, e, token, is_alias=False)
    elif row.get("definition_position") is not None:
        rows.superseded.append(row["definition_position"])
    # Older definitions are superseded for retrieval; a forgotten one leaves the concept with
    # none to offer (retrieval reads only concepts with a definition position).
    row["definition_position"] = None if s.get(FORGOTTEN_MARK) else e.position
    index(rows, e, "concept", f"{token.replace('.', ' ')} {definition}")


@handles("mind.concept.aliased")
def concept_aliased(rows: Rows, e: Ev) -> None:
    row = rows.entity("concepts", e.stream)
    row["aliases"] = [*(row.get("aliases") or []), e.state["alias"]]
    row["updated_at"] = e.time
    if not forgotten(e):  # "[forgotten]" is no name: the word "forgotten" must not match it
        _name(rows, e, e.state["alias"], is_alias=True)


def _name(rows: Rows, e: Ev, name: str, is_alias: bool) -> None:
    rows.append(
        "concept_names",
        {
            "name_key": name_key(name),
            "name": name,
            "stream_id": e.stream,
            "is_alias": is_alias,
            "position": e.position,
        },
    )


@handles("mind.concept.related")
def concept_related(rows: Rows, e: Ev) -> None:
    source = rows.entity("concepts", e.stream)["token"]
    rows.append(
        "concept_relations",
        {
            "position": e.position,
            "source": source,
            "target": e.state["target"],
            "relation": e.state["relation"],
            "time": e.time,
        },
    )


@handles("mind.concept.bound")
def concept_bound(rows: Rows, e: Ev) -> None:
    token = rows.entity("concepts", e.stream)["token"]
    rows.append(
        "concept_bindings",
        {
            "position": e.position,
            "token": token,
            "kind": e.state["kind"],
            "target": e.state["target"],
            "time": e.time,
        },
    )


@handles("mind.turn.started")
def turn_started(rows: Rows, e: Ev) -> None:
    s = e.state
    rows.entity("turns", e.stream).update(
        seq=s["seq"],
        speaker=s["speaker"],
        status="started",
        text=s["text"],
        model=s["model"],
        started_at=e.time,
        started_position=e.position,
        pid=s["pid"],
        host=s["host"],
        opened=[],
        closed=[],
    )
    if s["speaker"] == "user":
        _message(
            rows,
            e,
            turn_id=e.stream,
            role="user",
            speaker="user",
            text=s["text"],
            time=e.time,
        )


@handles("mind.turn.replied")
def turn_replied(rows: Rows, e: Ev) -> None:
    s = e.state
    rows.entity("turns", e.stream).update(
        reply=s["reply"],
        reply_raw=s["reply_raw"],
        model=s["model"],
        provider=s["provider"],
        usage=json_text(s["usage"]),
        latency_ms=s["latency_ms"],
        finish_reason=s["finish_reason"],
        cut_off=s.get("cut_off", False),  # absent from replies recorded before it existed
    )
    if not s["reply"]:
        return  # a reply that only calls tools says nothing to recall
    _message(
        rows,
        e,
        turn_id=e.stream,
        role="assistant",
        speaker="assistant",
        text=s["reply"],
        time=e.time,
    )


@handles("mind.turn.generation_failed")
def turn_failed(rows: Rows, e: Ev) -> None:
    rows.entity("turns", e.stream).update(
        status="failed",
        failure_kind=e.state["kind"],
        failure=e.state["message"],
        finished_at=e.time,
        finished_position=e.position,
    )


@handles("mind.turn.retried")
def turn_retried(rows: Rows, e: Ev) -> None:
    # Another attempt of a failed turn: running again until its next outcome.
    rows.entity("turns", e.stream).update(
        status="started", failure_kind=None, failure=None, finished_at=None, finished_position=None
    )


@handles("mind.turn.line_rejected")
def turn_line_rejected(rows: Rows, e: Ev) -> None:
    rows.append(
        "rejections",
        {
            "position": e.position,
            "turn_id": e.stream,
            "line": e.state["line"],
            "reason": e.state["reason"],
            "time": e.time,
        },
    )


@handles("mind.turn.claim_accepted")
def turn_claim_accepted(rows: Rows, e: Ev) -> None:
    rows.append(
        "claims",
        {
            "position": e.position,
            "turn_id": e.stream,
            "claim_type": e.state["claim_type"],
            "payload": json_text(e.state["payload"]),
            "time": e.time,
        },
    )


@handles("mind.turn.reflected")
def turn_reflected(rows: Rows, e: Ev) -> None:
    _message(
        rows,
        e,
        turn_id=e.stream,
        role="reflection",
        speaker="assistant",
        text=e.state["text"],
        time=e.time,
        searchable=False,  # notes to itself are not evidence
    )


@handles("mind.turn.completed")
def turn_completed(rows: Rows, e: Ev) -> None:
    s = e.state
    rows.entity("turns", e.stream).update(
        status="complete",
        finished_at=e.time,
        finished_position=e.position,
        context=json_text(s["context"]),
        context_tokens=s["context_tokens"],
        opened=s["opened"],
        closed=s["closed"],
        rejections=json_text(s["rejections"]),
    )


@handles("mind.turn.interrupted")
def turn_interrupted(rows: Rows, e: Ev) -> None:
    rows.entity("turns", e.stream).update(
        status="interrupted",
        failure=e.state["reason"],
        finished_at=e.time,
        finished_position=e.position,
    )


@handles("mind.turn_numbers.given")
def turn_number_given(rows: Rows, e: Ev) -> None:
    """The write side's numbering: its row in `events` is all the read side keeps (each
    turn's number is in its `turns` row already)."""


@handles("mind.forget.forgotten")
def forgotten_recorded(rows: Rows, e: Ev) -> None:
    """A forget (selector, counts, time, who): its row in `events` is what the read side keeps;
    what it destroyed reads as "[forgotten]" once the read model is rebuilt."""


@handles("mind.conversation.started")
def conversation_started(rows: Rows, e: Ev) -> None:
    rows.entity("conversations", e.stream).update(
        source=e.state["source"],
        participants=e.state["participants"],
        started_at=e.time,
        messages=0,
    )


@handles("mind.conversation.titled")
def conversation_titled(rows: Rows, e: Ev) -> None:
    rows.entity("conversations", e.stream)["title"] = e.state["title"]


def _stated(value: str | None) -> datetime | None:
    """A time a payload states (ISO text), or None."""
    return datetime.fromisoformat(value) if value else None


@handles("mind.conversation.message_observed")
def message_observed(rows: Rows, e: Ev) -> None:
    s = e.state
    said_at = datetime.fromisoformat(s["said_at"])
    row = rows.entity("conversations", e.stream)
    row["messages"] = (row.get("messages") or 0) + 1
    # An imported conversation started when its first message was said, not when it was imported.
    if row["messages"] == 1 or (row.get("started_at") and said_at < row["started_at"]):
        row["started_at"] = said_at
    _message(
        rows,
        e,
        role="observed",
        speaker=s["speaker"],
        text=s["text"],
        time=said_at,
        source_id=s["source_id"],
        conversation=e.stream,
        # A reply is indexed with the message it answers: questions match the answering turn.
        indexed=f"{s['speaker']} {s['text']} {row.get('last_message') or ''}",
    )
    row["last_message"] = s["text"]
