"""The speaker channel: when a query names a participant of an imported conversation ("What
did Caroline research?"), the lexical hits among that participant's own messages, the name left
out of the query. In a long conversation the name is in half the turns and other speakers' turns
share the question's words; on LoCoMo this channel added 0.6 points of evidence recall at 2,000
tokens (bench/locomo.py)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import _duckdb as duckdb  # the engine without its Python layer: decisions/0026

from mindledger.projections.engine.kept_reads import KeptReads, kept_rows
from mindledger.projections.retrieval.bm25 import Fetched, best_scored, scored_within
from mindledger.projections.retrieval.item_text import Found, said
from mindledger.projections.retrieval.names import name_key
from mindledger.projections.retrieval.text_index import terms
from mindledger.projections.retrieval.vectors import closest

if TYPE_CHECKING:
    from mindledger.projections.retrieval.vectors import Matrix

SPEAKER_K = 300
# The named speakers' messages closest in meaning to the query, and the rank added to theirs
# (leave-one-conversation-out on LoCoMo: docs/benchmarks/locomo-windows.md; 30 with the day
# prior, docs/benchmarks/locomo-day-prior.md).
SPEAKER_VECTOR_K = 30
SPEAKER_VECTOR_PENALTY = 0


def named_speakers(
    con: duckdb.DuckDBPyConnection, keys: set[str], people: list[str] | None = None
) -> list[str]:
    """Participants of imported conversations named in a text whose name keys are `keys`
    (`people`: every participant, when already read)."""
    if people is None:
        people = participants(con)
    return sorted(p for p in people if p and name_key(p) in keys)


PARTICIPANTS = "SELECT DISTINCT unnest(participants) FROM conversations"


def participants(con: duckdb.DuckDBPyConnection, kept: KeptReads | None = None) -> list[str]:
    """Every participant of an imported conversation (`kept`: kept by the session's projector
    until it writes `conversations`)."""
    found = kept_rows(con, kept, PARTICIPANTS, ("conversations",))
    return [p for (p,) in found]


# The named speakers' latest messages, by mind, read-model position, the speakers named and
# bounds, and the participants by mind and position: a read model's messages and participants
# change only as its tracked position moves (an import, a turn, a forget: each is an event it
# projects), so a list holds until then. Read anew, the positions cost a scan of every
# message's speaker (~4 ms of CPU at 100k events), the participants ~1 ms. By the speakers
# named, not the query's name keys: questions naming the same people share the list.
_latest: dict[tuple[str, int, tuple[str, ...], int, int], list[int]] = {}
_people: dict[tuple[str, int], list[str]] = {}
_latest_lock = threading.Lock()
LATEST_KEPT = 64
LATEST_SAID = (
    "SELECT position FROM messages WHERE speaker IN (SELECT unnest(?)) AND position <= ? "
    "ORDER BY position DESC LIMIT ?"
)


def latest_said_by(
    con: duckdb.DuckDBPyConnection, keys: set[str], limit: int, n: int, mind: str | None
) -> tuple[list[str], list[int]]:
    """The participants named by the name keys `keys` and the positions of their latest `n`
    messages at or before `limit`, latest first; kept in this process for the mind whose
    files are at `mind` (None: read each time)."""
    if mind is None:
        named = named_speakers(con, keys)
        return named, _latest_of(con, named, limit, n)
    ((tracked,),) = con.execute("SELECT max(position) FROM tracking").fetchall()
    at = (mind, int(tracked or 0))
    with _latest_lock:
        people = _people.get(at)
    if people is None:
        people = participants(con)
        with _latest_lock:
            if len(_people) >= LATEST_KEPT:
                _people.clear()
            _people[at] = people
    named = named_speakers(con, keys, people)
    key = (*at, tuple(named), limit, n)
    with _latest_lock:
        kept = _latest.get(key)
    if kept is None:
        kept = _latest_of(con, named, limit, n)
        with _latest_lock:
            if len(_latest) >= LATEST_KEPT:
                _latest.clear()
            _latest[key] = kept
    return named, list(kept)


def _latest_of(con: duckdb.DuckDBPyConnection, named: list[str], limit: int, n: int) -> list[int]:
    """The positions of the latest `n` messages of the speakers `named` at or before `limit`."""
    if not named:
        return []
    return [p for (p,) in con.execute(LATEST_SAID, [named, limit, n]).fetchall()]


def said_by(con: duckdb.DuckDBPyConnection, query: str, keys: set[str], limit: int) -> list[Found]:
    """The best lexical hits of `query` without the names, among the named speakers' messages
    (`keys`: the query's name keys, `projections.retrieval.names.keys_in`)."""
    named = named_speakers(con, keys)
    hits = said_by_hits(con, query, named, limit)
    if not hits:
        return []
    rows = con.execute(
        "SELECT position, speaker, time, text, source_id FROM messages "
        "WHERE position IN (SELECT unnest($p)) AND speaker IN (SELECT unnest($s))",
        {"p": hits, "s": named},
    ).fetchall()
    return said_by_found(hits, {r[0]: r for r in rows}, named)


def said_by_hits(
    con: duckdb.DuckDBPyConnection,
    query: str,
    named: list[str],
    limit: int,
    kept: Fetched | None = None,
) -> list[int]:
    """The positions of the best lexical hits of `query` without the names of the speakers
    `named` that are messages, best first (whoever said them); scored from the postings the
    lexical channel fetched (`kept`, `bm25.scored_within`) when it can be."""
    q = without_names(query, named)
    if not q:
        return []
    scored = scored_within(con, kept, q, limit) if kept is not None else best_scored(con, q, limit)
    return [row[0] for row in scored if row[1] == "message"]


def without_names(query: str, named: list[str]) -> list[str]:
    """The speaker channel's query: the terms of `query` without the names of the speakers
    `named`, sorted (none when it names no one)."""
    if not named:
        return []
    names = {t for person in named for t in terms(person)}
    return sorted(set(terms(query)) - names)


def said_by_found(
    hits: list[int], shown: dict[int, tuple[Any, ...]], named: list[str]
) -> list[Found]:
    """The speaker channel's results: of the messages at `hits` (best first, read into `shown`
    by position: position, speaker, time, text, source id, ...), the first SPEAKER_K that the
    speakers `named` said."""
    speaking = set(named)
    rows = [shown[p] for p in hits if p in shown and shown[p][1] in speaking]
    return [
        said(p, sp, tm, tx, sid, f"said by {sp}") for p, sp, tm, tx, sid, *_ in rows[:SPEAKER_K]
    ]


def nearest_said_by(
    positions: list[int], query: Matrix, vectors: Matrix
) -> list[tuple[int, float]]:
    """Of the named speakers' messages (at `positions`, `vectors` theirs, row for row), the
    SPEAKER_VECTOR_K closest to the query vector: (position, similarity), best first.
    "Would John be considered a patriotic person?" is answered by John's own words about
    serving his country, which share no word with it and rank low among everyone's."""
    if not positions or SPEAKER_VECTOR_K <= 0:
        return []
    return [(positions[n.item], n.score) for n in closest(query, vectors, SPEAKER_VECTOR_K)]
