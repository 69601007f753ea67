"""The windows channel: windows of consecutive turns, embedded as one text each, lift their
turns into the fused ranking.

Evidence that spans turns (a multi-hop question's facts said a few turns apart, an answer after
the question that matched, a topic no single turn names) is missed by a ranking of single
messages. A window is WINDOW_SIZE consecutive messages of one session (the next starting
WINDOW_SIZE - WINDOW_OVERLAP later), read as one text: the session's date on the first line,
then one `Name: text` line per message. The WINDOW_K windows closest in meaning to the query
enter, each message at its window's rank plus WINDOW_PENALTY (a message in two windows takes
the better).

A session is a run of messages of one conversation with no gap longer than SESSION_GAP
between two of them. Windows start at a session's first message, so a window's text does not
change as later messages arrive (only the session's last, growing window does): each text is
embedded once. `window_vectors` is the one place windows are embedded: the vector projection
(`mindledger/vector_projection.py`) stores them (kind `window`, keyed by the first message),
and recall compares the query with the latest stored ones (`channels.stored_windows`), never
embedding a window on the turn's path; with a plain embedder (a benchmark's, a test's) the
channel cuts and embeds the latest VECTOR_WINDOW messages' windows itself (`window_channel`).
Parameters: leave-one-conversation-out on LoCoMo (bench/locomo.py --tune,
docs/benchmarks/locomo-windows.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, NamedTuple

from mindledger.projections.retrieval.item_text import Found, said
from mindledger.projections.retrieval.vectors import closest, vectors_of

if TYPE_CHECKING:
    from mindledger.projections.retrieval.vectors import Matrix

WINDOW_SIZE = 6
WINDOW_OVERLAP = 1
WINDOW_K = 10  # 0 turns the channel off
WINDOW_PENALTY = 0  # added to a window's rank for its messages
SESSION_GAP = timedelta(hours=1)

Embed = Callable[[list[str]], list[list[float]]]
# A message as the vector channel reads it: position, speaker, time, text, source id,
# conversation.
Row = tuple[Any, ...]
Ranked = tuple[list[Found], list[int]]  # a channel's messages and the rank of each


class Window(NamedTuple):
    """A window's messages (indices into the rows it was cut from) and its text."""

    members: tuple[int, ...]
    text: str


def sessions(rows: Sequence[Row]) -> list[list[int]]:
    """Runs of `rows` (in position order) of one conversation without a long gap."""
    out: list[list[int]] = []
    for i, (_, _, time, _, _, conv) in enumerate(rows):
        if out:
            _, _, before, _, _, prev_conv = rows[out[-1][-1]]
            gap = time - before if time is not None and before is not None else timedelta(0)
            if conv == prev_conv and gap <= SESSION_GAP:
                out[-1].append(i)
                continue
        out.append([i])
    return out


def date_line(time: datetime | None) -> str:
    return f"{time.day} {time:%B %Y}" if time is not None else ""


def cut(rows: Sequence[Row]) -> list[Window]:
    """The windows of `rows` (in position order), session by session."""
    step = max(WINDOW_SIZE - WINDOW_OVERLAP, 1)
    out: list[Window] = []
    for session in sessions(rows):
        start = 0
        while True:
            members = tuple(session[start : start + WINDOW_SIZE])
            lines = [date_line(rows[members[0]][2])]
            lines += [f"{rows[i][1] or 'someone'}: {rows[i][3]}" for i in members]
            out.append(Window(members, "\n".join(line for line in lines if line)))
            if start + WINDOW_SIZE >= len(session):
                break
            start += step
    return out


def window_vectors(embed: Embed, windows: Sequence[Window]) -> Matrix:
    """The windows' vectors, one row each (the embedder caches each text's)."""
    return vectors_of(embed, [w.text for w in windows])


def window_channel(
    rows: Sequence[Row], query_vector: Matrix, embed: Embed, truncated: bool = False
) -> Ranked:
    """The messages of the WINDOW_K windows closest to the query among `rows` (in position
    order): (found, ranks), each message once, at its best window's rank plus WINDOW_PENALTY.
    `truncated`: earlier messages were not read, so the first session may have lost its
    start; its windows are left out (cut from a moving start, their texts would change at
    every new message), unless it is the only one."""
    if WINDOW_K <= 0 or not rows:
        return [], []
    windows = cut(rows)
    if truncated:
        first = sessions(rows)[0][-1]
        later = [w for w in windows if w.members[0] > first]
        windows = later or windows
    best = closest(query_vector, window_vectors(embed, windows), WINDOW_K)
    return lift([([rows[i] for i in windows[n.item].members], n.score) for n in best])


def lift(best: Sequence[tuple[Sequence[Row], float]]) -> Ranked:
    """The messages of the windows `best` (their rows and similarity, best first): (found,
    ranks), each message once, at its best window's rank plus WINDOW_PENALTY."""
    out: list[Found] = []
    ranks: list[int] = []
    seen: set[int] = set()
    for n, (members, score) in enumerate(best, 1):
        for p, sp, t, tx, sid, *_ in members:
            if p not in seen:
                seen.add(p)
                out.append(said(p, sp, t, tx, sid, f"in window #{n} ({score:.2f})"))
                ranks.append(n + WINDOW_PENALTY)
    return out, ranks
