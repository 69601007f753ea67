"""The channels' reads: each takes a connection and returns what its channel found, for
`projections.retrieval.recall.gather` to run side by side and pool
(`projections.retrieval.concurrent_reads`)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import _duckdb as duckdb  # the engine without its Python layer: decisions/0026

from mindledger.projections.engine.kept_reads import KeptReads, may_match
from mindledger.projections.retrieval import speakers, turn_windows
from mindledger.projections.retrieval.bm25 import Fetched, lexical
from mindledger.projections.retrieval.item_text import (
    Found,
    commitment_text,
    concept_text,
    day_of,
    message_text,
    record_text,
    said,
    thread_text,
)
from mindledger.projections.retrieval.knowledge_channel import TEXT_QUERY, knowledge_texts
from mindledger.projections.retrieval.linked import bound_items, commitment_threads
from mindledger.projections.retrieval.names import keys_in
from mindledger.projections.retrieval.newest import newest
from mindledger.projections.retrieval.position_rows import rows_at
from mindledger.projections.retrieval.speakers import (
    latest_said_by,
    nearest_said_by,
)
from mindledger.projections.retrieval.turn_windows import Ranked, lift, window_channel
from mindledger.projections.retrieval.vectors import closest, in_context, vectors_of

NEIGHBOURS_OF = 60
NEIGHBOUR_SPAN = 1
# The vector channel's reach: the latest messages (their vectors computed by the vector
# projection, never here) and how many of the closest it ranks.
VECTOR_WINDOW = 2000
VECTOR_K = 20
# Each of those messages is compared with the query in its context: its vector plus
# VECTOR_CONTEXT times the messages' just before and after it (`vectors.in_context`). On LoCoMo
# evidence recall went 0.778 / 0.855 / 0.899 -> 0.783 / 0.856 / 0.901 at 500 / 1,000 / 2,000
# tokens (docs/benchmarks/locomo-context-vectors.md); a channel of its own beside the
# plain vectors, or the named speakers' vectors in context, measured no better or worse.
VECTOR_CONTEXT = 0.25
IN_POSITIONS = "position IN (SELECT unnest(?))"


def rows(con: duckdb.DuckDBPyConnection, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
    return con.execute(sql, params or []).fetchall()


_rows = rows  # for functions whose locals name `rows`


def messages(
    con: duckdb.DuckDBPyConnection, where: str, params: list[Any], order: str, limit: int
) -> list[tuple[Any, ...]]:
    return rows(
        con,
        "SELECT position, speaker, time, text, source_id FROM messages "
        f"WHERE {where} ORDER BY {order} LIMIT {int(limit)}",
        params,
    )


Texts = dict[int, tuple[str, str | None, str | None]]
# How each kind of lexical hit's display text, source id and day are read (a join with the
# wanted positions for messages: at 1M messages one took 7 ms where IN took 10).
TEXT_QUERIES = {
    "message": "SELECT m.position, m.speaker, m.time, m.text, m.source_id "
    "FROM (SELECT unnest(?) AS position) w JOIN messages m USING (position)",
    "commitment": "SELECT opened_position, cid, text FROM commitments "
    "WHERE opened_position IN (SELECT unnest(?))",
    "concept": "SELECT definition_position, token, definition FROM concepts "
    "WHERE definition_position IN (SELECT unnest(?))",
    "thread": "SELECT opened_position, id, status, label, content FROM threads "
    "WHERE opened_position IN (SELECT unnest(?))",
    # A record kept from an imported foreign ledger (`mind import pmm`).
    "record": "SELECT position, format, foreign_id, kind, content FROM imported_records "
    "WHERE position IN (SELECT unnest(?))",
    "knowledge": TEXT_QUERY,
}


def doc_texts(
    con: duckdb.DuckDBPyConnection, hits: list[tuple[Any, ...]], kept: KeptReads | None = None
) -> Texts:
    """Display text, source id and day (a message's) of lexical hits (one query per kind hit;
    `kept`: the session's kept reads, which keep the commitments read, `commitment_rows`)."""
    wanted: dict[str, list[int]] = {}
    for h in hits:
        wanted.setdefault(h[1], []).append(h[0])
    out: Texts = {}
    for kind, positions in wanted.items():
        if kind == "commitment" and kept is not None:
            found = commitment_rows(con, kept, positions).values()
            out.update((p, (commitment_text(cid, tx), cid, None)) for p, cid, tx, _ in found)
        elif kind in TEXT_QUERIES:
            out.update(_texts(con, kind, positions))
    return out


def _texts(con: duckdb.DuckDBPyConnection, kind: str, positions: list[int]) -> Texts:
    found = rows(con, TEXT_QUERIES[kind], [positions])
    if kind == "message":
        return {
            p: (message_text(sp, tx, sid is not None), sid, day_of(t))
            for p, sp, t, tx, sid in found
        }
    if kind == "commitment":
        return {p: (commitment_text(cid, tx), cid, None) for p, cid, tx in found}
    if kind == "concept":
        return {p: (concept_text(tok, d), tok, None) for p, tok, d in found}
    if kind == "record":
        return {
            p: (record_text(fmt, fid, k, c), f"{fmt}:{fid}", None) for p, fmt, fid, k, c in found
        }
    if kind == "knowledge":
        return dict(knowledge_texts(found))
    return {p: (thread_text(tid, st, lab, c), tid, None) for p, tid, st, lab, c in found}


def lexical_channel(
    con: duckdb.DuckDBPyConnection,
    query: str,
    limit: int,
    keys: set[str] | None = None,
    share: SharedRead | None = None,
    kept: KeptReads | None = None,
) -> tuple[Any, ...]:
    """The lexical hits, their texts, the messages next to the best of them, and the speaker
    channel's hits (`speakers.said_by`, for a query whose name keys `keys` name a participant)
    (one chain: splitting the texts and neighbours into reads of their own, run side by side
    after the hits, measured no faster at 1k or 1M events). The speaker channel is scored from
    the postings the lexical hits fetched (its terms are some of theirs) where it can be; the
    hit messages, their neighbours and the speaker channel's messages are read together: each
    read scans `messages` (~8 ms of CPU at 100k LoCoMo events), however few it takes from it.
    With `share`, the vector channel's messages are read in the same read (`SharedRead`).
    Last, the participants the query names (for `recall.rank`'s speaker prior). `kept`: the
    reads the session's projector keeps (the participants)."""
    fetched = Fetched(kept)
    named = speakers.named_speakers(con, keys, speakers.participants(con, kept)) if keys else []
    fetched.sub = speakers.without_names(query, named) or None  # scored with the query's
    hits = lexical(con, query, limit, fetched)
    spoken = speakers.said_by_hits(con, query, named, limit, fetched)
    said = [h[0] for h in hits if h[1] == "message"]
    # Positions added cannot be within three of a hit unread: the neighbours are the same.
    extra = share.wanted() if share is not None else set()
    found = _near_rows(con, said[:NEIGHBOURS_OF], limit, [*said, *spoken, *extra], kept)
    if share is not None:
        share.rows = found
    texts = doc_texts(con, [h for h in hits if h[1] != "message"], kept)
    texts.update(
        (p, (message_text(sp, tx, sid is not None), sid, day_of(t)))
        for p, sp, t, tx, sid, _ in (found[p] for p in said if p in found)
    )
    return (
        hits,
        texts,
        _beside(found, said[:NEIGHBOURS_OF]),
        speakers.said_by_found(spoken, found, named),
        named,
    )


# What `open_commitments` reads: the commitments, the threads they serve, and the live
# commitment documents (`kept_reads.written_by`).
COMMITMENTS_READ = ("commitments", "threads", "docs.commitment", "docs.live")


def open_commitments(
    con: duckdb.DuckDBPyConnection, limit: int, kept: KeptReads | None = None
) -> tuple[list[tuple[Any, ...]], list[Found]]:
    """The newest open commitments (at most 10), then the live threads they serve (`kept`:
    kept by the session's projector until it writes what they are read from)."""
    if kept is not None:
        return kept.get(
            ("open_commitments", limit), COMMITMENTS_READ, lambda: _open(con, limit, kept)
        )
    return _open(con, limit)


def _open(
    con: duckdb.DuckDBPyConnection, limit: int, kept: KeptReads | None = None
) -> tuple[list[tuple[Any, ...]], list[Found]]:
    # The newest open commitments are the newest live commitment documents: the index is in
    # ledger order, where commitments are not (4.4 against ~2.5 ms at 214,000 open ones). A
    # session reads them from where its last answer began (`newest`: each turn that opens a
    # commitment writes the tables this read is kept by).
    latest = newest(
        con,
        kept,
        "open_commitments",
        "SELECT position, stream FROM docs WHERE kind = 'commitment' AND live AND position <= ?",
        [limit],
        10,
    )
    if kept is not None:  # a commitment's document is at its opening, of its stream
        found = commitment_rows(con, kept, [position for position, _ in latest])
        open_ = sorted(found.values(), reverse=True)
    else:
        open_ = latest and rows(
            con,
            "SELECT opened_position, cid, text, stream_id FROM commitments "
            "WHERE stream_id IN (SELECT unnest(?)) ORDER BY opened_position DESC",
            [[stream for _, stream in latest]],
        )
    return open_ or [], commitment_threads(con, limit)


# A commitment's id, text and stream by the position it was opened at, which no later event
# changes (closing one sets its status): kept by a session (`position_rows`).
COMMITMENT_ROWS = "SELECT opened_position, cid, text, stream_id FROM commitments WHERE"


def commitment_rows(
    con: duckdb.DuckDBPyConnection, kept: KeptReads | None, positions: list[int]
) -> dict[int, tuple[Any, ...]]:
    """The commitments opened at `positions`: (opened position, cid, text, stream), by
    position."""
    return rows_at(con, kept, COMMITMENT_ROWS, (), positions, "opened_position")


def concept_channel(
    con: duckdb.DuckDBPyConnection, keys: set[str], limit: int, kept: KeptReads | None = None
) -> tuple[list[Found], list[Found]]:
    """The concepts a query names, those they relate to, and what they are bound to (`kept`:
    the session's kept reads, which know every name a concept has)."""
    named = named_concepts(con, keys, limit) if may_match(con, kept, NAME_KEYS, NAMES, keys) else []
    related = named and rows(
        con,
        "SELECT k.definition_position, k.token, k.definition, r.source, "
        "r.relation FROM concept_relations r JOIN concepts k "
        "ON k.token = r.target WHERE r.source IN (SELECT unnest(?)) "
        "AND r.position <= ? AND k.definition_position IS NOT NULL ORDER BY r.position LIMIT 10",
        [[n[1] for n in named], limit],
    )
    found: list[Found] = [
        (p, "concept", concept_text(t, d), t, f"named in the query ({m})") for p, t, d, m in named
    ]
    found += [
        (p, "concept", concept_text(t, d), t, f"{s} -{rel}-> {t}")
        for p, t, d, s, rel in related or []
    ]
    return found, bound_items(con, [n[1] for n in named], limit)


# Every name and alias of a concept, as `named_concepts` looks them up: a query naming none
# of them (most turns') needs no lookup when the session keeps them (`may_match`).
NAME_KEYS = "SELECT DISTINCT name_key FROM concept_names"
NAMES = ("concept_names",)


def named_concepts(
    con: duckdb.DuckDBPyConnection, keys: set[str], limit: int
) -> list[tuple[int, str, str, str]]:
    """Concepts whose token or an alias a text with name keys `keys` names
    (`projections.retrieval.names`),
    by token, at most 10: (definition position, token, definition, the name matched; the token
    before aliases)."""
    names = rows(
        con,
        "SELECT stream_id, name, is_alias FROM concept_names "
        "WHERE name_key IN (SELECT unnest($k)) AND position <= $lim ORDER BY is_alias, position",
        {"k": sorted(keys), "lim": limit},
    )
    matched: dict[str, str] = {}
    for stream, name, _ in names:
        matched.setdefault(stream, name)
    if not matched:
        return []
    concepts = rows(
        con,
        "SELECT definition_position, token, definition, stream_id FROM concepts "
        "WHERE stream_id IN (SELECT unnest($s)) AND definition_position <= $lim "
        "ORDER BY token LIMIT 10",
        {"s": list(matched), "lim": limit},
    )
    return [(p, t, d, matched[stream]) for p, t, d, stream in concepts]


def neighbours(
    con: duckdb.DuckDBPyConnection, hits: list[int], limit: int
) -> list[tuple[Any, ...]]:
    """The message just before and just after each hit in the same conversation: an answer
    often sits next to the question that matched."""
    if not hits:
        return []
    return _beside(_near_rows(con, hits, limit), hits)


def _near_rows(
    con: duckdb.DuckDBPyConnection,
    hits: list[int],
    limit: int,
    also: Sequence[int] = (),
    kept: KeptReads | None = None,
) -> dict[int, tuple[Any, ...]]:
    """The messages at and around `hits` (and at `also`), by position (`kept`: the session's
    kept reads, which keep the messages read: a message's row is never rewritten,
    `position_rows`)."""
    reach = 3 * NEIGHBOUR_SPAN
    wanted = {p + d for p in hits for d in range(-reach, reach + 1)} | set(also)
    wanted = {p for p in wanted if p <= limit}
    if not wanted:
        return {}
    return rows_at(con, kept, NEAR, (), wanted)


# The messages `_near_rows` reads (`position_rows` adds the positions).
NEAR = (
    "SELECT position, speaker, time, text, source_id, coalesce(conversation, '') FROM messages "
    "WHERE"
)


def _beside(found: dict[int, tuple[Any, ...]], hits: list[int]) -> list[tuple[Any, ...]]:
    """The message just before and just after each hit in the same conversation, among
    `found`."""
    out = []
    for hit in hits:
        if hit not in found:
            continue
        conv = found[hit][5]
        # The positions within 3 of the hit, looked up (not a pass over all of `found`).
        near = (hit + d for d in range(-3, 4) if d)
        same = [p for p in near if p in found and found[p][5] == conv]
        for p in (
            max((p for p in same if p < hit), default=None),
            min((p for p in same if p > hit), default=None),
        ):
            if p is not None:
                _, sp, t, tx, sid, _ = found[p]
                out.append((said(p, sp, t, tx, sid, f"next to #{hit}"), hit))
    return out


def vector_channel(
    con: duckdb.DuckDBPyConnection,
    query: str,
    limit: int,
    embed: Callable[[list[str]], list[list[float]]],
) -> tuple[list[Found], Ranked, Ranked]:
    """The meaning channels: the messages closest to the query among the latest VECTOR_WINDOW,
    each in its context (`VECTOR_CONTEXT`; cosine of their stored embeddings when the embedder
    holds the vector projection's, `vector_picks`: only the query is embedded here and a
    message not embedded yet is not among them; else embedded here); the closest
    among the messages of the speakers the query names (`speaker_nearest`); and the windows
    channel's (`turn_windows`: the stored windows', `stored_windows`, or with an embedder that
    embeds texts itself, the windows it cuts and embeds): (similar, (spoken, ranks), (in
    windows, ranks))."""
    if getattr(embed, "latest", None) is not None:
        picks = vector_picks(con, query, limit, embed)
        return picks.found(shown_rows(con, sorted(picks.wanted())))
    q = vectors_of(embed, [query])[0]
    near_said = speaker_nearest(con, query, q, limit, embed)
    spoken = speaker_found(near_said, shown_rows(con, [p for p, _ in near_said]))
    latest = _rows(
        con,
        "SELECT position, speaker, time, text, source_id, coalesce(conversation, '') "
        "FROM messages WHERE position <= ? ORDER BY position DESC LIMIT ?",
        [limit, VECTOR_WINDOW],
    )
    if not latest:
        return [], spoken, ([], [])
    rows = in_context(vectors_of(embed, [r[3] for r in latest]), VECTOR_CONTEXT)
    best = closest(q, rows, VECTOR_K)
    found = [(latest[n.item][:5], n.score) for n in best]
    latest.reverse()
    windowed = window_channel(latest, q, embed, truncated=len(latest) == VECTOR_WINDOW)
    similar = [said(p, sp, t, tx, sid, f"similarity {s:.2f}") for (p, sp, t, tx, sid), s in found]
    return similar, spoken, windowed


@dataclass
class Picks:
    """What the meaning channels chose among the vector projection's stored vectors
    (`vector_picks`), before their messages are read: the closest of the latest messages, the
    windows' members and the named speakers' closest, each (position or members, score), best
    first."""

    best: list[tuple[int, float]]
    chosen: list[tuple[list[int], float]]
    near_said: list[tuple[int, float]]

    def wanted(self) -> set[int]:
        """The positions of every message the channels chose."""
        wanted = {p for p, _ in self.best} | {p for m, _ in self.chosen for p in m}
        return wanted | {p for p, _ in self.near_said}

    def found(self, rows: dict[int, tuple[Any, ...]]) -> tuple[list[Found], Ranked, Ranked]:
        """`vector_channel`'s results from the messages read (`rows`, by position: position,
        speaker, time, text, source id, ...)."""
        similar = [
            said(p, sp, t, tx, sid, f"similarity {s:.2f}")
            for p, s in self.best
            if p in rows
            for _, sp, t, tx, sid, *_ in [rows[p]]
        ]
        windowed = lift([([rows[p] for p in m if p in rows], score) for m, score in self.chosen])
        return similar, speaker_found(self.near_said, rows), windowed


def vector_picks(
    con: duckdb.DuckDBPyConnection, query: str, limit: int, embed: Callable[..., Any]
) -> Picks:
    """`vector_channel`'s choices with an embedder holding the vector projection's vectors
    (`latest`): the latest embedded messages straight from its file; only the best VECTOR_K
    are read from the read model afterwards (reading 2,000 texts cost more than the cosine),
    with the stored windows' members and the named speakers' best, in one read (each read of
    `messages` scans it: ~2-8 ms of CPU at 100k events)."""
    q = vectors_of(embed, [query])[0]
    near_said = speaker_nearest(con, query, q, limit, embed)
    chosen = stored_windows(q, limit, embed)
    window = embed.latest  # type: ignore[attr-defined]
    positions, matrix = window("message", limit, VECTOR_WINDOW) if VECTOR_K > 0 else ([], [])
    best = closest(q, in_context(matrix, VECTOR_CONTEXT), VECTOR_K) if positions else []
    return Picks([(positions[n.item], n.score) for n in best], chosen, near_said)


class SharedRead:
    """The vector channel's messages read with the lexical chain's (`lexical_channel`): one
    scan of `messages` instead of two. The vector channel's read runs first (`picked`), so
    the lexical chain, waiting for its positions (`wanted`), never waits on a read not begun;
    it leaves the rows it read in `rows`."""

    def __init__(self) -> None:
        self._named = threading.Event()
        self.positions: set[int] = set()
        self.rows: dict[int, tuple[Any, ...]] = {}

    def picked(
        self, con: duckdb.DuckDBPyConnection, query: str, limit: int, embed: Callable[..., Any]
    ) -> Picks:
        """`vector_picks`, its positions handed over (none if it fails: the lexical chain
        goes on, and the failure is raised by the reads)."""
        try:
            picks = vector_picks(con, query, limit, embed)
            self.positions = picks.wanted()
            return picks
        finally:
            self._named.set()

    def wanted(self) -> set[int]:
        self._named.wait()
        return self.positions


def stored_windows(q: Any, limit: int, embed: Any) -> list[tuple[list[int], float]]:
    """The windows channel over the vector projection's stored windows: the WINDOW_K closest
    to the query vector `q` among the latest (about VECTOR_WINDOW messages' worth, one range
    read of the file), best first: their members (at or before `limit`) and similarity."""
    step = max(turn_windows.WINDOW_SIZE - turn_windows.WINDOW_OVERLAP, 1)
    members_of = getattr(embed, "members", None)
    if turn_windows.WINDOW_K <= 0 or members_of is None:
        return []
    firsts, matrix = embed.latest("window", limit, VECTOR_WINDOW // step)
    if not firsts:
        return []
    best = closest(q, matrix, turn_windows.WINDOW_K)
    members = members_of([firsts[n.item] for n in best])
    return [([p for p in members.get(firsts[n.item], ()) if p <= limit], n.score) for n in best]


def speaker_nearest(
    con: duckdb.DuckDBPyConnection, query: str, q: Any, limit: int, embed: Callable[..., Any]
) -> list[tuple[int, float]]:
    """The latest VECTOR_WINDOW messages of the participants the query names, the closest to
    the query vector `q` first (`speakers.nearest_said_by`): their stored vectors when the
    embedder has them (`stored`), else embedded here: (position, similarity), best first."""
    stored = getattr(embed, "stored", None)
    # Kept per mind while its read model stands still when its vectors are stored.
    mind = getattr(embed, "path", None) if stored is not None else None
    named, said_by = latest_said_by(con, set(keys_in(query)), limit, VECTOR_WINDOW, mind)
    if not named:
        return []
    if stored is not None:
        kept, matrix = stored("message", said_by)
    else:
        text = dict(
            _rows(con, f"SELECT position, text FROM messages WHERE {IN_POSITIONS}", [said_by])
        )
        kept = [p for p in said_by if p in text]
        matrix = vectors_of(embed, [text[p] for p in kept])
    return nearest_said_by(kept, q, matrix)


def shown_rows(con: duckdb.DuckDBPyConnection, positions: list[int]) -> dict[int, Any]:
    """The messages at `positions` as `messages` reads them, by position."""
    if not positions:
        return {}
    return {r[0]: r for r in messages(con, IN_POSITIONS, [positions], "position", len(positions))}


def speaker_found(best: list[tuple[int, float]], shown: dict[int, Any]) -> Ranked:
    """The speaker vector channel's results and ranks from `speaker_nearest`'s `best` and the
    messages read (`shown`, by position)."""
    found = [
        said(p, sp, t, tx, sid, f"said by {sp}, similarity {score:.2f}")
        for p, score in best
        if p in shown
        for _, sp, t, tx, sid, *_ in [shown[p]]
    ]
    return found, [n + speakers.SPEAKER_VECTOR_PENALTY for n in range(1, len(found) + 1)]
