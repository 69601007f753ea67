"""The commands that change the mind, each a decision against one `Changes`.

`Mind` runs each as a use case of its own (`Mind.decide`: saved at once, retried on a
conflict); a turn runs the ones its control lines name against the turn's `Changes`, saved with
its reply. Either way the same rules decide and the same errors refuse.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple
from uuid import UUID

from mindledger.domain.changes import Changes
from mindledger.domain.commitment import (
    TEXT_LIMIT,
    Commitment,
    Origin,
    commitment_cid,
    legacy_cid,
    normalise,
)
from mindledger.domain.errors import (
    InvalidInputError,
    NotInitialisedError,
    UnknownCommitmentError,
    UnknownConceptError,
    UnknownThreadError,
)
from mindledger.domain.identity import IDENTITY_ID, Identity
from mindledger.domain.text import clean_text, clean_token

if TYPE_CHECKING:  # loaded on use (their event classes are built only then)
    from mindledger.domain.concept import Concept
    from mindledger.domain.thread import Thread


class OpenOutcome(NamedTuple):
    """What opening a commitment did: `opened` is False when that text was already open."""

    cid: str
    episode: int
    opened: bool


def identity(changes: Changes) -> Identity:
    """The mind's identity; NotInitialisedError before `init`."""
    found = changes.find(Identity, IDENTITY_ID)
    if found is None:
        raise NotInitialisedError("no mind here yet; run `mind init` first")
    return found


def open_commitment(
    changes: Changes,
    text: str,
    origin: Origin,
    at: datetime,
    thread_id: str | None = None,
    concepts: tuple[str, ...] = (),
    since: datetime | None = None,
) -> OpenOutcome:
    """Open a commitment; the same text while it is open is a no-op that says so (`since`: the
    time an imported ledger gives)."""
    text = clean_text(text, "commitment text", TEXT_LIMIT, visible=True)
    cid = commitment_cid(text, changes.keys)
    latest = changes.latest_episode(cid)
    if latest is None:
        # A promise first opened in a ledger written before CIDs were keyed keeps its old CID,
        # so it is still "already open" and its next episode continues it. A legacy CID whose
        # text is another promise (a sha256 clash there) is not this one's.
        old = changes.latest_episode(legacy_cid(text))
        if old is not None and normalise(old.text) == normalise(text):
            cid, latest = old.cid, old
    if latest is not None and not latest.closed:
        if normalise(latest.text) != normalise(text):
            raise InvalidInputError(
                f"CID {cid} already names a different open commitment; reword it"
            )
        return OpenOutcome(latest.cid, latest.episode, opened=False)
    episode = 1 if latest is None else latest.episode + 1
    commitment = Commitment.open(cid, text, origin, episode, at, thread_id, concepts, since)
    changes.add(commitment)
    return OpenOutcome(commitment.cid, episode, opened=True)


def commitment(changes: Changes, cid: str) -> Commitment:
    """The latest episode of a CID; UnknownCommitmentError when it was never opened."""
    latest = changes.latest_episode(cid.strip().lower())
    if latest is None:
        raise UnknownCommitmentError(
            f"no commitment has CID {cid!r}; `mind commitments --all` lists them"
        )
    return latest


def close_commitment(
    changes: Changes, cid: str, reason: str | None, evidence: tuple[int, ...], at: datetime
) -> Commitment:
    """Close the open episode of a CID; unknown or closed CIDs are refused."""
    latest = commitment(changes, cid)
    latest.close(reason, evidence, at)
    return latest


def concept(changes: Changes, token: str) -> Concept:
    """The concept a token names; UnknownConceptError when it is not defined."""
    from mindledger.domain.concept import Concept, concept_id  # a turn builds no concept events

    token = clean_token(token)
    found = changes.find(Concept, concept_id(token))
    if found is None:
        raise UnknownConceptError(
            f"concept {token!r} is not defined; `mind concept define {token} TEXT` first"
        )
    return found


def define_concept(changes: Changes, token: str, definition: str, at: datetime) -> int:
    """Define or redefine a concept; returns its definition version."""
    from mindledger.domain.concept import Concept, concept_id

    token = clean_token(token)
    found = changes.find(Concept, concept_id(token))
    if found is None:
        found = Concept.define_new(token, definition, at)
        changes.add(found)
    else:
        found.define(token, definition, at)
    return found.definition_version


def relate_concepts(
    changes: Changes, source: str, target: str, relation: str, at: datetime
) -> bool:
    """Relate two defined concepts with a typed edge."""
    target_token = concept(changes, target).token
    return concept(changes, source).relate(target_token, relation, at)


def propose_name(changes: Changes, name: str, turn: int, at: datetime) -> None:
    """A turn proposes a name."""
    identity(changes).propose(name, turn, at)


def ratify_name(changes: Changes, name: str, turn: int, at: datetime) -> None:
    """A later turn ratifies a proposed name, adopting it."""
    identity(changes).ratify(name, turn, at)


def thread(changes: Changes, thread_id: UUID) -> Thread:
    """A thread by its full id; UnknownThreadError when there is none."""
    from mindledger.domain.thread import Thread

    found = changes.find(Thread, thread_id)
    if found is None:
        raise UnknownThreadError(f"no thread has id {thread_id}; `mind threads --all`")
    return found


def resolve_thread(
    changes: Changes, thread_id: UUID, verdict: str, at: datetime, **details: Any
) -> Thread:
    """Resolve a thread with a verdict and what the verdict requires."""
    found = thread(changes, thread_id)
    found.resolve(verdict, at, **details)
    return found
