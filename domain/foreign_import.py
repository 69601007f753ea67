"""A foreign ledger brought in (a Persistent Mind Model export, a chat export): what each of its
records meant here, with its provenance, so nothing it held is dropped and a re-import adds nothing.

One stream per foreign source: its format and `source_key` (for PMM the keyed hash of its first
message's hash, which names the PMM mind: `adapters.pmm_chain.source_key`; else of the file),
so a later, longer export of the same ledger, or the same one saved again, continues that
stream (`Resumed`) and adds only the records not yet kept (by foreign id and hash). Each
foreign record becomes one `RecordKept` event carrying the file's keyed digest, the record's foreign
id and hash and the record itself; when the record has a meaning here (a message, a
commitment, a concept, a name) the matching event is saved in the same transaction and
`became`/`target` name it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from mindledger.domain.events import AggregateRoot, DomainEvent, stream_id


def import_id(format: str, source_key: str) -> UUID:
    """The stream id of one imported source (a file's keyed digest, or what names a PMM mind)."""
    return stream_id("import", format, source_key)


# -- what a foreign record means here (built by the adapters, applied by domain.foreign_apply) --


@dataclass(frozen=True)
class SayMessage:
    """A message of the conversation the file holds."""

    speaker: str
    text: str
    said_at: datetime


@dataclass(frozen=True)
class OpenPromise:
    """A commitment opened; `foreign_cid` is the file's own id for it (its close names it);
    `opened_at` the time the file says it was opened."""

    text: str
    origin: Literal["user", "assistant", "owner", "autonomy"]
    foreign_cid: str
    opened_at: datetime | None = None


@dataclass(frozen=True)
class ClosePromise:
    """A commitment the file opened is closed."""

    foreign_cid: str
    reason: str | None
    closed_at: datetime | None = None


@dataclass(frozen=True)
class DefineConcept:
    token: str
    definition: str


@dataclass(frozen=True)
class AliasConcept:
    token: str
    alias: str


@dataclass(frozen=True)
class RelateConcepts:
    source: str
    target: str
    relation: str


@dataclass(frozen=True)
class BindConcepts:
    """Concepts bound to another record of the file, named by its source id (`pmm:92`)."""

    tokens: tuple[str, ...]
    target: str


@dataclass(frozen=True)
class AdoptName:
    name: str


Meaning = (
    SayMessage
    | OpenPromise
    | ClosePromise
    | DefineConcept
    | AliasConcept
    | RelateConcepts
    | BindConcepts
    | AdoptName
)


@dataclass(frozen=True)
class ForeignRecord:
    """One record of a foreign file, as read, with what it means here (None: kept as a record;
    `label` then says what it is, e.g. "claim" or "reflection")."""

    foreign_id: str
    foreign_hash: str | None
    kind: str
    foreign_time: str | None
    content: str
    meta: str
    meaning: Meaning | None = None
    label: str = "record"
    broken: bool = False


@dataclass(frozen=True)
class ForeignFile:
    """The file being imported: its format, name, digest, the source it continues
    (`source_key`, the file's digest when empty) and the chain faults it was accepted with (PMM
    ids whose hash does not recompute; links that do not hold; parents named by two records).

    `sha256` and `source_key` are what the ledger keeps, in the clear: keyed digests
    (`Mind.text_keys`, purpose "import"), never a file's sha256 or a PMM hash, which a guess of
    a short file or first message would confirm. `legacy_keys` are the stream keys imports of
    this source were given before that (looked up in order when `stream_key` names nothing),
    and `legacy_conversation` the conversation they recorded messages in."""

    format: str
    name: str
    sha256: str
    records: int
    conversation: str
    breaks: tuple[str, ...] = ()
    forks: tuple[str, ...] = ()
    participants: tuple[str, ...] = field(default=("user", "assistant"))
    source_key: str = ""
    link_breaks: tuple[str, ...] = ()
    legacy_keys: tuple[str, ...] = ()
    legacy_conversation: str = ""

    @property
    def stream_key(self) -> str:
        """What names this import's stream: the source, else the file."""
        return self.source_key or self.sha256


class ForeignImport(AggregateRoot):
    """One imported source: the records already kept (by foreign id and hash) and the ids its
    commitments were given here."""

    class Started(DomainEvent):
        TOPIC = "mind.import.started"
        format: str
        file_name: str
        file_sha256: str
        records: int
        breaks: list[str] = []
        forks: list[str] = []
        # Optional with defaults: imports recorded before these fields read as they were.
        source_key: str | None = None
        link_breaks: list[str] = []

    class Resumed(DomainEvent):
        """Another file of the same source (a longer export, the same one saved again) added
        records to it."""

        TOPIC = "mind.import.resumed"
        format: str
        file_name: str
        file_sha256: str
        records: int
        breaks: list[str] = []
        forks: list[str] = []
        link_breaks: list[str] = []

    class RecordKept(DomainEvent):
        TOPIC = "mind.import.record_kept"
        SEALED = {"content": "own", "meta": "own", "foreign_hash": "own"}
        format: str
        file_sha256: str
        foreign_id: str
        foreign_hash: str | None
        kind: str
        foreign_time: str | None
        content: str
        meta: str
        became: str
        target: str | None = None
        # The file's own id of what the record made (a PMM commitment's `cid`), when it has one.
        foreign_key: str | None = None
        broken: bool = False

    def __init__(self, id: UUID) -> None:
        super().__init__(id)
        self.format = ""
        self.file_sha256 = ""
        # (foreign id, foreign hash) of every record kept: the same event is never kept twice.
        self.kept: set[tuple[str, str | None]] = set()
        # The file's commitment id -> the CID it was opened under here.
        self.cids: dict[str, str] = {}

    @classmethod
    def start(cls, file: ForeignFile, at: datetime) -> ForeignImport:
        """Begin importing `file`."""
        started = cls(import_id(file.format, file.stream_key))
        started.trigger(cls.Started, at, source_key=file.source_key or None, **_file_fields(file))
        return started

    def holds(self, record: ForeignRecord) -> bool:
        """Whether this record (its foreign id and hash) was kept already."""
        return (record.foreign_id, record.foreign_hash) in self.kept

    def read(self, file: ForeignFile, at: datetime) -> None:
        """Note that `file` (another file of this source) adds records, once per file."""
        if file.sha256 != self.file_sha256:
            self.trigger(self.Resumed, at, **_file_fields(file))

    def keep(
        self,
        record: ForeignRecord,
        became: str,
        target: str | None,
        at: datetime,
        foreign_key: str | None = None,
    ) -> None:
        """Record one foreign record with what it became here."""
        self.trigger(
            self.RecordKept,
            at,
            format=self.format,
            file_sha256=self.file_sha256,
            foreign_id=record.foreign_id,
            foreign_hash=record.foreign_hash,
            kind=record.kind,
            foreign_time=record.foreign_time,
            content=record.content,
            meta=record.meta,
            became=became,
            target=target,
            foreign_key=foreign_key,
            broken=record.broken,
        )

    def when_Started(self, e: Started) -> None:
        self.format, self.file_sha256 = e.format, e.file_sha256

    def when_Resumed(self, e: Resumed) -> None:
        self.file_sha256 = e.file_sha256

    def when_RecordKept(self, e: RecordKept) -> None:
        self.kept.add((e.foreign_id, e.foreign_hash))
        # "commitment opened (already open)" too: the file's close of it closes that episode.
        if e.became.startswith(COMMITMENT_OPENED) and e.target and e.foreign_key:
            self.cids[e.foreign_key] = e.target


def _file_fields(file: ForeignFile) -> dict[str, Any]:
    return {
        "format": file.format,
        "file_name": file.name,
        "file_sha256": file.sha256,
        "records": file.records,
        "breaks": list(file.breaks),
        "forks": list(file.forks),
        "link_breaks": list(file.link_breaks),
    }


# What a record became (the import's table of kinds and the read model's `became` column).
MESSAGE = "message"
COMMITMENT_OPENED = "commitment opened"
COMMITMENT_CLOSED = "commitment closed"
CONCEPT_DEFINED = "concept defined"
CONCEPT_ALIAS = "concept alias"
CONCEPT_RELATION = "concept relation"
CONCEPT_BINDING = "concept binding"
NAME_ADOPTED = "name adopted"
