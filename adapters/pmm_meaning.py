"""What each kind of PMM event means in this mind (the table `mind import pmm` prints).

| PMM kind | here |
|---|---|
| user_message, assistant_message | a message of the file's conversation (speaker user/assistant) |
| commitment_open, commitment_close | a commitment episode opened (origin kept) / closed (reason) |
| concept_define, concept_alias, concept_relate, concept_bind_event | the concept events |
| identity_adoption | the mind adopts the name (`{"token": "identity.Echo"}` → Echo) |
| claim, validation_failure, reflection | kept as records labelled so (the read model lists PMM's
  claims in `claims` and its validation failures in `rejections`) |
| anything else | kept as a record: `mind log`, `imported_records`, recall |

A field missing or of the wrong type makes the event a plain record, never an error.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from mindledger.domain.foreign_import import (
    AdoptName,
    AliasConcept,
    BindConcepts,
    ClosePromise,
    DefineConcept,
    Meaning,
    OpenPromise,
    RelateConcepts,
    SayMessage,
)

# Kinds kept as records under their own label (our claims and reflections belong to a turn).
LABELS = {"claim": "claim", "validation_failure": "validation failure", "reflection": "reflection"}
SPEAKERS = {"user_message": "user", "assistant_message": "assistant"}
OPENED_PREFIX = "Commitment opened: "
IDENTITY_PREFIX = "identity."


def meaning_of(
    kind: str, content: str, meta: Any, at: datetime | None
) -> tuple[Meaning | None, str]:
    """What a PMM event means here, and its label when it is kept as a record."""
    meta = meta if isinstance(meta, dict) else {}
    label = LABELS.get(kind, "record")
    if kind in SPEAKERS:
        if at is None:
            return None, "record (no readable time)"
        if not content.strip():
            return None, "record (empty message)"
        return SayMessage(SPEAKERS[kind], content, at), label
    body = _json_object(content)
    meaning: Meaning | None = None
    if kind == "commitment_open":
        meaning = _opened(content, meta, at)
    elif kind == "commitment_close" and _text(meta.get("cid")):
        meaning = ClosePromise(meta["cid"], _text(meta.get("reason")) or None, at)
    elif kind == "concept_define" and _text(body.get("token")) and _text(body.get("definition")):
        meaning = DefineConcept(body["token"], body["definition"])
    elif kind == "concept_alias" and _text(body.get("from")) and _text(body.get("to")):
        meaning = AliasConcept(body["to"], body["from"])
    elif kind == "concept_relate" and all(_text(body.get(k)) for k in ("from", "to", "relation")):
        meaning = RelateConcepts(body["from"], body["to"], body["relation"])
    elif kind == "concept_bind_event":
        meaning = _bound(body)
    elif kind == "identity_adoption":
        meaning = _adopted(body, meta)
    return meaning, label


def _opened(content: str, meta: dict[str, Any], at: datetime | None) -> OpenPromise | None:
    cid = _text(meta.get("cid"))
    text = _text(meta.get("text")) or content.removeprefix(OPENED_PREFIX).strip()
    if not cid or not text:
        return None
    origin = meta.get("origin")
    return OpenPromise(text, origin if origin in ("user", "assistant") else "autonomy", cid, at)


def _bound(body: dict[str, Any]) -> BindConcepts | None:
    tokens, target = body.get("tokens"), body.get("event_id")
    if not isinstance(tokens, list) or not tokens or not all(_text(t) for t in tokens):
        return None
    if isinstance(target, bool) or not isinstance(target, int | str):
        return None
    return BindConcepts(tuple(tokens), f"pmm:{target}")


def _adopted(body: dict[str, Any], meta: dict[str, Any]) -> AdoptName | None:
    name = _text(body.get("name")) or _text(meta.get("name")) or _text(body.get("token"))
    if not name:
        return None
    return AdoptName(name.removeprefix(IDENTITY_PREFIX))


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""
