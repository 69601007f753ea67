"""A caller's earlier messages the mind never saw, recorded as observed (decision 0020).

A stateless client sends its whole conversation with every request. Most of it is the mind's
own turns sent back (their messages and replies, which the ledger holds) or messages an
earlier request of the same conversation already brought; the rest (a conversation begun
elsewhere, messages the client wrote in itself) the mind never saw, and is recorded as a
`Conversation.MessageObserved` in the client's conversation, so recall finds it later.

The client's conversation is named by its content, as an imported transcript is
(`domain/transcripts.py`): `client/<keyed hash of its first message>`; a message's id is a
keyed hash of its speaker and text with its occurrence among alike ones, so the same message
sent again is the same id and `Conversation.observe` skips it. What the mind holds of its own
turns is compared by content (speaker and text) with its turns' messages and replies, from
the last back until each is found (MAX_TURNS_READ at most): only messages new to the client's
conversation are looked for, so a resent history costs one read of that conversation.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any
from uuid import UUID

from mindledger.domain.application import Mind
from mindledger.domain.changes import Changes
from mindledger.domain.conversation import Conversation, Observed, conversation_id, fingerprint
from mindledger.domain.text_keys import IMPORT, TextKeys
from mindledger.domain.turn import Turn
from mindledger.domain.turn_numbers import TURN_NUMBERS_ID

CLIENT = "client/"
# The mind's own turns looked back over for a message (newest first, until every message is
# found): a message of an older turn is recorded as observed, once.
MAX_TURNS_READ = 200
# Turn numbers read per query while looking back.
TURNS_PER_READ = 20


def client_messages(
    history: Sequence[Mapping[str, Any]], keys: TextKeys, at: datetime, session: str
) -> list[tuple[str, Observed]]:
    """The caller's user and assistant messages with text, as messages to observe, each with
    its role (tool calls and results are the exchange's mechanics, not what was said). A
    named message's speaker is its name (checked: `client_chat.NAME_PATTERN`), as an imported
    transcript's speakers are; an unnamed one's its role."""
    seen: Counter[tuple[str, str]] = Counter()
    found = []
    for message in history:
        role, text = message["role"], message.get("content")
        if role not in ("user", "assistant") or not isinstance(text, str) or not text.strip():
            continue
        text = text.replace("\r\n", "\n").strip()
        name = message.get("name")
        said = f"{role}\x00{name}" if name else role  # unnamed: the id it always had
        digest = keys.keyed(IMPORT, f"client\x00{said}\x00{text}")[:32]
        source_id = f"client:{digest}:{seen[(said, text)]}"
        seen[(said, text)] += 1
        found.append((role, Observed(name or role, text, at, source_id, session=session)))
    return found


def client_source(messages: Sequence[Observed], keys: TextKeys, caller: str = "") -> str:
    """The client's conversation: named by its first message (stable as it grows) and by who
    holds it (`caller`: the request's end-user id; two users who both open with "Hi!" are two
    conversations, so one's forget never takes the other's words), a keyed hash as an imported
    transcript's name is (the name is in the clear, the id sealed)."""
    first = messages[0].source_id
    named = f"{caller}\x00{first}" if caller else first
    return f"{CLIENT}{keys.keyed(IMPORT, named)[:32]}"


def held_by_turns(mind: Mind, messages: Sequence[tuple[str, Observed]]) -> set[bytes]:
    """The fingerprints (by role and text) of `messages` that are the mind's own turns'
    messages (user) or replies (assistant), looked for from the last turn back (one read a
    turn), until each is found or MAX_TURNS_READ turns were read."""
    wanted = {fingerprint(role, m.text) for role, m in messages}
    held: set[bytes] = set()
    read, below = 0, None
    changes = Changes(mind)
    while wanted - held and read < MAX_TURNS_READ:
        numbers = changes.last_events(TURN_NUMBERS_ID, TURNS_PER_READ, below)
        if not numbers:
            break
        below = numbers[-1].originator_version
        for given in numbers:
            turn_id = getattr(given, "turn_id", None)
            if not turn_id or not wanted - held or read >= MAX_TURNS_READ:
                continue
            read += 1
            for event in mind.history_events(UUID(turn_id)):
                if isinstance(event, Turn.Started) and event.text:
                    held.add(fingerprint("user", event.text.strip()))
                elif isinstance(event, Turn.Replied) and event.reply:
                    held.add(fingerprint("assistant", event.reply.strip()))
    return held & wanted


def unseen(mind: Mind, source: str, messages: Sequence[tuple[str, Observed]]) -> list[Observed]:
    """The messages neither the client's conversation (an earlier request brought them) nor
    the mind's own turns hold (a named message the mind's turn holds by its role and text:
    the caller named a message the mind had, as it resends it)."""
    conversation = Changes(mind).find(Conversation, conversation_id(source))
    known = conversation.source_ids if conversation is not None else set()
    new = [(role, m) for role, m in messages if m.source_id not in known]
    held = held_by_turns(mind, new) if new else set()
    return [m for role, m in new if fingerprint(role, m.text) not in held]


def record_unseen(
    mind: Mind, history: Sequence[Mapping[str, Any]], session: str, caller: str = ""
) -> int:
    """Record the caller's earlier messages the mind never saw as observed in the client's
    conversation (`session`: where they came from, the route and the turn they preceded);
    returns how many were added. Those of its own turns, and those an earlier request
    brought, are not recorded again."""
    messages = client_messages(history, mind.text_keys, mind.clock(), session)
    if not messages:
        return 0
    source = client_source([m for _, m in messages], mind.text_keys, caller)
    new = unseen(mind, source, messages)
    if not new:
        return 0
    speakers = sorted({m.speaker for m in new})
    added, _ = mind.import_conversation(source, speakers, new)
    return added
