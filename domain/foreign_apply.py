"""How the records of a foreign file become events here, a batch per transaction.

Each record goes through the same commands the CLI uses (open and close a commitment, define a
concept, adopt a name); one a command refuses (a token this mind cannot spell, a relation to a
concept the file never defined) is kept as a record with the refusal, never dropped.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from uuid import UUID

from mindledger.domain import commands
from mindledger.domain.changes import Changes
from mindledger.domain.concept import Concept
from mindledger.domain.conversation import Conversation, conversation_id
from mindledger.domain.errors import MindError
from mindledger.domain.events import AggregateRoot
from mindledger.domain.foreign_import import (
    COMMITMENT_CLOSED,
    COMMITMENT_OPENED,
    CONCEPT_ALIAS,
    CONCEPT_BINDING,
    CONCEPT_DEFINED,
    CONCEPT_RELATION,
    MESSAGE,
    NAME_ADOPTED,
    AdoptName,
    AliasConcept,
    BindConcepts,
    ClosePromise,
    DefineConcept,
    ForeignFile,
    ForeignImport,
    ForeignRecord,
    OpenPromise,
    RelateConcepts,
    SayMessage,
    import_id,
)
from mindledger.domain.import_kept import RECORDS, noting_kept

# What a record with a meaning here became when a command refused it (a token this mind cannot
# spell, a relation to a concept the file never defined): kept, with the refusal as its target.
NOT_ACCEPTED = "record (not accepted here)"


# (foreign kind, what it became) of each record a batch added.
Done = list[tuple[str, str]]


@dataclass
class ImportTally:
    """What an import did: records added and skipped, and each foreign kind's outcomes."""

    added: int = 0
    skipped: int = 0
    became: dict[str, Counter[str]] = field(default_factory=dict)

    def count(self, kind: str, became: str) -> None:
        self.became.setdefault(kind, Counter())[became] += 1


@dataclass(frozen=True)
class Outcome:
    """What one record became: a label, the thing it made (a CID, a token) and a file key."""

    became: str
    target: str | None = None
    foreign_key: str | None = None
    # Why a record was not accepted, in words shared by all such records (the import's table).
    why: str | None = None

    def tallied(self) -> str:
        """What the import's table calls this outcome."""
        return f"{self.became}: {self.why}" if self.why else self.became


def import_records(
    decide: Callable[[Callable[[Changes], Done]], Done],
    file: ForeignFile,
    records: Sequence[ForeignRecord],
    at: datetime,
    batch: int,
    progress: Callable[[int], None] | None = None,
) -> ImportTally:
    """Apply `records` `batch` at a time, each batch in one transaction (`decide`).

    The aggregates a saved batch left are handed to the next one instead of being read back
    (the import's own stream grows by a record per event: reloading it every batch made an
    import quadratic). A batch a concurrent writer beat is decided again on fresh state: the
    carried aggregates are used by a batch's first attempt only."""
    tally = ImportTally()
    carried: dict[UUID, AggregateRoot] = {}
    for start in range(0, max(len(records), 1), batch):
        chunk = records[start : start + batch]
        decision = _Batch(file, chunk, at, carried)
        with noting_kept(tally.added, RECORDS):  # the batches saved stay: the error says so
            done = decide(decision)
        carried = decision.aggregates()
        for kind, became in done:
            tally.count(kind, became)
        tally.added += len(done)
        tally.skipped += len(chunk) - len(done)
        if progress:
            progress(len(chunk))
    return tally


class _Batch:
    """One batch's decision; its first attempt starts from the aggregates carried over."""

    def __init__(
        self,
        file: ForeignFile,
        chunk: Sequence[ForeignRecord],
        at: datetime,
        carried: dict[UUID, AggregateRoot],
    ) -> None:
        self.file, self.chunk, self.at, self.carried = file, chunk, at, carried
        self.last: Changes | None = None

    def __call__(self, changes: Changes) -> Done:
        if self.last is None:
            changes.changed.update(self.carried)
        self.last = changes
        return _apply(changes, self.file, self.chunk, self.at)

    def aggregates(self) -> dict[UUID, AggregateRoot]:
        """The aggregates as the saved attempt left them."""
        return dict(self.last.changed) if self.last is not None else {}


