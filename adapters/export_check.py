"""Reading a ledger export back: every line checked as it is read, without a mind.

The header's genesis must recompute from its ledger id and time, and its event count and head
must be where the file ends. `ExportReader.chain` is the integrity check (`mind verify
--export`, decision 0028): each line's position, `prev` and `hash` recomputed from the bytes
the chain hashed (version 3 by slicing each line: adapters/export_chain.py). `events` reads
every line whole (`--deep`, `import ledger`): a version 3 line in its one spelling
(adapters/export_form.py), a version 1 or 2 line the canonical JSON of an object with exactly
the expected fields, the state rebuilt from it. Whether each event is one this version can
replay is adapters/export_events.py's check (a chain recomputed with the public rule proves
only that the file is whole). The `keys` a line carries are not in the chain, so `events`
checks each against the envelopes it opens (adapters/export_keys.py). The first line that fails
raises ExportInvalidError naming it. The file is opened by adapters/export_open.py.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Iterator
from typing import IO, TYPE_CHECKING, Any, NamedTuple

import orjson

from mindledger.adapters.canonical import canonical_json, fast_canonical, is_canonical
from mindledger.adapters.chain_rule import content_hash, genesis_hash, link_hash
from mindledger.adapters.export_chain import ChainBroken, ChainChecked
from mindledger.adapters.export_split import check_split
from mindledger.adapters.ledger_export import (
    FORMAT,
    HASH_RULE,
    HEADER_KEYS,
    KEYS_FIELD,
    READ_VERSIONS,
    Genesis,
    event_shapes,
    state_of,
)
from mindledger.domain.errors import MindError

if TYPE_CHECKING:  # a line read whole (--deep, import) loads it; the integrity check does not
    from mindledger.adapters.export_form import ExportedEvent

HEX = frozenset("0123456789abcdef")
# The longest line read (with its newline): a line is parsed whole, so an endless one would
# take the memory; no event a mind records comes near this.
MAX_LINE_BYTES = 64 * 1024 * 1024


# export_lines.opened: a line's keys and its envelopes' texts, or None (read by `_keys` then).
Opener = Callable[[Any, dict[str, Any], str], tuple[dict[bytes, bytes], dict[str, bytes]] | None]


class ExportInvalidError(MindError):
    """Raised when a ledger export file is malformed, tampered with or cut short."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"line {line}: {reason}")
        self.line, self.reason = line, reason


class ExportHeader(NamedTuple):
    """The header line, checked. (A tuple, as `Genesis`.)"""

    genesis: Genesis
    events: int
    head: str
    version: int


class ExportReader:
    """The events of an export, each checked before it is yielded (`header` is read first)."""

    def __init__(self, handle: IO[bytes]) -> None:
        self.handle = handle
        self.bytes_read = 0
        self.header = _header(self._next_line(1), 1)

    def _next_line(self, number: int) -> bytes | None:
        line = self.handle.readline(MAX_LINE_BYTES + 1)  # never more than a line may hold
        if not line:
            return None
        if len(line) > MAX_LINE_BYTES:
            raise ExportInvalidError(
                number, f"the line is longer than {MAX_LINE_BYTES // (1024 * 1024)} MiB"
            )
        self.bytes_read += len(line)
        if not line.endswith(b"\n") and line.strip():
            raise ExportInvalidError(number, "the line does not end with a newline (cut short?)")
        return line[:-1] if line.endswith(b"\n") else line

    def _blank_to_the_end(self, number: int) -> None:
        """Blank lines may end the file (an editor adds one); one before another line is
        refused at its number."""
        later = number
        while (line := self._next_line(later + 1)) is not None:
            later += 1
            if line.strip():
                raise ExportInvalidError(
                    number, "a blank line in the middle of the file (only the end may have them)"
                )

    def chain(
        self, anchor: str | None = None, progress: Callable[[int], None] = lambda done: None
    ) -> ChainChecked:
        """The integrity check of every event line: its position, prev link and hash recomputed
        from the bytes the chain hashed, the count and head the header gives; and where
        `anchor` is. Version 3 by slicing each line (adapters/export_chain.py); 1 and 2 by
        reading each line as `events` does. Raises ExportInvalidError at the first bad line."""
        header = self.header
        if header.version >= 3:
            try:
                checked = check_split(
                    self.handle,
                    header.genesis.genesis,
                    header.events,
                    anchor,
                    MAX_LINE_BYTES,
                    progress,
                )
            except ChainBroken as e:
                raise ExportInvalidError(e.line, e.reason) from None
            if checked.head != header.head:
                raise ExportInvalidError(1, "the header's head hash is not the last event's hash")
            return checked
        found = 0 if anchor == header.genesis.genesis else None
        count = 0
        for count, event in enumerate(self.events(), 1):
            if event.hash == anchor:
                found = event.position
            if count % 1000 == 0:
                progress(count)
        progress(count)
        return ChainChecked(count, header.head, found)

    def events(self) -> Iterator[ExportedEvent]:
        """Every event line, checked, in order (a version 3 line by `export_form.read_event`,
        its keys opening their envelopes); raises at the first bad line."""
        from mindledger.adapters.export_lines import opened, usual_event

        header = self.header
        prev, number = header.genesis.genesis, 1
        keyed = any(KEYS_FIELD in shape for shape in event_shapes(header.version))
        while True:
            number += 1
            line = self._next_line(number)
            if line is None:
                break
            # An event's line starts with its brace: not blank, and not copied to learn it.
            if not line.startswith(b"{") and not line.strip():
                self._blank_to_the_end(number)
                break
            if number - 1 > header.events:
                raise ExportInvalidError(
                    number, f"the header says {header.events} events, but the file goes on"
                )
            if header.version >= 3:
                event = _event_v3(line, number, prev, opened)
            else:
                event = usual_event(line, number, prev, keyed) or _event(
                    line, number, prev, header.version
                )
            prev = event.hash
            yield event
        count = number - 2
        if count != header.events:
            raise ExportInvalidError(
                number,
                f"the file ends after {count} events, but the header says {header.events} "
                "(cut short?)",
            )
        if prev != header.head:
            raise ExportInvalidError(1, "the header's head hash is not the last event's hash")


