"""Where an imported transcript belongs: the conversation it is, found by what it contains.

A transcript is a conversation when their messages are the same, in order, as far as the
shorter goes (`Conversation.agrees`). Content names come first (one query each); a mind whose
transcripts were imported before content names has them under other names (the file's base
name, e.g. `chat/history.jsonl`), so a transcript no content name holds is looked for among
those too, whatever its file is called now: nothing is rewritten, the old conversation simply
goes on. That look reads the conversations' first events (a pass over the ledger for their
names), only when the transcript is new to its content names.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from mindledger.domain.changes import Changes
from mindledger.domain.conversation import (
    Conversation,
    Observed,
    conversation_id,
    fingerprint,
    same_message,
)

# A conversation's first message follows its start (and a title, which chats do not have).
FIRST_EVENTS = 3


def transcript_source(
    changes: Changes, messages: Sequence[Observed], sources: Iterable[str], kin: str
) -> str:
    """Where an import of the transcript `messages` belongs: the first of `sources` (endless
    names made from its content) whose conversation it is, up to the first that holds none;
    else the oldest other conversation named `kin...` that it is; else that free name."""
    tried = set()
    for source in sources:
        found = changes.find(Conversation, conversation_id(source))
        if found is None:
            free = source
            break
        if found.agrees(messages):
            return source
        tried.add(source)
    else:  # pragma: no cover - callers give endless sources
        raise AssertionError("sources ended before a free one")
    for source in named(changes, kin):
        if source not in tried and _begins(changes, source, messages[0]):
            found = changes.find(Conversation, conversation_id(source))
            if found is not None and found.agrees(messages):
                return source
    return free


def named(changes: Changes, kin: str) -> Iterator[str]:
    """The sources of every conversation whose source starts with `kin`, oldest first."""
    for event in changes.scan((Conversation.Started.TOPIC,)):
        if isinstance(event, Conversation.Started) and event.source.startswith(kin):
            yield event.source


def _begins(changes: Changes, source: str, first: Observed) -> bool:
    """Whether the conversation may begin with the message `first`, from its first events (one
    query; True when they hold no message with text yet, so the whole is read)."""
    for event in changes.first_events(conversation_id(source), FIRST_EVENTS):
        if isinstance(event, Conversation.MessageObserved) and event.text:
            return same_message(event.source_id, fingerprint(event.speaker, event.text), first)
    return True