def _apply(
    changes: Changes, file: ForeignFile, chunk: Sequence[ForeignRecord], at: datetime
) -> Done:
    imported = changes.find(ForeignImport, import_id(file.format, file.stream_key))
    for key in file.legacy_keys if imported is None else ():
        # The same source imported before its keys were keyed (by its PMM hash, or before that
        # by the file's sha256): continued, and its messages stay in the conversation it had.
        imported = changes.find(ForeignImport, import_id(file.format, key))
        if imported is not None:
            file = replace(file, conversation=file.legacy_conversation or file.conversation)
            break
    if imported is None:
        imported = ForeignImport.start(file, at)
        changes.add(imported)
    done = []
    for record in chunk:
        if imported.holds(record):
            continue
        imported.read(file, at)
        outcome = _meaning(changes, file, imported, record, at)
        imported.keep(record, outcome.became, outcome.target, at, outcome.foreign_key)
        done.append((record.kind, outcome.tallied()))
    return done


def _meaning(
    changes: Changes,
    file: ForeignFile,
    imported: ForeignImport,
    record: ForeignRecord,
    at: datetime,
) -> Outcome:
    meaning = record.meaning
    if meaning is None:
        return Outcome(record.label)
    try:
        return _apply_meaning(changes, file, imported, record, at)
    except MindError as e:
        # Kept, with why it could not mean here what it meant there (`target` says why).
        return Outcome(NOT_ACCEPTED, _first_line(e), why=_grouped(_first_line(e)))


def _apply_meaning(
    changes: Changes,
    file: ForeignFile,
    imported: ForeignImport,
    record: ForeignRecord,
    at: datetime,
) -> Outcome:
    m = record.meaning
    if isinstance(m, SayMessage):
        conversation = changes.find(Conversation, conversation_id(file.conversation))
        if conversation is None:
            conversation = Conversation.start(file.conversation, list(file.participants), at)
            changes.add(conversation)
        source_id = f"{file.format}:{record.foreign_id}"
        added = conversation.observe(m.speaker, m.text, m.said_at, source_id, at)
        return Outcome(MESSAGE if added else "record (message already here)", source_id)
    if isinstance(m, OpenPromise):
        opened = commands.open_commitment(changes, m.text, m.origin, at, since=m.opened_at)
        label = COMMITMENT_OPENED if opened.opened else f"{COMMITMENT_OPENED} (already open)"
        return Outcome(label, opened.cid, m.foreign_cid)
    if isinstance(m, ClosePromise):
        cid = imported.cids.get(m.foreign_cid)
        if cid is None:
            return Outcome("record (closes a commitment the file never opened)")
        latest = commands.commitment(changes, cid)
        if latest.closed:
            return Outcome(f"{COMMITMENT_CLOSED} (already closed)", cid)
        latest.close(m.reason, (), at, since=m.closed_at)
        return Outcome(COMMITMENT_CLOSED, cid)
    if isinstance(m, DefineConcept):
        commands.define_concept(changes, m.token, m.definition, at)
        return Outcome(CONCEPT_DEFINED, commands.concept(changes, m.token).token)
    if isinstance(m, AliasConcept):
        concept = commands.concept(changes, m.token)
        concept.alias(m.alias, at)
        return Outcome(CONCEPT_ALIAS, concept.token)
    if isinstance(m, RelateConcepts):
        commands.relate_concepts(changes, m.source, m.target, m.relation, at)
        return Outcome(CONCEPT_RELATION, commands.concept(changes, m.source).token)
    if isinstance(m, BindConcepts):
        # PMM binds tokens it never defined: those it did are bound, the rest named in the record.
        concepts = [found for token in m.tokens if (found := _defined(changes, token)) is not None]
        if not concepts:
            return Outcome(
                NOT_ACCEPTED,
                f"none of {', '.join(m.tokens)} is a defined concept",
                why="none of its tokens is a defined concept",
            )
        for concept in concepts:
            concept.bind("event", m.target, at)
        return Outcome(CONCEPT_BINDING, m.target)
    assert isinstance(m, AdoptName)
    identity = commands.identity(changes)
    if identity.name == m.name.strip():
        return Outcome(f"{NAME_ADOPTED} (already the name)", identity.name)
    identity.adopt(m.name, f"imported from {file.format} {record.foreign_id}", at)
    return Outcome(NAME_ADOPTED, identity.name)


def _defined(changes: Changes, token: str) -> Concept | None:
    try:
        return commands.concept(changes, token)
    except MindError:
        return None


def _grouped(reason: str) -> str:
    """A refusal without what it quotes ('ontology.Self(x)' → '…'), so like refusals group."""
    return re.sub(r"'[^']*'", "'…'", reason, count=1)


def _first_line(e: Exception) -> str:
    return str(e).splitlines()[0] if str(e) else type(e).__name__
