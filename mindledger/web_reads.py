"""The web page's reads: what it shows that the /v1 API does not (a turn's context items with
their text and what its control lines did, the event timeline with filters, the commitments
with who opened and closed them, each thread's tension over time, a concept's versions and the
knowledge tables), each as the JSON the page reads.

The queries are projections/queries/web_views.py; here the event payloads they return sealed
are opened with the home's key store (sealed text in the clear, "[forgotten]" where its key is
gone), one key-store read per query, as the ledger reader opens its rows. A turn's context
and prompts are not in the read model's rows (projections/engine/ledger_refs.py): a row that
refers to the ledger is opened as the ledger holds it, read there by position.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from mindledger.adapters.pydantic_mapping import canonical_json
from mindledger.adapters.sealing import open_rows
from mindledger.compose import Home, clock_from_env, open_keys, open_reader, read_model
from mindledger.domain.budgets import DEFAULT_BUDGET, RECALL_BUDGET_FLOOR, TURN_BUDGET_FLOOR
from mindledger.domain.clock import Clock
from mindledger.domain.errors import InvalidInputError
from mindledger.domain.events import FORGOTTEN_MARK
from mindledger.domain.forgetting import SELECTOR_KINDS
from mindledger.domain.thread import VERDICTS
from mindledger.projections.engine.ledger_refs import refers_to_ledger
from mindledger.projections.queries import web_views
from mindledger.projections.queries.web_views import ANY_POSITION, EventFilter

if TYPE_CHECKING:
    import duckdb

    from mindledger.adapters.key_store import KeyStore

# Rows with `type`, `aggregate`, `version` and `payload` (as the read model holds it) -> each
# row's payload decoded and opened.
Opener = Callable[[Sequence[dict[str, Any]]], list[dict[str, Any]]]
# The payload field that holds an event's words, by preference (what a context item quotes).
TEXT_FIELDS = ("text", "definition", "content", "reply", "label", "name", "alias", "line")
EVENT_LIMIT = 500
MEMORY_ITEM = re.compile(r"#(\d+) (.*)")
SEARCH_BATCH = 1000  # events opened per step of a word search (sealed text is searched opened)
LEDGER_BATCH = 500  # positions read from the ledger per query (its reader takes a few hundred)
# Positions -> the events' stored states there, as the ledger holds them.
LedgerStates = Callable[[Sequence[int]], dict[int, bytes]]


@contextmanager
def open_web_reads(home: Home) -> Iterator[WebReads]:
    """The page's reads over `home`'s read model and key store, both released afterwards."""
    with read_model(home) as con:
        keys = open_keys(home)
        ledger = _LedgerStates(home)
        try:
            yield WebReads(con, payload_opener(keys, ledger), clock_from_env())
        finally:
            ledger.close()
            keys.close()


class _LedgerStates:
    """The stored states of events by position, from the home's ledger (opened on first use:
    most views read no turn's context)."""

    def __init__(self, home: Home) -> None:
        self.home = home
        self.reader: Any = None  # both ledger readers have `rows_at`; the port does not

    def __call__(self, positions: Sequence[int]) -> dict[int, bytes]:
        if self.reader is None:
            self.reader = open_reader(self.home, sealed=False)  # opened here, with our keys
        found: dict[int, bytes] = {}
        for i in range(0, len(positions), LEDGER_BATCH):
            for row in self.reader.rows_at(positions[i : i + LEDGER_BATCH]):
                if row.state is not None:
                    found[row.position] = bytes(row.state)
        return found

    def close(self) -> None:
        if self.reader is not None:
            self.reader.close()


@dataclass(frozen=True)
class _Stored:
    """A read-model event row in the shape `open_rows` reads (a ledger row's)."""

    topic: str | None
    originator_id: str | None
    version: int | None
    state: bytes | None