def _parse(line: bytes | None, number: int, keys: tuple[frozenset[str], ...]) -> dict[str, Any]:
    return _parsed(line, number, keys)[0]


def _parsed(
    line: bytes | None, number: int, keys: tuple[frozenset[str], ...]
) -> tuple[dict[str, Any], bool]:
    """The line's object, and whether it holds no float (see `fast_canonical`)."""
    if line is None:
        raise ExportInvalidError(number, "the file is empty; a ledger export starts with a header")
    try:
        # orjson first (a third of json.loads' time); what it refuses (NaN, integers past 64
        # bits, lone surrogates, deep nesting) json.loads reads as before. Either way the
        # canonical check below decides: a line is accepted only as json.dumps writes it.
        obj = _fast_loads(line)
    except RecursionError:
        from mindledger.adapters.import_rules import TOO_DEEP

        raise ExportInvalidError(number, f"not a JSON line ({TOO_DEEP})") from None
    except ValueError:
        raise ExportInvalidError(number, "not a JSON line") from None
    if not isinstance(obj, dict):
        raise ExportInvalidError(number, "not a JSON object")
    if frozenset(obj) not in keys:
        raise ExportInvalidError(number, _field_problem(frozenset(obj), keys, number))
    canonical, floatless = is_canonical(obj, line)
    if not canonical:
        raise ExportInvalidError(number, "not in canonical form (the line was edited)")
    return obj, floatless


def _fast_loads(line: bytes) -> Any:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return json.loads(line)


def _field_problem(found: frozenset[str], keys: tuple[frozenset[str], ...], number: int) -> str:
    """What is wrong with a line's fields, against the closest shape the line may have."""
    if number == 1 and "format" not in found:
        return "not a header (a ledger export starts with its header line)"
    closest = min(keys, key=lambda k: len(k ^ found))
    extra, missing = sorted(found - closest), sorted(closest - found)
    parts = ([f"unexpected fields {extra}"] if extra else []) + (
        [f"missing fields {missing}"] if missing else []
    )
    return "; ".join(parts)


def _header(line: bytes | None, number: int) -> ExportHeader:
    obj = _parse(line, number, (HEADER_KEYS,))
    # `type` is int: neither true nor 1.0 is a version.
    if obj["format"] != FORMAT or type(obj["version"]) is not int:
        raise ExportInvalidError(number, "not a mindledger export (format field)")
    if obj["version"] not in READ_VERSIONS:
        *earlier, last = map(str, READ_VERSIONS)
        known = f"{', '.join(earlier)} or {last}" if earlier else last
        raise ExportInvalidError(number, f"not a mindledger export of version {known}")
    if obj["hash_rule"] != HASH_RULE:
        raise ExportInvalidError(number, "an unknown hash rule")
    ledger_id, created_at = _text(obj, "ledger_id", number), _text(obj, "created_at", number)
    genesis, head = _digest(obj, "genesis", number), _digest(obj, "head", number)
    events = obj["events"]
    if not isinstance(events, int) or isinstance(events, bool) or events < 0:
        raise ExportInvalidError(number, "the event count is not a whole number")
    if genesis_hash(ledger_id, created_at) != genesis:
        raise ExportInvalidError(number, "the genesis hash does not recompute")
    return ExportHeader(Genesis(ledger_id, created_at, genesis), events, head, obj["version"])


