"""Which events a forget may reach, found by lookup instead of a scan of the whole ledger.

A forget's plan read every event's clear fields (`forget_plan.Planner.scan`): served under the
soak's mix, forgets grew with the ledger. This side table (`forget.index.sqlite`, in the home)
lists, for each event, the clear names a selector or a link between events can match: its
stream, the turn, item, commitment and speaker it names, the streams a turn's outcome changed,
an import's source, and whether it is a turn's. It is caught up before each plan with the
events written since (its position and that event's hash are kept, so a ledger it does not
match is indexed again from 0), and holds no words: only what the ledger keeps in the clear.

`plan_by_lookup` then runs the same `Planner` over only the events the lookups name, widening
them until no link adds one: the events the selector names, every event of each stream it
reached or linked, and every turn event after the first reached one (a later prompt may quote
it). Events outside that set are ones a full scan passes without effect, so the plan is the
same (tests/unit/test_forget_index.py compares the two on every selector kind).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

from mindledger.adapters.forget_plan import ForgetPlan, Planner, hex_of
from mindledger.domain.errors import LedgerCorruptError
from mindledger.domain.forgetting import Reach, Selector
from mindledger.domain.private_files import create_private_file

INDEX_FILE = "forget.index.sqlite"
BATCH = 5000
# Above this share of the ledger, the events a selector links to are read by a scan instead.
SCAN_SHARE = 0.2
# Above every character an id or a name is made of: the end of a prefix's range.
TOP = chr(0x10FFFF)
DAMAGED = ("file is not a database", "malformed")
SAID = ("mind.turn.started", "mind.conversation.message_observed")
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS indexed (one INTEGER PRIMARY KEY CHECK (one = 1), "
    "position INTEGER NOT NULL, hash TEXT)",
    "CREATE TABLE IF NOT EXISTS terms (term TEXT NOT NULL, position INTEGER NOT NULL, "
    "PRIMARY KEY (term, position)) WITHOUT ROWID",
)


def event_terms(topic: str, stream: str, state: dict[str, Any]) -> set[str]:
    """The names one event can be found by (clear fields only), as `Reach` matches them."""
    terms = {f"s:{stream}"}
    if topic.startswith("mind.turn."):
        terms.add("turn")
    if turn_id := state.get("turn_id"):
        terms.add(f"t:{str(turn_id).lower()}")
    if item := state.get("item_id"):
        terms.add(f"i:{str(item).lower()[1:]}")
    if cid := state.get("cid"):
        terms.add(f"c:{str(cid).lower()}")
    if topic in SAID and (speaker := state.get("speaker")):
        terms.add(f"sp:{str(speaker).casefold()}")
    if topic == "mind.ask.routed" and state.get("via", "ask") == "ask":
        terms.add("ask")
    for changed in state.get("changed_streams") or ():
        terms.add(f"ch:{changed}")
    if topic == "mind.import.started":
        key = str(state.get("source_key") or state.get("file_sha256") or "")
        terms.add(f"src:{state.get('format')}/{key[:16]}")
    return terms


class ForgetIndex:
    """The side table at `path` (made 0600 when missing); close it when done."""

    def __init__(self, path: Path) -> None:
        try:
            self.conn = _connect(path)
        except sqlite3.DatabaseError as e:
            if not any(words in str(e) for words in DAMAGED):
                raise  # a full disk, a lock: said as such
            # Damaged: it is derived, so made again.
            for leftover in (path, path.with_name(f"{path.name}-journal")):
                leftover.unlink(missing_ok=True)
            self.conn = _connect(path)

    def close(self) -> None:
        """Release the file."""
        self.conn.close()

    def position(self) -> tuple[int, str | None]:
        """The last event indexed and its hash ((0, None): none)."""
        row = self.conn.execute("SELECT position, hash FROM indexed").fetchone()
        return (int(row[0]), row[1]) if row else (0, None)

    def catch_up(self, reader: Any) -> int:
        """Index the events after the last one indexed (all of them, when that one is not the
        ledger's event at its position); returns how many."""
        position, digest = self.position()
        if position and not _same(reader, position, digest):
            with self.conn:
                self.conn.execute("DELETE FROM terms")
                self.conn.execute("DELETE FROM indexed")
            position = 0
        hexes: dict[Any, str] = {}
        done = 0
        batch: list[tuple[str, int]] = []
        last: Any = None
        for row in reader.rows(after=position, batch=BATCH):
            if row.topic is None or row.state is None or row.originator_id is None:
                raise LedgerCorruptError(f"position {row.position} has no event; run `mind verify`")
            stream = hexes.get(row.originator_id)
            if stream is None:
                stream = hexes[row.originator_id] = hex_of(row.originator_id)
            state = orjson.loads(row.state)
            batch.extend((term, row.position) for term in event_terms(row.topic, stream, state))
            last, done = row, done + 1
            if done % BATCH == 0:
                self._write(batch, last)
                batch = []
        if last is not None:
            self._write(batch, last)
        return done

    def _write(self, batch: list[tuple[str, int]], last: Any) -> None:
        """Terms and the position they reach, in one transaction."""
        with self.conn:
            self.conn.executemany("INSERT OR IGNORE INTO terms VALUES (?, ?)", batch)
            self.conn.execute(
                "INSERT OR REPLACE INTO indexed VALUES (1, ?, ?)", (last.position, last.hash)
            )

    def lookup(self, terms: Iterable[str] = (), prefixes: Iterable[str] = ()) -> set[int]:
        """The positions of the events holding any of `terms`, or a term starting with one of
        `prefixes`."""
        found: set[int] = set()
        exact = sorted(set(terms))
        for start in range(0, len(exact), 500):
            chunk = exact[start : start + 500]
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT position FROM terms WHERE term IN ({marks})"
            found.update(p for (p,) in self.conn.execute(sql, chunk))
        for prefix in set(prefixes):
            rows = self.conn.execute(
                "SELECT position FROM terms WHERE term >= ? AND term < ?", (prefix, prefix + TOP)
            )
            found.update(p for (p,) in rows)
        return found

    def after(self, term: str, position: int) -> set[int]:
        """The positions after `position` of the events holding `term`."""
        rows = self.conn.execute(
            "SELECT position FROM terms WHERE term = ? AND position > ?", (term, position)
        )
        return {p for (p,) in rows}


def _connect(path: Path) -> sqlite3.Connection:
    if not path.exists():
        create_private_file(path)
    conn = sqlite3.connect(path, timeout=30)
    try:
        for statement in _SCHEMA:
            conn.execute(statement)
        conn.commit()
    except BaseException:
        conn.close()
        raise
    return conn


def _same(reader: Any, position: int, digest: str | None) -> bool:
    """Whether the ledger's event at `position` has hash `digest`."""
    row = next(iter(reader.rows(after=position - 1, batch=1, stop=position)), None)
    return row is not None and row.position == position and row.hash == digest


def _named(reach: Reach) -> tuple[set[str], set[str]]:
    """The terms and term prefixes of the events a selector names directly."""
    kind, prefix = reach.selector.kind, reach.prefix
    if kind in ("turn", "conversation", "thread"):
        return set(), {f"s:{prefix}"}
    if kind == "knowledge":
        return set(), {f"s:{prefix}", f"i:{prefix}"}
    if kind == "speaker":
        return {f"sp:{reach.speaker}", *(["ask"] if reach.speaker == "user" else [])}, set()
    if kind == "commitment":
        return {f"c:{reach.selector.value.strip().lower()}"}, set()
    return {f"s:{reach.concept_stream}"}, set()  # concept ("before" is never looked up)


def _linked(planner: Planner, plan: ForgetPlan) -> set[str]:
    """The terms of every event linked to what the plan reached: each event of the streams it
    reached, linked or quoted from, those naming them as their turn or as changed, and the
    imports that fed a reached conversation."""
    reach = planner.reach
    streams = reach.streams | reach.messages | reach.late_streams() | plan.context_turns
    streams |= planner.preceded  # the turns whose prompts carried a reached observed message
    terms = {f"{kind}:{s}" for s in streams for kind in ("s", "t", "ch")}
    return terms | {f"src:{source}" for source in reach.sources}


def plan_by_lookup(reader: Any, selector: Selector, index: ForgetIndex) -> ForgetPlan | None:
    """What `plan_forget` finds, reading only the events the index links to the selector
    (`reader` must have `rows_at`); the index is caught up first. None when the events linked
    are more than a SCAN_SHARE of the ledger: a scan is then the cheaper read (each widening
    reads the linked events again)."""
    index.catch_up(reader)
    head, _ = index.position()
    wanted = index.lookup(*_named(Reach(selector)))
    while True:
        if len(wanted) > head * SCAN_SHARE:
            return None
        planner = Planner(selector)
        planner.scan_rows(_rows(reader, wanted))
        plan = planner.plan(reader)
        more = index.lookup(_linked(planner, plan)) | index.after("turn", planner.floor)
        if more <= wanted:
            return plan
        wanted |= more


def _rows(reader: Any, positions: set[int]) -> Iterator[Any]:
    ordered = sorted(positions)
    for start in range(0, len(ordered), 500):
        yield from reader.rows_at(ordered[start : start + 500])
