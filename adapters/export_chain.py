"""The integrity check of a version 3 export (`mind verify --export`): every line's position,
prev link and hash recomputed from the bytes the chain hashed, found in the line as they are,
without parsing it (decision 0028).

A usual line (adapters/export_form.py) is sliced, not parsed: `{"aggregate":"` and the 32
characters after it; the topic and version, each spelling checked once by a regular expression
and kept; the keys' frame (each a 32-character id and 44 base64 characters, checked by one
translation of the bytes); the state, up to a tail of fixed width that is compared whole with
the one the line must end with: its position, the line before's hash and the hash recomputed.
Anything else (a topic with an escape, a state carried as base64, any fault) goes to
`export_form.read_event`, which accepts it or names what is wrong. Left to `--deep` and the
import, which read every line with `read_event` and open the envelopes: the characters of a
carried key (its id hex, its bytes canonical base64, the keys in id order, each opening the
envelopes that name it, none missing) and whether a state, hashed as it is, is a JSON object
(a state that is not could only come from a chain computed anew; `--head` catches that).
"""

from __future__ import annotations

import hashlib
import re
import struct
from binascii import hexlify
from collections.abc import Callable
from functools import partial
from itertools import repeat
from typing import IO, NamedTuple

from mindledger.domain.errors import MindError

# A topic and version as the exporter spells them, up to the keys' `{` (anything else is read
# by `read_event`).
_TOPIC_VERSION = re.compile(
    rb'","topic":"([a-z0-9_.]{1,200})","version":([1-9][0-9]{0,17}),"keys":\{'
)
_BASE64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
# Every base64 character becomes "b": a well-framed keys field becomes one of `_FRAMES`, most
# often `_ONE_KEY` (81 bytes).
_AS_B = bytes.maketrans(_BASE64, b"b" * len(_BASE64))
_ONE_KEY = b'"' + b"b" * 32 + b'":"' + b"b" * 43 + b'="'
_FRAMES = frozenset(b",".join([_ONE_KEY] * k) for k in range(64))
_UNUSUAL = (b"", b"")  # no topic and version: no line's fields (see `_learn`)
_KNOWN_LIMIT = 100_000  # topic-and-version spellings kept (a long stream adds one a line)
PROGRESS_EVERY = 10_000
_SHORT_STATE = 4096  # states shorter than this have their length's spelling ready


class ChainChecked(NamedTuple):
    """What the check found: the events, the last hash, and where `anchor` is (None: nowhere).
    (A tuple, as `ledger_export.Genesis`.)"""

    events: int
    head: str
    anchor_position: int | None


class ChainBroken(MindError):
    """Raised when a line fails the check: `line` (the file's, the header being 1) and why."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"line {line}: {reason}")
        self.line, self.reason = line, reason


def check_chain(
    handle: IO[bytes],
    genesis: str,
    expected: int,
    anchor: str | None,
    max_line: int,
    progress: Callable[[int], None] = lambda done: None,
) -> ChainChecked:
    """Check the event lines left in `handle` (its header read, `expected` events announced)
    from `genesis`; raises ChainBroken at the first bad line. `progress(done)` hears the count
    now and then."""
    checked = check_lines(handle, genesis, 1, expected, anchor, max_line, progress)
    check_count(checked.events, expected)
    return checked


def check_count(events: int, expected: int) -> None:
    """Raises ChainBroken when the file's `events` are not the `expected` its header says."""
    if events > expected:
        raise ChainBroken(expected + 2, f"the header says {expected} events, but the file goes on")
    if events < expected:
        raise ChainBroken(
            events + 2,
            f"the file ends after {events} events, but the header says {expected} (cut short?)",
        )


