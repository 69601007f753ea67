"""`mind import pmm`: a Persistent Mind Model ledger export, verified with PMM's own hash rule,
then brought in with what each of its events means here (`domain.foreign_apply`).

The file is a JSON array of `{id, ts, kind, content, meta, prev_hash, hash}` (`meta` a JSON
string). PMM hashes `{"kind", "content", "meta" (as an object), "prev_hash"}` as sorted, compact
JSON; `id` and `ts` are not hashed.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from adapters.import_rules import import_bytes, message_time
from adapters.pmm_meaning import meaning_of
from domain.application import Mind
from domain.errors import InvalidInputError
from domain.foreign_import import ForeignFile, ForeignRecord

FORMAT = "pmm"
FIELDS = ("id", "ts", "kind", "content", "meta", "prev_hash", "hash")
# How many PMM ids a refusal names before "and N more".
NAMED_IN_ERROR = 5


@dataclass(frozen=True)
class PmmEvent:
    """One event of a PMM ledger, as the file holds it (`meta` parsed when it is JSON)."""

    id: str
    ts: str | None
    kind: str
    content: str
    meta_text: str
    meta: Any
    prev_hash: str | None
    hash: str


@dataclass(frozen=True)
class ChainReport:
    """What PMM's hash rule says of a file: ids whose hash does not recompute, and forks
    (`parent id: child ids`, a parent named by two or more events)."""

    events: int
    breaks: tuple[str, ...]
    forks: tuple[str, ...]


def pmm_hash(kind: str, content: str, meta: Any, prev_hash: str | None) -> str:
    """PMM's event hash (the rule in ../shared/data/pmm/SOURCE.md)."""
    body = {"kind": kind, "content": content, "meta": meta, "prev_hash": prev_hash}
    return hashlib.sha256(
        json.dumps(body, sort_keys=True, separators=(",", ":")).encode("utf-8")
    ).hexdigest()


def parse_pmm(data: bytes, name: str) -> list[PmmEvent]:
    """The events of a PMM export, or InvalidInputError naming the first one not in its shape."""
    try:
        items = json.loads(data)
    except (ValueError, RecursionError) as e:
        raise InvalidInputError(
            f"{name} is not JSON ({_short(e)}); give a PMM ledger export"
        ) from None
    if not isinstance(items, list):
        raise InvalidInputError(f"{name} is not a PMM ledger export (a JSON array of events)")
    if not items:
        raise InvalidInputError(f"no events in {name}")
    events, seen = [], set()
    for index, item in enumerate(items):
        event = _event(item, f"{name}: event {index}")
        if event.id in seen:
            raise InvalidInputError(f"{name}: event {index} repeats PMM id {event.id}")
        seen.add(event.id)
        events.append(event)
    return events


def _event(item: Any, where: str) -> PmmEvent:
    if not isinstance(item, dict) or any(f not in item for f in FIELDS):
        raise InvalidInputError(f"{where} is not an object with {', '.join(FIELDS)}")
    pid, ts = item["id"], item["ts"]
    if isinstance(pid, bool) or not isinstance(pid, int | str):
        raise InvalidInputError(f"{where} has an id that is not a number or a string")
    for key in ("kind", "content", "hash"):
        if not isinstance(item[key], str):
            raise InvalidInputError(f"{where} has a {key} that is not a string")
    if not isinstance(item["prev_hash"], str | None) or not isinstance(ts, str | None):
        raise InvalidInputError(f"{where} has a prev_hash or ts that is not a string or null")
    meta_text, meta = item["meta"], item["meta"]
    if isinstance(meta_text, str):
        try:
            meta = json.loads(meta_text)
        except (ValueError, RecursionError):
            meta = meta_text  # hashed as the string it is; it will not recompute
    else:
        meta_text = json.dumps(meta, sort_keys=True, separators=(",", ":"))
    try:
        # JSON can spell a lone surrogate (\ud800), which no stored text can hold.
        "".join((str(pid), ts or "", item["kind"], item["content"], meta_text)).encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInputError(f"{where} holds text that is not valid Unicode") from None
    return PmmEvent(
        str(pid),
        ts,
        item["kind"],
        item["content"],
        meta_text,
        meta,
        item["prev_hash"],
        item["hash"],
    )


