"""The DuckDB read-model tables. Derived and disposable: replay rebuilds them from the ledger."""

from __future__ import annotations

import pyarrow as pa

TS = pa.timestamp("us", tz="UTC")

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

ARROW: dict[str, pa.Schema] = {
    "events": pa.schema(
        [
            ("position", pa.int64()),
            ("time", TS),
            ("type", pa.string()),
            ("aggregate_id", pa.string()),
            ("aggregate_kind", pa.string()),
            ("version", pa.int64()),
            ("hash", pa.string()),
            ("payload", pa.string()),
        ]
    ),
    "identity": pa.schema(
        [
            ("stream_id", pa.string()),
            ("ledger_id", pa.string()),
            ("name", pa.string()),
            ("model", pa.string()),
            ("description", pa.string()),
            ("created_at", TS),
            ("updated_at", TS),
            ("pending_proposals", pa.list_(pa.string())),
        ]
    ),
    "identity_history": pa.schema(
        [
            ("position", pa.int64()),
            ("time", TS),
            ("change", pa.string()),
            ("name", pa.string()),
            ("model", pa.string()),
            ("via", pa.string()),
            ("reason", pa.string()),
            ("turn", pa.int64()),
        ]
    ),
    "commitments": pa.schema(
        [
            ("stream_id", pa.string()),
            ("cid", pa.string()),
            ("episode", pa.int32()),
            ("text", pa.string()),
            ("status", pa.string()),
            ("origin", pa.string()),
            ("opened_at", TS),
            ("closed_at", TS),
            ("close_reason", pa.string()),
            ("thread", pa.string()),
            ("concepts", pa.list_(pa.string())),
            ("evidence", pa.list_(pa.int64())),
            ("opened_position", pa.int64()),
            ("closed_position", pa.int64()),
        ]
    ),
    "concepts": pa.schema(
        [
            ("stream_id", pa.string()),
            ("token", pa.string()),
            ("definition", pa.string()),
            ("version", pa.int32()),
            ("aliases", pa.list_(pa.string())),
            ("defined_at", TS),
            ("updated_at", TS),
            ("defined_position", pa.int64()),
            ("definition_position", pa.int64()),
        ]
    ),
    "concept_names": pa.schema(
        [
            ("name_key", pa.string()),
            ("name", pa.string()),
            ("stream_id", pa.string()),
            ("is_alias", pa.bool_()),
            ("position", pa.int64()),
        ]
    ),
    "concept_relations": pa.schema(
        [
            ("position", pa.int64()),
            ("source", pa.string()),
            ("target", pa.string()),
            ("relation", pa.string()),
            ("time", TS),
        ]
    ),
    "concept_bindings": pa.schema(
        [
            ("position", pa.int64()),
            ("token", pa.string()),
            ("kind", pa.string()),
            ("target", pa.string()),
            ("time", TS),
        ]
    ),
    "threads": pa.schema(
        [
            ("stream_id", pa.string()),
            ("id", pa.string()),
            ("label", pa.string()),
            ("content", pa.string()),
            ("status", pa.string()),
            ("origin", pa.string()),
            ("opened_at", TS),
            ("updated_at", TS),
            ("resolved_at", TS),
            ("verdict", pa.string()),
            ("reason", pa.string()),
            ("artifact", pa.string()),
            ("superseded_by", pa.string()),
            ("mentions", pa.int32()),
            ("work_count", pa.int32()),
            ("last_work_at", TS),
            ("tension", pa.float64()),
            ("tension_as_of", TS),
            ("opened_position", pa.int64()),
            ("mentions_since_work", pa.int32()),
            ("claimed_origin", pa.string()),
        ]
    ),
    "thread_work": pa.schema(
        [
            ("position", pa.int64()),
            ("stream_id", pa.string()),
            ("artifact", pa.string()),
            ("credit", pa.float64()),
            ("time", TS),
        ]
    ),
    "ticks": pa.schema(
        [
            ("stream_id", pa.string()),
            ("time", TS),
            ("fired", pa.bool_()),
            ("reason", pa.string()),
            ("max_tension", pa.float64()),
            ("top_thread", pa.string()),
            ("live_threads", pa.int32()),
            ("cycle", pa.int32()),
            ("turn_id", pa.string()),
            ("status", pa.string()),
            ("note", pa.string()),
            ("decided_position", pa.int64()),
        ]
    ),
    "config_changes": pa.schema(
        [("position", pa.int64()), ("key", pa.string()), ("value", pa.string()), ("time", TS)]
    ),
    "liveness_gaps": pa.schema([("position", pa.int64()), ("gap_start", TS), ("gap_end", TS)]),
    "turns": pa.schema(
        [
            ("stream_id", pa.string()),
            ("seq", pa.int64()),
            ("speaker", pa.string()),
            ("status", pa.string()),
            ("text", pa.string()),
            ("reply", pa.string()),
            ("reply_raw", pa.string()),
            ("model", pa.string()),
            ("provider", pa.string()),
            ("usage", pa.string()),
            ("latency_ms", pa.float64()),
            ("finish_reason", pa.string()),
            ("cut_off", pa.bool_()),
            ("failure_kind", pa.string()),
            ("failure", pa.string()),
            ("started_at", TS),
            ("finished_at", TS),
            ("started_position", pa.int64()),
            ("finished_position", pa.int64()),
            ("context", pa.string()),
            ("context_tokens", pa.int64()),
            ("opened", pa.list_(pa.string())),
            ("closed", pa.list_(pa.string())),
            ("rejections", pa.string()),
            ("pid", pa.int64()),
            ("host", pa.string()),
        ]
    ),
    "messages": pa.schema(
        [
            ("position", pa.int64()),
            ("turn_id", pa.string()),
            ("role", pa.string()),
            ("speaker", pa.string()),
            ("text", pa.string()),
            ("time", TS),
            ("source_id", pa.string()),
            ("conversation", pa.string()),
        ]
    ),
    "conversations": pa.schema(
        [
            ("stream_id", pa.string()),
            ("source", pa.string()),
            ("participants", pa.list_(pa.string())),
            ("started_at", TS),
            ("messages", pa.int64()),
            ("last_message", pa.string()),
            ("title", pa.string()),
        ]
    ),
    "docs": pa.schema(
        [
            ("position", pa.int64()),
            ("kind", pa.string()),
            ("stream", pa.string()),
            ("length", pa.int32()),
            ("live", pa.bool_()),
        ]
    ),
    "doc_terms": pa.schema(
        [
            ("term", pa.string()),
            ("position", pa.int64()),
            ("tf", pa.int32()),
            ("length", pa.int32()),
        ]
    ),
    "claims": pa.schema(
        [
            ("position", pa.int64()),
            ("turn_id", pa.string()),
            ("claim_type", pa.string()),
            ("payload", pa.string()),
            ("time", TS),
        ]
    ),
    "rejections": pa.schema(
        [
            ("position", pa.int64()),
            ("turn_id", pa.string()),
            ("line", pa.string()),
            ("reason", pa.string()),
            ("time", TS),
        ]
    ),
    "imports": pa.schema(
        [
            ("position", pa.int64()),
            ("stream_id", pa.string()),
            ("format", pa.string()),
            ("file_name", pa.string()),
            ("file_sha256", pa.string()),
            ("records", pa.int64()),
            ("breaks", pa.list_(pa.string())),
            ("forks", pa.list_(pa.string())),
            ("time", TS),
        ]
    ),
    "imported_records": pa.schema(
        [
            ("position", pa.int64()),
            ("format", pa.string()),
            ("file_sha256", pa.string()),
            ("foreign_id", pa.string()),
            ("foreign_hash", pa.string()),
            ("kind", pa.string()),
            ("foreign_time", pa.string()),
            ("content", pa.string()),
            ("meta", pa.string()),
            ("became", pa.string()),
            ("target", pa.string()),
            ("broken", pa.bool_()),
            ("time", TS),
        ]
    ),
    "knowledge": pa.schema(
        [
            ("stream_id", pa.string()),
            ("item_id", pa.string()),
            ("intent_hash", pa.string()),
            ("question", pa.string()),
            ("answer", pa.string()),
            ("concepts", pa.list_(pa.string())),
            ("state", pa.string()),
            ("confidence_ppm", pa.int64()),
            ("freshness", pa.string()),
            ("max_age_days", pa.int32()),
            ("reuse", pa.string()),
            ("provenance", pa.string()),
            ("captured_by", pa.string()),
            ("revision", pa.int32()),
            ("content_hash", pa.string()),
            ("previous_hash", pa.string()),
            ("deleted", pa.bool_()),
            ("created_at", TS),
            ("updated_at", TS),
            ("validated_at", TS),
            ("doc_position", pa.int64()),
            ("turn_id", pa.string()),
            ("intent", pa.string()),
        ]
    ),
    "knowledge_revisions": pa.schema(
        [
            ("position", pa.int64()),
            ("stream_id", pa.string()),
            ("item_id", pa.string()),
            ("revision", pa.int32()),
            ("change", pa.string()),
            ("role", pa.string()),
            ("state", pa.string()),
            ("confidence_ppm", pa.int64()),
            ("content_hash", pa.string()),
            ("previous_hash", pa.string()),
            ("time", TS),
        ]
    ),
    "knowledge_routes": pa.schema(
        [
            ("position", pa.int64()),
            ("time", TS),
            ("question", pa.string()),
            ("intent_hash", pa.string()),
            ("route", pa.string()),
            ("decision", pa.string()),
            ("reasons", pa.list_(pa.string())),
            ("score", pa.float64()),
            ("item_id", pa.string()),
            ("turn_id", pa.string()),
            ("current", pa.bool_()),
            ("via", pa.string()),
            ("semantic", pa.string()),
            ("candidates", pa.string()),
        ]
    ),
}


def create_all(con: object) -> None:
    """Create every table that does not exist yet."""
    for name, columns in TABLES.items():
        con.execute(f"CREATE TABLE IF NOT EXISTS {name} ({columns})")  # type: ignore[attr-defined]


def schema_version() -> str:
    """A fingerprint of the tables: a read model built with other tables is rebuilt."""
    import hashlib
    import json

    return hashlib.sha256(json.dumps(TABLES, sort_keys=True).encode()).hexdigest()[:16]
