"""Handlers for imported foreign files (`mind import pmm|chatgpt`): every record they held."""

from __future__ import annotations

import json

from mindledger.projections.engine.handlers import Ev, Handler, Rows, index, registrar

HANDLERS: dict[str, Handler] = {}
handles = registrar(HANDLERS)

# A record's text indexed for recall is cut here: PMM keeps embedding vectors and graph
# statistics as records, whose numbers would otherwise fill the index.
INDEXED_CHARS = 4000
# What a record became when it was made into another event (that event is what recall finds).
MADE_INTO = (
    "message",
    "commitment opened",
    "commitment closed",
    "concept defined",
    "concept alias",
    "concept relation",
    "concept binding",
    "name adopted",
)


@handles("mind.import.started")
@handles("mind.import.resumed")
def import_started(rows: Rows, e: Ev) -> None:
    """One row per file read (a later file of the same PMM mind resumes its import)."""
    s = e.state
    rows.append(
        "imports",
        {
            "position": e.position,
            "stream_id": e.stream,
            "format": s["format"],
            "file_name": s["file_name"],
            "file_sha256": s["file_sha256"],
            "records": s["records"],
            # Hash breaks are PMM ids; link breaks say why ("501: missing parent").
            "breaks": s.get("breaks", []) + s.get("link_breaks", []),
            "forks": s.get("forks", []),
            "time": e.time,
        },
    )


@handles("mind.import.record_kept")
def import_record_kept(rows: Rows, e: Ev) -> None:
    s = e.state
    became = s["became"]
    rows.append(
        "imported_records",
        {
            "position": e.position,
            "format": s["format"],
            "file_sha256": s["file_sha256"],
            "foreign_id": s["foreign_id"],
            "foreign_hash": s["foreign_hash"],
            "kind": s["kind"],
            "foreign_time": s["foreign_time"],
            "content": s["content"],
            "meta": s["meta"],
            "became": became,
            "target": s.get("target"),
            "broken": s.get("broken", False),
            "time": e.time,
        },
    )
    if became == "claim":
        rows.append(
            "claims",
            {
                "position": e.position,
                "turn_id": None,
                "claim_type": f"{s['format']}:{s['kind']}",
                "payload": json.dumps({"content": s["content"], "meta": s["meta"]}),
                "time": e.time,
            },
        )
    elif became == "validation failure":
        rows.append(
            "rejections",
            {
                "position": e.position,
                "turn_id": None,
                "line": s["content"],
                "reason": s["meta"],
                "time": e.time,
            },
        )
    if became.split(" (")[0] not in MADE_INTO:
        index(rows, e, "record", f"{s['kind']} {s['content'][:INDEXED_CHARS]}")
