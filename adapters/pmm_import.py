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

from mindledger.adapters.import_rules import import_bytes, load_json, message_time
from mindledger.adapters.pmm_chain import ChainReport, pmm_hash, source_key, verify_chain
from mindledger.adapters.pmm_meaning import SPEAKERS, meaning_of
from mindledger.domain.application import Mind
from mindledger.domain.errors import InvalidInputError
from mindledger.domain.foreign_import import ForeignFile, ForeignRecord
from mindledger.domain.text_keys import IMPORT

FORMAT = "pmm"
FIELDS = ("id", "ts", "kind", "content", "meta", "prev_hash", "hash")
__all__ = ["ChainReport", "import_pmm", "parse_pmm", "pmm_hash", "pmm_records", "verify_chain"]
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


def parse_pmm(data: bytes, name: str) -> list[PmmEvent]:
    """The events of a PMM export, or InvalidInputError naming the first one not in its shape."""
    items = load_json(data, f"{name} is not JSON ({{}}); give a PMM ledger export")
    if not isinstance(items, list):
        raise InvalidInputError(f"{name} is not a PMM ledger export (a JSON array of events)")
    if not items:
        raise InvalidInputError(f"no events in {name}")
    events, seen = [], set()
    for index, item in enumerate(items):
        event = _event(item, f"{name}: {_place(item, index)}")
        if event.id in seen:
            raise InvalidInputError(f"{name}: event {index + 1} repeats PMM id {event.id}")
        seen.add(event.id)
        events.append(event)
    return events


def _place(item: Any, index: int) -> str:
    """Where an event is, for an error: its PMM id when it has a usable one, else its place."""
    pid = item.get("id") if isinstance(item, dict) else None
    if isinstance(pid, str | int) and not isinstance(pid, bool) and len(str(pid)) <= 40:
        return f"PMM id {pid}"
    return f"event {index + 1} (counted from 1)"


def _event(item: Any, where: str) -> PmmEvent:
    if not isinstance(item, dict) or any(f not in item for f in FIELDS):
        raise InvalidInputError(f"{where} is not an object with {', '.join(FIELDS)}")
    pid, ts = item["id"], item["ts"]
    if isinstance(pid, bool) or not isinstance(pid, int | str):
        raise InvalidInputError(f"{where} has an id that is not a whole number or a string")
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
    if (chain.breaks or chain.link_breaks) and not accept_broken:
        raise InvalidInputError(f"{path}: {_refusal(chain)}")
    sha = hashlib.sha256(data).hexdigest()
    # A longer export of the same PMM mind, or the same one saved again, continues the same
    # import (`source_key`). A file that does not start the chain is its own source. Both are
    # hashes of what was written (a PMM hash of a short first message is guessed back), so the
    # ledger keeps them keyed; the ones imports before that were named by are looked up.
    source = source_key(events, tuple(SPEAKERS)) or sha
    named = mind.text_keys.keyed(IMPORT, source)
    file = ForeignFile(
        format=FORMAT,
        name=path.name,
        sha256=mind.text_keys.keyed(IMPORT, sha),
        records=len(events),
        conversation=f"{FORMAT}/{named[:16]}",
        breaks=chain.breaks,
        forks=chain.forks,
        source_key=named,
        link_breaks=chain.link_breaks,
        legacy_keys=tuple(dict.fromkeys((source, sha))),
        legacy_conversation=f"{FORMAT}/{source[:16]}",
    )
    records = pmm_records(events, chain.broken_ids)
    if on_total:
        on_total(len(records))
    tally = mind.import_foreign(file, records, progress)
    return {
        "source": str(path),
        "format": FORMAT,
        "sha256": sha,
        # What names, in this mind, the PMM mind this file is an export of: the keyed hash of
        # `adapters.pmm_chain.source_key` (the import's stream is `import_id("pmm", it)`).
        "source_key": named,
        "events": len(events),
        "added": tally.added,
        "skipped": tally.skipped,
        "breaks": list(chain.breaks),
        "link_breaks": list(chain.link_breaks),
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
            # "record (not accepted here): <why>" (domain.foreign_apply.Outcome.tallied).
            label, _, why = what.partition(": ")
            row = {"kind": kind, "became": label, "count": n}
            rows.append(row | {"reason": why} if why else row)
        already = in_file[kind] - sum(outcomes.values())
        if already:
            rows.append({"kind": kind, "became": "already imported", "count": already})
    return rows


def _refusal(chain: ChainReport) -> str:
    """Why a broken chain is refused, naming the first PMM ids of each fault."""
    faults = []
    if chain.breaks:
        faults.append(
            f"{len(chain.breaks)} event(s) whose hash does not recompute with PMM's rule "
            f"(PMM id {_named(chain.breaks)})"
        )
    if chain.link_breaks:
        faults.append(
            f"{len(chain.link_breaks)} event(s) whose prev_hash does not link them into the "
            f"chain (PMM id {_named(chain.link_breaks)})"
        )
    return (
        f"{'; '.join(faults)}; nothing imported (--accept-broken imports it with the breaks "
        "recorded)"
    )


def _named(ids: tuple[str, ...]) -> str:
    shown = ", ".join(ids[:NAMED_IN_ERROR])
    return shown + (f" and {len(ids) - NAMED_IN_ERROR} more" if len(ids) > NAMED_IN_ERROR else "")
