"""The speaker channel: when a query names a participant of an imported conversation ("What
did Caroline research?"), the lexical hits among that participant's own messages, the name left
out of the query. In a long conversation the name is in half the turns and other speakers' turns
share the question's words; on LoCoMo this channel added 0.6 points of evidence recall at 2,000
tokens (bench/locomo.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import duckdb

from mindledger.projections.retrieval.bm25 import best_scored
from mindledger.projections.retrieval.item_text import Found, said
from mindledger.projections.retrieval.names import name_key
from mindledger.projections.retrieval.text_index import terms
from mindledger.projections.retrieval.vectors import closest

if TYPE_CHECKING:
    from mindledger.projections.retrieval.vectors import Matrix

SPEAKER_K = 300
# The named speakers' messages closest in meaning to the query, and the rank added to theirs
# (leave-one-conversation-out on LoCoMo, docs/benchmarks/locomo-windows.md).
SPEAKER_VECTOR_K = 20
SPEAKER_VECTOR_PENALTY = 0


def named_speakers(con: duckdb.DuckDBPyConnection, keys: set[str]) -> list[str]:
    """Participants of imported conversations named in a text whose name keys are `keys`."""
    people = con.execute("SELECT DISTINCT unnest(participants) FROM conversations").fetchall()
    return sorted(p for (p,) in people if p and name_key(p) in keys)


def said_by(con: duckdb.DuckDBPyConnection, query: str, keys: set[str], limit: int) -> list[Found]:
    """The best lexical hits of `query` without the names, among the named speakers' messages
    (`keys`: the query's name keys, `projections.retrieval.names.keys_in`)."""
    named = named_speakers(con, keys)
    if not named:
        return []
    names = {t for person in named for t in terms(person)}
    q = sorted(set(terms(query)) - names)
    if not q:
        return []
    hits = [row[0] for row in best_scored(con, q, limit) if row[1] == "message"]
    if not hits:
        return []
    rows = con.execute(
        "SELECT position, speaker, time, text, source_id FROM messages "
        "WHERE position IN (SELECT unnest($p)) AND speaker IN (SELECT unnest($s))",
        {"p": hits, "s": named},
    ).fetchall()
    rank = {p: i for i, p in enumerate(hits)}
    rows.sort(key=lambda r: rank[r[0]])
    return [said(p, sp, tm, tx, sid, f"said by {sp}") for p, sp, tm, tx, sid in rows[:SPEAKER_K]]


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