def _event(line: bytes, number: int, prev: str, file_version: int) -> ExportedEvent:
    from mindledger.adapters.export_form import ExportedEvent

    obj, floatless = _parsed(line, number, event_shapes(file_version))
    position = _whole(obj, "position", number)
    if position != number - 1:
        raise ExportInvalidError(number, f"position {position} where {number - 1} belongs")
    topic, aggregate = _text(obj, "topic", number), _text(obj, "aggregate", number)
    version = _whole(obj, "version", number)
    if obj["prev"] != prev:
        raise ExportInvalidError(number, "prev is not the hash of the line before")
    value: dict[str, Any] | None = None
    fast: bytes | None = None
    if "state_b64" in obj:
        text = _text(obj, "state_b64", number)
        try:
            state = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            state = None
        if state is None or base64.b64encode(state).decode() != text:
            raise ExportInvalidError(number, "state_b64 is not canonical base64")
    else:
        payload, time = obj["payload"], _text(obj, "time", number)
        schema = _whole(obj, "schema", number)
        if not isinstance(payload, dict):
            raise ExportInvalidError(number, "the payload is not an object")
        value = state_of(payload, time, schema)
        # The line holds no float: orjson spells the state as the rule does, in a fifth of
        # the time (the line itself was canonical, so its payload is too).
        fast = fast_canonical(value, floatless)
        state = fast if fast is not None else canonical_json(value)
    expected = link_hash(prev, content_hash(topic, aggregate, version, state))
    if obj["hash"] != expected:
        raise ExportInvalidError(number, "the hash does not recompute (the event was changed)")
    keys, plain = _keys(obj, number, state) if KEYS_FIELD in obj else ({}, {})
    decoded = value if fast is not None else None  # what orjson reads from `state` (no float)
    return ExportedEvent(position, topic, aggregate, version, state, expected, keys, plain, decoded)


def _event_v3(line: bytes, number: int, prev: str, opened: Opener) -> ExportedEvent:
    """A version 3 line read whole, its keys opening the envelopes that name them (by
    `export_lines.opened`, or for anything it does not take, `_keys`, which names the fault)."""
    from mindledger.adapters.export_form import LineProblem, read_event

    try:
        event, obj = read_event(line, number - 1, prev)
    except LineProblem as problem:
        raise ExportInvalidError(number, str(problem)) from None
    if not obj[KEYS_FIELD]:
        return event
    aggregate, version, topic = event.aggregate, event.version, event.topic
    if event.decoded is not None and len(aggregate) == 32:
        done = opened(obj[KEYS_FIELD], event.decoded, f"{aggregate.lower()}/{version}/{topic}/")
        if done is not None:
            return event._replace(keys=done[0], plain=done[1])
    named = {  # what `_keys` reads: the state's fields (envelopes among them), the keys
        "topic": topic,
        "aggregate": aggregate,
        "version": version,
        "payload": event.decoded,
        KEYS_FIELD: obj[KEYS_FIELD],
    }
    keys, plain = _keys(named, number, event.state)
    return event._replace(keys=keys, plain=plain)


def _keys(
    obj: dict[str, Any], number: int, state: bytes
) -> tuple[dict[bytes, bytes], dict[str, bytes]]:
    """`export_keys.carried_keys`, its fault named at line `number`."""
    from mindledger.adapters.export_keys import KeyProblem, carried_keys

    try:
        return carried_keys(obj, state)
    except KeyProblem as problem:
        raise ExportInvalidError(number, str(problem)) from None


def _text(obj: dict[str, Any], key: str, number: int) -> str:
    value = obj[key]
    if not isinstance(value, str):
        raise ExportInvalidError(number, f"{key} is not a string")
    return value


def _whole(obj: dict[str, Any], key: str, number: int) -> int:
    value = obj[key]
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ExportInvalidError(number, f"{key} is not a positive whole number")
    return value


def _digest(obj: dict[str, Any], key: str, number: int) -> str:
    value = _text(obj, key, number)
    if len(value) != 64 or not HEX.issuperset(value):
        raise ExportInvalidError(number, f"{key} is not a sha256 hex digest")
    return value