def verify_chain(events: list[PmmEvent]) -> ChainReport:
    """Recompute every hash with PMM's rule and find every parent named more than once."""
    breaks = tuple(
        e.id for e in events if pmm_hash(e.kind, e.content, e.meta, e.prev_hash) != e.hash
    )
    owner = {e.hash: e.id for e in events}
    children: dict[str, list[str]] = {}
    for e in events:
        if e.prev_hash is not None:
            children.setdefault(e.prev_hash, []).append(e.id)
    forks = tuple(
        f"{owner.get(parent, parent[:12])}: {', '.join(kids)}"
        for parent, kids in children.items()
        if len(kids) > 1
    )
    return ChainReport(len(events), breaks, forks)


def pmm_records(events: list[PmmEvent], broken: set[str]) -> list[ForeignRecord]:
    """Each event as a foreign record, with what it means here (`adapters.pmm_meaning`)."""
    records = []
    for e in events:
        meaning, label = meaning_of(e.kind, e.content, e.meta, _time(e))
        records.append(
            ForeignRecord(
                foreign_id=e.id,
                foreign_hash=e.hash,
                kind=e.kind,
                foreign_time=e.ts,
                content=e.content,
                meta=e.meta_text,
                meaning=meaning,
                label=label,
                broken=e.id in broken,
            )
        )
    return records


def _time(e: PmmEvent) -> Any:
    """The event's time, or None when it has none this mind can keep."""
    if e.ts is None:
        return None
    try:
        return message_time(e.ts, f"PMM event {e.id}")
    except InvalidInputError:
        return None


def import_pmm(
    mind: Mind,
    path: Path,
    accept_broken: bool = False,
    progress: Callable[[int], None] | None = None,
    on_total: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Verify and import a PMM ledger export; a file whose hashes do not all recompute is
    refused (nothing written) unless `accept_broken`, which records the breaks with it."""
    data = import_bytes(path)
    events = parse_pmm(data, str(path))
    chain = verify_chain(events)
    if chain.breaks and not accept_broken:
        raise InvalidInputError(
            f"{path}: {len(chain.breaks)} event(s) whose hash does not recompute with PMM's rule "
            f"(PMM id {_named(chain.breaks)}); nothing imported (--accept-broken imports it "
            "with the breaks recorded)"
        )
    sha = hashlib.sha256(data).hexdigest()
    file = ForeignFile(
        format=FORMAT,
        name=path.name,
        sha256=sha,
        records=len(events),
        conversation=f"{FORMAT}/{sha[:16]}",
        breaks=chain.breaks,
        forks=chain.forks,
    )
    records = pmm_records(events, set(chain.breaks))
    if on_total:
        on_total(len(records))
    tally = mind.import_foreign(file, records, progress)
    return {
        "source": str(path),
        "format": FORMAT,
        "sha256": sha,
        "events": len(events),
        "added": tally.added,
        "skipped": tally.skipped,
        "breaks": list(chain.breaks),
        "forks": list(chain.forks),
        "kinds": kinds_table(records, tally.became),
    }


def kinds_table(
    records: list[ForeignRecord], became: dict[str, Counter[str]]
) -> list[dict[str, Any]]:
    """One row per (foreign kind, what it became) with its count, in the file's kind order;
    the kinds of a re-import (nothing added) show their count under "already imported"."""
    order = list(dict.fromkeys(r.kind for r in records))
    in_file = Counter(r.kind for r in records)
    rows = []
    for kind in order:
        outcomes = became.get(kind, Counter())
        for what, n in sorted(outcomes.items(), key=lambda kv: (-kv[1], kv[0])):
            rows.append({"kind": kind, "became": what, "count": n})
        already = in_file[kind] - sum(outcomes.values())
        if already:
            rows.append({"kind": kind, "became": "already imported", "count": already})
    return rows


def _named(ids: tuple[str, ...]) -> str:
    shown = ", ".join(ids[:NAMED_IN_ERROR])
    return shown + (f" and {len(ids) - NAMED_IN_ERROR} more" if len(ids) > NAMED_IN_ERROR else "")


def _short(e: Exception) -> str:
    return str(e).splitlines()[0][:120] if str(e) else type(e).__name__
