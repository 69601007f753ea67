"""The DuckDB read-model tables. Derived and disposable: replay rebuilds them from the ledger."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

TABLES: dict[str, str] = {
    # The projector's running totals, one row written with every batch: the position applied,
    # the time of its event, how many documents are indexed and their
    # total length (BM25's N and average length), and how many postings were appended to
    # doc_terms since it was last sorted by term. One row, so that opening the file reads one
    # row and a batch updates one (two tables cost a turn two statements of ~0.6 ms each).
    "tracking": (
        "name VARCHAR PRIMARY KEY, position BIGINT NOT NULL, time TIMESTAMPTZ, "
        "docs BIGINT NOT NULL DEFAULT 0, "
        "length BIGINT NOT NULL DEFAULT 0, unsorted BIGINT NOT NULL DEFAULT 0"
    ),
    # The document frequency of the terms that had more than TRACKED_POSTINGS postings when the
    # term index was last sorted, kept current by every later batch (`projections.retrieval.bm25`).
    "term_counts": "term VARCHAR NOT NULL, df BIGINT NOT NULL",
    "events": (
        "position BIGINT, time TIMESTAMPTZ, type VARCHAR, aggregate_id VARCHAR, "
        "aggregate_kind VARCHAR, version BIGINT, hash VARCHAR, payload JSON"
    ),
    "identity": (
        "stream_id VARCHAR PRIMARY KEY, ledger_id VARCHAR, name VARCHAR, model VARCHAR, "
        "description VARCHAR, created_at TIMESTAMPTZ, updated_at TIMESTAMPTZ, "
        "pending_proposals VARCHAR[]"
    ),
    "identity_history": (
        "position BIGINT, time TIMESTAMPTZ, change VARCHAR, name VARCHAR, "
        "model VARCHAR, via VARCHAR, reason VARCHAR, turn BIGINT"
    ),
    "commitments": (
        "stream_id VARCHAR PRIMARY KEY, cid VARCHAR, episode INTEGER, text VARCHAR, "
        "status VARCHAR, origin VARCHAR, opened_at TIMESTAMPTZ, closed_at TIMESTAMPTZ, "
        "close_reason VARCHAR, thread VARCHAR, concepts VARCHAR[], evidence BIGINT[], "
        "opened_position BIGINT, closed_position BIGINT"
    ),
    "concepts": (
        "stream_id VARCHAR PRIMARY KEY, token VARCHAR, definition VARCHAR, version INTEGER, "
        "aliases VARCHAR[], defined_at TIMESTAMPTZ, updated_at TIMESTAMPTZ, "
        "defined_position BIGINT, definition_position BIGINT"
    ),
    # Each concept's token and aliases as a retrieval key (`projections.retrieval.names`).
    "concept_names": (
        "name_key VARCHAR, name VARCHAR, stream_id VARCHAR, is_alias BOOLEAN, position BIGINT"
    ),
    "concept_relations": (
        "position BIGINT, source VARCHAR, target VARCHAR, relation VARCHAR, time TIMESTAMPTZ"
    ),
    "concept_bindings": (
        "position BIGINT, token VARCHAR, kind VARCHAR, target VARCHAR, time TIMESTAMPTZ"
    ),
    "threads": (
        "stream_id VARCHAR PRIMARY KEY, id VARCHAR, label VARCHAR, content VARCHAR, "
        "status VARCHAR, origin VARCHAR, opened_at TIMESTAMPTZ, updated_at TIMESTAMPTZ, "
        "resolved_at TIMESTAMPTZ, verdict VARCHAR, reason VARCHAR, artifact VARCHAR, "
        "superseded_by VARCHAR, mentions INTEGER, work_count INTEGER, "
        "last_work_at TIMESTAMPTZ, tension DOUBLE, tension_as_of TIMESTAMPTZ, "
        "opened_position BIGINT, mentions_since_work INTEGER, claimed_origin VARCHAR"
    ),
    "thread_work": (
        "position BIGINT, stream_id VARCHAR, artifact VARCHAR, credit DOUBLE, time TIMESTAMPTZ"
    ),
    "ticks": (
        "stream_id VARCHAR PRIMARY KEY, time TIMESTAMPTZ, fired BOOLEAN, reason VARCHAR, "
        "max_tension DOUBLE, top_thread VARCHAR, live_threads INTEGER, cycle INTEGER, "
        "turn_id VARCHAR, status VARCHAR, note VARCHAR, decided_position BIGINT"
    ),
    "config_changes": "position BIGINT, key VARCHAR, value VARCHAR, time TIMESTAMPTZ",
    # Stretches of more than a day with no event at all (see domain/tension.py).
    "liveness_gaps": "position BIGINT, gap_start TIMESTAMPTZ, gap_end TIMESTAMPTZ",
    "turns": (
        "stream_id VARCHAR PRIMARY KEY, seq BIGINT, speaker VARCHAR, status VARCHAR, "
        "text VARCHAR, reply VARCHAR, reply_raw VARCHAR, model VARCHAR, provider VARCHAR, "
        "usage JSON, latency_ms DOUBLE, finish_reason VARCHAR, cut_off BOOLEAN, "
        "failure_kind VARCHAR, failure VARCHAR, started_at TIMESTAMPTZ, finished_at TIMESTAMPTZ, "
        "started_position BIGINT, finished_position BIGINT, context JSON, context_tokens BIGINT, "
        "opened VARCHAR[], closed VARCHAR[], rejections JSON, pid BIGINT, host VARCHAR"
    ),
    "messages": (
        "position BIGINT, turn_id VARCHAR, role VARCHAR, speaker VARCHAR, "
        "text VARCHAR, time TIMESTAMPTZ, source_id VARCHAR, conversation VARCHAR"
    ),
    "conversations": (
        "stream_id VARCHAR PRIMARY KEY, source VARCHAR, participants VARCHAR[], "
        "started_at TIMESTAMPTZ, messages BIGINT, last_message VARCHAR, title VARCHAR"
    ),
    # live: false once the document is superseded (a closed commitment, a resolved thread, an
    # older definition): BM25's hits are filtered by it.
    "docs": "position BIGINT, kind VARCHAR, stream VARCHAR, length INTEGER, live BOOLEAN",
    # The document's length is repeated on each of its postings: BM25 then needs no join with
    # `docs` over every hit (at 1M events that join was 50 ms of a 110 ms query).
    "doc_terms": "term VARCHAR, position BIGINT, tf INTEGER, length INTEGER",
    "claims": (
        "position BIGINT, turn_id VARCHAR, claim_type VARCHAR, payload JSON, time TIMESTAMPTZ"
    ),
    "rejections": (
        "position BIGINT, turn_id VARCHAR, line VARCHAR, reason VARCHAR, time TIMESTAMPTZ"
    ),
    # Foreign files imported (`mind import pmm|chatgpt`) and every record they held, with its
    # provenance and what it became here (projections/engine/import_handlers.py).
    "imports": (
        "position BIGINT, stream_id VARCHAR, format VARCHAR, file_name VARCHAR, "
        "file_sha256 VARCHAR, records BIGINT, breaks VARCHAR[], forks VARCHAR[], "
        "time TIMESTAMPTZ"
    ),
    "imported_records": (
        "position BIGINT, format VARCHAR, file_sha256 VARCHAR, foreign_id VARCHAR, "
        "foreign_hash VARCHAR, kind VARCHAR, foreign_time VARCHAR, content VARCHAR, "
        "meta VARCHAR, became VARCHAR, target VARCHAR, broken BOOLEAN, time TIMESTAMPTZ"
    ),
    # Each knowledge item as it stands; a deleted one keeps no content (domain/knowledge.py).
    # `intent`: the question's normalised form, which recall matches a query against (the
    # ledger's intent hash is keyed, and readers hold no secret).
    "knowledge": (
        "stream_id VARCHAR PRIMARY KEY, item_id VARCHAR, intent_hash VARCHAR, question VARCHAR, "
        "answer VARCHAR, concepts VARCHAR[], state VARCHAR, confidence_ppm BIGINT, "
        "freshness VARCHAR, max_age_days INTEGER, reuse VARCHAR, provenance JSON, "
        "captured_by VARCHAR, revision INTEGER, content_hash VARCHAR, previous_hash VARCHAR, "
        "deleted BOOLEAN, created_at TIMESTAMPTZ, updated_at TIMESTAMPTZ, "
        "validated_at TIMESTAMPTZ, doc_position BIGINT, turn_id VARCHAR, intent VARCHAR"
    ),
    # Every change of an item (captured, edited, verify, dispute, ..., deleted), without content.
    "knowledge_revisions": (
        "position BIGINT, stream_id VARCHAR, item_id VARCHAR, revision INTEGER, change VARCHAR, "
        "role VARCHAR, state VARCHAR, confidence_ppm BIGINT, content_hash VARCHAR, "
        "previous_hash VARCHAR, time TIMESTAMPTZ"
    ),
    # Every question asked (`mind ask`, and turns answered from memory): route, reasons, scores.
    "knowledge_routes": (
        "position BIGINT, time TIMESTAMPTZ, question VARCHAR, intent_hash VARCHAR, "
        "route VARCHAR, decision VARCHAR, reasons VARCHAR[], score DOUBLE, item_id VARCHAR, "
        "turn_id VARCHAR, current BOOLEAN, via VARCHAR, semantic VARCHAR, candidates JSON"
    ),
}

# Append-only tables carry no PRIMARY KEY: exactly-once comes from the tracking position, written
# in the same transaction as the rows. Entity tables keep theirs: without it a turn at 1M events
# took 154 ms instead of 132 ms (point reads of turns, identity, commitments); with it a 1M-event
# replay peaks at ~1.5 GB RSS instead of ~0.5 GB (bench/turns.py, bench/projection.py).
# Tables whose rows are one per stream and change as events arrive (load-modify-write per batch).
ENTITY_TABLES = (
    "identity",
    "commitments",
    "concepts",
    "threads",
    "turns",
    "conversations",
    "ticks",
    "knowledge",
)

# Each table's columns as Arrow builds its batches: (name, type) in the order of the table's
# columns. Type words, not pyarrow types: a reader that projects nothing, or a handful of rows
# (`projector.FEW_ROWS`, inserted as VALUES), never imports pyarrow (`arrow_schema` builds them).
COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    "events": (
        ("position", "int64"),
        ("time", "timestamp"),
        ("type", "string"),
        ("aggregate_id", "string"),
        ("aggregate_kind", "string"),
        ("version", "int64"),
        ("hash", "string"),
        ("payload", "string"),
    ),
    "identity": (
        ("stream_id", "string"),
        ("ledger_id", "string"),
        ("name", "string"),
        ("model", "string"),
        ("description", "string"),
        ("created_at", "timestamp"),
        ("updated_at", "timestamp"),
        ("pending_proposals", "list<string>"),
    ),
    "identity_history": (
        ("position", "int64"),
        ("time", "timestamp"),
        ("change", "string"),
        ("name", "string"),
        ("model", "string"),
        ("via", "string"),
        ("reason", "string"),
        ("turn", "int64"),
    ),
    "commitments": (
        ("stream_id", "string"),
        ("cid", "string"),
        ("episode", "int32"),
        ("text", "string"),
        ("status", "string"),
        ("origin", "string"),
        ("opened_at", "timestamp"),
        ("closed_at", "timestamp"),
        ("close_reason", "string"),
        ("thread", "string"),
        ("concepts", "list<string>"),
        ("evidence", "list<int64>"),
        ("opened_position", "int64"),
        ("closed_position", "int64"),
    ),
    "concepts": (
        ("stream_id", "string"),
        ("token", "string"),
        ("definition", "string"),
        ("version", "int32"),
        ("aliases", "list<string>"),
        ("defined_at", "timestamp"),
        ("updated_at", "timestamp"),
        ("defined_position", "int64"),
        ("definition_position", "int64"),
    ),
    "concept_names": (
        ("name_key", "string"),
        ("name", "string"),
        ("stream_id", "string"),
        ("is_alias", "bool"),
        ("position", "int64"),
    ),
    "concept_relations": (
        ("position", "int64"),
        ("source", "string"),
        ("target", "string"),
        ("relation", "string"),
        ("time", "timestamp"),
    ),
    "concept_bindings": (
        ("position", "int64"),
        ("token", "string"),
        ("kind", "string"),
        ("target", "string"),
        ("time", "timestamp"),
    ),
    "threads": (
        ("stream_id", "string"),
        ("id", "string"),
        ("label", "string"),
        ("content", "string"),
        ("status", "string"),
        ("origin", "string"),
        ("opened_at", "timestamp"),
        ("updated_at", "timestamp"),
        ("resolved_at", "timestamp"),
        ("verdict", "string"),
        ("reason", "string"),
        ("artifact", "string"),
        ("superseded_by", "string"),
        ("mentions", "int32"),
        ("work_count", "int32"),
        ("last_work_at", "timestamp"),
        ("tension", "float64"),
        ("tension_as_of", "timestamp"),
        ("opened_position", "int64"),
        ("mentions_since_work", "int32"),
        ("claimed_origin", "string"),
    ),
    "thread_work": (
        ("position", "int64"),
        ("stream_id", "string"),
        ("artifact", "string"),
        ("credit", "float64"),
        ("time", "timestamp"),
    ),
    "ticks": (
        ("stream_id", "string"),
        ("time", "timestamp"),
        ("fired", "bool"),
        ("reason", "string"),
        ("max_tension", "float64"),
        ("top_thread", "string"),
        ("live_threads", "int32"),
        ("cycle", "int32"),
        ("turn_id", "string"),
        ("status", "string"),
        ("note", "string"),
        ("decided_position", "int64"),
    ),
    "config_changes": (
        ("position", "int64"),
        ("key", "string"),
        ("value", "string"),
        ("time", "timestamp"),
    ),
    "liveness_gaps": (("position", "int64"), ("gap_start", "timestamp"), ("gap_end", "timestamp")),
    "turns": (
        ("stream_id", "string"),
        ("seq", "int64"),
        ("speaker", "string"),
        ("status", "string"),
        ("text", "string"),
        ("reply", "string"),
        ("reply_raw", "string"),
        ("model", "string"),
        ("provider", "string"),
        ("usage", "string"),
        ("latency_ms", "float64"),
        ("finish_reason", "string"),
        ("cut_off", "bool"),
        ("failure_kind", "string"),
        ("failure", "string"),
        ("started_at", "timestamp"),
        ("finished_at", "timestamp"),
        ("started_position", "int64"),
        ("finished_position", "int64"),
        ("context", "string"),
        ("context_tokens", "int64"),
        ("opened", "list<string>"),
        ("closed", "list<string>"),
        ("rejections", "string"),
        ("pid", "int64"),
        ("host", "string"),
    ),
    "messages": (
        ("position", "int64"),
        ("turn_id", "string"),
        ("role", "string"),
        ("speaker", "string"),
        ("text", "string"),
        ("time", "timestamp"),
        ("source_id", "string"),
        ("conversation", "string"),
    ),
    "conversations": (
        ("stream_id", "string"),
        ("source", "string"),
        ("participants", "list<string>"),
        ("started_at", "timestamp"),
        ("messages", "int64"),
        ("last_message", "string"),
        ("title", "string"),
    ),
    "docs": (
        ("position", "int64"),
        ("kind", "string"),
        ("stream", "string"),
        ("length", "int32"),
        ("live", "bool"),
    ),
    "doc_terms": (
        ("term", "string"),
        ("position", "int64"),
        ("tf", "int32"),
        ("length", "int32"),
    ),
    "claims": (
        ("position", "int64"),
        ("turn_id", "string"),
        ("claim_type", "string"),
        ("payload", "string"),
        ("time", "timestamp"),
    ),
    "rejections": (
        ("position", "int64"),
        ("turn_id", "string"),
        ("line", "string"),
        ("reason", "string"),
        ("time", "timestamp"),
    ),
    "imports": (
        ("position", "int64"),
        ("stream_id", "string"),
        ("format", "string"),
        ("file_name", "string"),
        ("file_sha256", "string"),
        ("records", "int64"),
        ("breaks", "list<string>"),
        ("forks", "list<string>"),
        ("time", "timestamp"),
    ),
    "imported_records": (
        ("position", "int64"),
        ("format", "string"),
        ("file_sha256", "string"),
        ("foreign_id", "string"),
        ("foreign_hash", "string"),
        ("kind", "string"),
        ("foreign_time", "string"),
        ("content", "string"),
        ("meta", "string"),
        ("became", "string"),
        ("target", "string"),
        ("broken", "bool"),
        ("time", "timestamp"),
    ),
    "knowledge": (
        ("stream_id", "string"),
        ("item_id", "string"),
        ("intent_hash", "string"),
        ("question", "string"),
        ("answer", "string"),
        ("concepts", "list<string>"),
        ("state", "string"),
        ("confidence_ppm", "int64"),
        ("freshness", "string"),
        ("max_age_days", "int32"),
        ("reuse", "string"),
        ("provenance", "string"),
        ("captured_by", "string"),
        ("revision", "int32"),
        ("content_hash", "string"),
        ("previous_hash", "string"),
        ("deleted", "bool"),
        ("created_at", "timestamp"),
        ("updated_at", "timestamp"),
        ("validated_at", "timestamp"),
        ("doc_position", "int64"),
        ("turn_id", "string"),
        ("intent", "string"),
    ),
    "knowledge_revisions": (
        ("position", "int64"),
        ("stream_id", "string"),
        ("item_id", "string"),
        ("revision", "int32"),
        ("change", "string"),
        ("role", "string"),
        ("state", "string"),
        ("confidence_ppm", "int64"),
        ("content_hash", "string"),
        ("previous_hash", "string"),
        ("time", "timestamp"),
    ),
    "knowledge_routes": (
        ("position", "int64"),
        ("time", "timestamp"),
        ("question", "string"),
        ("intent_hash", "string"),
        ("route", "string"),
        ("decision", "string"),
        ("reasons", "list<string>"),
        ("score", "float64"),
        ("item_id", "string"),
        ("turn_id", "string"),
        ("current", "bool"),
        ("via", "string"),
        ("semantic", "string"),
        ("candidates", "string"),
    ),
}


@cache
def arrow_schema(table: str) -> pa.Schema:
    """The Arrow schema of `table`'s batches (pyarrow imported on first use)."""
    import pyarrow as pa

    types = {
        "timestamp": pa.timestamp("us", tz="UTC"),
        "string": pa.string(),
        "int64": pa.int64(),
        "int32": pa.int32(),
        "bool": pa.bool_(),
        "float64": pa.float64(),
        "list<string>": pa.list_(pa.string()),
        "list<int64>": pa.list_(pa.int64()),
    }
    return pa.schema([(name, types[kind]) for name, kind in COLUMNS[table]])


@cache
def struct_type(table: str) -> pa.StructType:
    """`table`'s columns as one Arrow struct (a batch of row dicts converted at once)."""
    import pyarrow as pa

    return pa.struct(arrow_schema(table))


@cache
def column_names(table: str) -> tuple[str, ...]:
    """`table`'s columns, in order, as its batches carry them."""
    return tuple(name for name, _ in COLUMNS[table])


def __getattr__(name: str) -> Any:
    """`ARROW`, every table's Arrow schema, built (and pyarrow imported) on first use."""
    if name == "ARROW":
        return {table: arrow_schema(table) for table in COLUMNS}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def create_all(con: object) -> None:
    """Create every table that does not exist yet."""
    for name, columns in TABLES.items():
        con.execute(f"CREATE TABLE IF NOT EXISTS {name} ({columns})")  # type: ignore[attr-defined]


def schema_version() -> str:
    """A fingerprint of the tables: a read model built with other tables is rebuilt."""
    import hashlib
    import json

    return hashlib.sha256(json.dumps(TABLES, sort_keys=True).encode()).hexdigest()[:16]