def check_lines(
    handle: IO[bytes],
    prev_hash: str,
    first: int,
    expected: int,
    anchor: str | None,
    max_line: int,
    progress: Callable[[int], None] = lambda done: None,
) -> ChainChecked:
    """Check the event lines left in `handle`, the first at position `first` and linked to
    `prev_hash`, up to the end of `handle` (blank lines may end it); raises ChainBroken at the
    first bad line. The count is the caller's to check (`check_count`): a part of a file
    (adapters/export_split.py) ends before the header's count. `events` is the last line's
    position (`first - 1` when there is none)."""
    # Every name the loop uses is local (a global's lookup each line costs ~1% of the check).
    sha, pack, join, hexed = hashlib.sha256, struct.Struct(">Q").pack, b"".join, hexlify
    as_b, frames, one, learn = _AS_B, _FRAMES, _ONE_KEY, _learn
    # A state's length as the rule spells it, looked up (struct's call was ~4% of the check; a
    # table of every length below `_SHORT_STATE` costs ~0.15 ms once).
    spelled = list(map(pack, range(_SHORT_STATE)))
    known: dict[bytes, tuple[bytes, bytes]] = {}  # topic-and-version spelling -> hashed fields
    kept = known.get
    prev = prev_hash.encode()
    prev_digest = bytes.fromhex(prev_hash)
    # No anchor: a hash no line has (comparing bytes with None took twice as long).
    target = anchor.encode() if anchor is not None else b""
    found = first - 1 if anchor == prev_hash else None  # `prev_hash` is the line before's
    # The tail's length, `,"position":N,"prev":"...","hash":"..."}` and `\n`: 162 and N's digits.
    tail = 162 + len(str(first))
    wider = 10 ** len(str(first))  # the first position with a digit more
    # The lines as `readline` gives them, each at most `max_line + 1` bytes long: b"" once the
    # file ends, which the loop reads as a blank line (a map, not `iter(partial(...), b"")`:
    # one call a line fewer).
    lines = map(handle.readline, repeat(max_line + 1))
    n, ended = first - 1, False
    while not ended:
        # Lines n + 1 up to `stop` (excluded) in one run: the same tail width, no count to
        # look at each line.
        start, stop = n + 1, min(wider, n + PROGRESS_EVERY)
        for n, line in zip(range(start, stop), lines, strict=False):  # (`lines` never ends)
            # Found by one byte, not the 9 of `,"keys":{` (a search for one byte is half the
            # time); the spelling kept includes `,"keys":{`.
            k = line.find(b"{", 46)
            topic, version = kept(line[46 : k + 1]) or learn(known, line, k)
            e = k + 82  # where a field of one key ends, the usual (else found)
            if line[e : e + 11] != b'},"state":{':
                e = line.find(b'},"state":{', k)
            keys = line[k + 1 : e].translate(as_b)
            if (keys == one or keys in frames) and line[:14] == b'{"aggregate":"':
                state = line[e + 10 : -tail]
                try:
                    length = spelled[len(state)]
                except IndexError:
                    length = pack(len(state))
                content = sha(join((topic, line[14:46], version, length, state))).digest()
                digest = sha(prev_digest + content).digest()
                hashed = hexed(digest)
                if line[-tail:] == b',"position":%d,"prev":"%s","hash":"%s"}\n' % (n, prev, hashed):
                    prev, prev_digest = hashed, digest
                    if hashed == target:
                        found = n
                    continue
            # Not a usual line: read it whole, or say what is wrong with it.
            if not line.strip():
                _blank_to_the_end(handle, n, max_line)
                n, ended = n - 1, True
                break
            hashed = _unusual(line, n, prev.decode(), expected, max_line)
            prev, prev_digest = hashed, bytes.fromhex(hashed.decode())
            if hashed == target:
                found = n
        else:  # the run went to its end: the file goes on
            n = stop - 1
            if stop == wider:
                tail, wider = tail + 1, wider * 10
            progress(n)
    progress(n)
    return ChainChecked(n, prev.decode(), found)


def _learn(known: dict[bytes, tuple[bytes, bytes]], line: bytes, k: int) -> tuple[bytes, bytes]:
    """The hashed fields (length-prefixed topic and aggregate length; version) of a topic and
    version spelled as the exporter spells them up to the keys' `{` (at `k`), kept for the
    next line that has them. For any other spelling, fields no line's hash is computed over
    (the line's hash then does not recompute and it is read whole), so the loop asks one
    question a line, not two."""
    spelled = _TOPIC_VERSION.fullmatch(line, 46, k + 1) if k != -1 else None
    if spelled is None:
        return _UNUSUAL
    topic, version = spelled.groups()
    if len(known) >= _KNOWN_LIMIT:
        known.clear()
    fields = known[line[46 : k + 1]] = (
        len(topic).to_bytes(8, "big") + topic + (32).to_bytes(8, "big"),
        len(version).to_bytes(8, "big") + version,
    )
    return fields


def _unusual(line: bytes, n: int, prev: str, expected: int, max_line: int) -> bytes:
    """The hash of event line `n` read whole (`read_event`); raises ChainBroken at its fault."""
    if len(line) > max_line:
        raise ChainBroken(n + 1, f"the line is longer than {max_line // (1024 * 1024)} MiB")
    if not line.endswith(b"\n"):
        raise ChainBroken(n + 1, "the line does not end with a newline (cut short?)")
    if n > expected:
        raise ChainBroken(expected + 2, f"the header says {expected} events, but the file goes on")
    # Here, not at the top: a file of usual lines never needs it.
    from mindledger.adapters.export_form import LineProblem, read_event

    try:
        event, _ = read_event(line[:-1], n, prev)
    except LineProblem as problem:
        raise ChainBroken(n + 1, str(problem)) from None
    return event.hash.encode()


def _blank_to_the_end(handle: IO[bytes], n: int, max_line: int) -> None:
    """Blank lines may end the file (an editor adds one); one before another line is refused
    at the first blank one's number."""
    for line in iter(partial(handle.readline, max_line + 1), b""):
        if line.strip():
            raise ChainBroken(
                n + 1, "a blank line in the middle of the file (only the end may have them)"
            )