def payload_opener(keys: KeyStore | None, ledger: LedgerStates | None = None) -> Opener:
    """An `Opener` over `keys` (None: payloads are only decoded, as for a ledger never sealed);
    rows that refer to the ledger (those with a `position`) are read from `ledger`."""

    def opened(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        wanted = [
            r["position"]
            for r in rows
            if r.get("position") is not None and refers_to_ledger(r["payload"])
        ]
        held = ledger(wanted) if wanted and ledger is not None else {}
        stored = [
            _Stored(
                r["type"],
                r["aggregate"],
                r["version"],
                held.get(r.get("position") or 0) or _bytes(r["payload"]),
            )
            for r in rows
        ]
        states = open_rows(stored, keys)
        for state in states:
            state.pop(FORGOTTEN_MARK, None)  # as `mind log --json` shows a payload
        return states

    return opened


def _bytes(payload: Any) -> bytes | None:
    if payload is None:
        return None
    return payload.encode() if isinstance(payload, str) else bytes(payload)


class WebReads:
    """One request's reads: a read-model connection, the opener of its sealed payloads and the
    clock that says when `now` is."""

    def __init__(self, con: duckdb.DuckDBPyConnection, opened: Opener, clock: Clock) -> None:
        self.con, self.opened, self.clock = con, opened, clock

    def turns(self, limit: int, before: int | None) -> list[dict[str, Any]]:
        """The latest turns (newest last) with the message, reply and outcome, and each turn's
        tool use (`tool_calls`, `tool_results`, `follows`: null when none)."""
        found = web_views.turns(self.con, limit, before)
        self._tools(found)
        return found

    def turn(self, turn: str) -> dict[str, Any]:
        """One turn: its context items in rank order with their text (from the ledger event each
        came from), the events its reply caused, its claims and every rejected line with why."""
        key = turn.replace("-", "").lower()
        row = web_views.turn(self.con, key)
        if row is None:
            raise InvalidInputError(f"there is no turn {turn}")
        stream = row.pop("stream_id")
        items = row.pop("context")
        texts = self._texts([i["id"] for i in items if i.get("id")])
        shown = self._memory_lines(row["started_position"], row["finished_position"])
        notices = iter(shown.get(0, []))
        row["context"] = [
            {"rank": n, **item, "text": _item_text(item.get("id"), shown, notices, texts)}
            for n, item in enumerate(items, 1)
        ]
        row["turn"] = key
        self._tools([row])
        row["claims"] = web_views.claims(self.con, stream)
        last = row["finished_position"] or row["started_position"]
        row["effects"] = web_views.effects(self.con, row["started_position"], last)
        self._open(row["effects"], ("type", "aggregate"))
        return row

    def _tools(self, turns: list[dict[str, Any]]) -> None:
        """Each turn's tool use set in place, as `mind log --turn` shows it (mindledger/
        turn_prompt.py): the calls its (last) reply made, the results that were its message
        and the turn whose calls they answer; None where there are none."""
        for turn in turns:
            turn.update(dict.fromkeys(web_views.TOOL_FIELDS))
        if not turns:
            return
        found = web_views.tool_events(self.con, [t["turn"] for t in turns])
        self._open(found, ("aggregate",))
        by_turn = {t["turn"]: t for t in turns}
        for event in found:  # oldest first: a later attempt's reply replaces an earlier one's
            turn = by_turn[event.pop("aggregate")]
            # A forgotten list opens as [] (its words are gone): shown as none, as the
            # forgotten turn's own text says what happened.
            turn.update({k: v for k, v in event["payload"].items() if v})

    def _memory_lines(self, first: int, last: int | None) -> dict[int, list[str]]:
        """The memory block of the prompt the turn recorded as sent: item number -> its line
        (0: the lines without a number, the rules, in order)."""
        found = web_views.prompt_event(self.con, first, last or first)
        self._open(found, ())
        prompt = found[0]["payload"].get("prompt") or [] if found else []
        system = next((m.get("content", "") for m in prompt if m.get("role") == "system"), "")
        block = system.partition("<memory>")[2].partition("</memory>")[0]
        out: dict[int, list[str]] = {}
        for line in block.splitlines():  # the preamble and day headings match neither
            numbered = MEMORY_ITEM.match(line)
            if numbered:
                out.setdefault(int(numbered[1]), []).append(numbered[2])
            elif line.startswith("["):
                out.setdefault(0, []).append(line)
        return out

    def _texts(self, positions: list[int]) -> dict[int, str | None]:
        if not positions:
            return {}
        rows = web_views.events_at(self.con, positions)
        self._open(rows, ())
        out: dict[int, str | None] = {}
        for row in rows:
            data = row["payload"]
            out[row["position"]] = next((str(data[f]) for f in TEXT_FIELDS if data.get(f)), None)
        return out

    def events(
        self,
        *,
        kind: str | None = None,
        aggregate: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        search: str | None = None,
        before: int | None = None,
        limit: int = 100,
    ) -> dict[str, Any]:
        """Events newest first, filtered by aggregate kind, aggregate id (a prefix), time and a
        case-insensitive search of the type and the opened payload; `before`: the next page's
        end."""
        if not 1 <= limit <= EVENT_LIMIT:
            raise InvalidInputError(f"limit must be 1 to {EVENT_LIMIT}")
        shown = EventFilter(kind, aggregate, since, until)
        end = ANY_POSITION if before is None else before
        if search:
            rows = self._searched(shown, end, search, limit)
        else:
            rows = web_views.events_before(self.con, shown, end, limit)
            self._open(rows, ("type", "aggregate", "version"))
        more = len(rows) == limit and rows[-1]["position"] > 1
        return {
            "events": rows,
            "kinds": web_views.event_kinds(self.con),
            "next_before": rows[-1]["position"] if more else None,
        }

    def _searched(
        self, shown: EventFilter, end: int, search: str, limit: int
    ) -> list[dict[str, Any]]:
        """The newest `limit` events before `end` whose type or opened payload (its canonical
        JSON) holds `search`, any case. SQL cannot search sealed text: the events are opened a
        batch at a time, newest first, until `limit` match or none are left."""
        needle, found = search.casefold(), list[dict[str, Any]]()
        while len(found) < limit:
            batch = web_views.events_before(self.con, shown, end, SEARCH_BATCH)
            self._open(batch, ("type", "aggregate", "version"))
            for row in batch:
                text = f"{row['type']}\n{canonical_json(row['payload']).decode()}"
                if needle in text.casefold() and len(found) < limit:
                    found.append(row)
            if len(batch) < SEARCH_BATCH:
                break
            end = batch[-1]["position"]
        return found

    def commitments(self, status: str, limit: int) -> dict[str, Any]:
        """Commitment episodes with `status` (open or closed), who opened and what closed them."""
        return web_views.commitments(self.con, status, limit)

    def threads(self, include_resolved: bool, limit: int) -> dict[str, Any]:
        """The `limit` tensest threads now and how many there are."""
        return web_views.threads(self.con, self.clock(), include_resolved, limit)

    def tension(self, streams: list[str]) -> dict[str, list[tuple[str, float]]]:
        """Each thread's tension over time, from its opening to now (or its resolution)."""
        return web_views.tension_curves(self.con, streams, self.clock())

    def concepts(self, limit: int, edges: int) -> dict[str, Any]:
        """The first `limit` concepts by name, how many there are, up to `edges` relations."""
        return web_views.concepts(self.con, limit, edges)

    def concept_versions(self, token: str) -> list[dict[str, Any]]:
        """Every recorded change to one concept (definitions, aliases, relations, bindings)."""
        rows = web_views.concept_events(self.con, token)
        self._open(rows, ("type",))
        return rows

    def features(self) -> dict[str, Any]:
        """What the page may offer, the budget rule its forms follow, the verdicts a thread may
        be resolved with and what a forget may name (the floor's and the domain's, never the
        page's own copies)."""
        return {
            "knowledge": bool(web_views.knowledge_tables(self.con)),
            "budget": {
                "default": DEFAULT_BUDGET,
                "turn_floor": TURN_BUDGET_FLOOR,
                "recall_floor": RECALL_BUDGET_FLOOR,
            },
            "thread_verdicts": list(VERDICTS),
            "forget_selectors": list(SELECTOR_KINDS),
        }

    def knowledge(self) -> dict[str, Any]:
        """The rows of each knowledge table (newest first where there is a position)."""
        return web_views.knowledge(self.con)

    def _open(self, rows: list[dict[str, Any]], keep: tuple[str, ...]) -> None:
        """Each row's `payload` opened in place; the columns only the opening needed dropped
        (all but `keep` of type, aggregate and version)."""
        for row, payload in zip(rows, self.opened(rows) if rows else [], strict=True):
            row["payload"] = payload
            for column in ("type", "aggregate", "version"):
                if column not in keep:
                    row.pop(column)


def _item_text(
    item: int | None, shown: dict[int, list[str]], notices: Any, texts: dict[int, str | None]
) -> str | None:
    """The item as the model read it in the memory block, else its event's text."""
    if item == 0:
        return next(notices, None)
    lines = shown.get(item or -1)
    return lines[0] if lines else texts.get(item or -1)
