"""Importers: other people's conversations into the ledger as observed messages (no model calls)."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mindledger.adapters.import_rules import (
    TOO_DEEP,
    chat_line_id,
    chat_role,
    check_locomo_shape,
    import_bytes,
    load_json,
    message_text,
    message_time,
    skipped_reasons,
)
from mindledger.domain.application import Mind
from mindledger.domain.changes import CONFLICT_RETRIES
from mindledger.domain.conversation import ConversationTakenError, Observed
from mindledger.domain.errors import ConflictError, InvalidInputError
from mindledger.domain.import_kept import MESSAGES, noting_kept
from mindledger.domain.text import clean_text
from mindledger.domain.text_keys import IMPORT

BATCH = 500
# The sources of chat transcripts' conversations begin so (`chat/<content name>`, `chat/NAME`).
CHAT = "chat/"

__all__ = ["Observed", "import_chat", "import_locomo", "record"]


def record(
    mind: Mind,
    source: str,
    participants: list[str],
    messages: Iterator[Observed],
    progress: Callable[[int], None] | None = None,
) -> tuple[int, int]:
    """Append the messages not yet recorded for `source`; returns (added, skipped)."""
    return mind.import_conversation(source, participants, messages, progress, BATCH)


def parse_locomo_time(value: str) -> datetime:
    """LoCoMo session times look like '1:56 pm on 8 May, 2023'."""
    try:
        return datetime.strptime(value.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
    except ValueError:
        raise InvalidInputError(f"unreadable LoCoMo session time {value!r}") from None


def locomo_samples(path: Path) -> list[dict[str, Any]]:
    """The samples of a LoCoMo file."""
    data = load_json(import_bytes(path), f"{path} is not a readable LoCoMo JSON file ({{}})")
    return check_locomo_shape(data, str(path))


def locomo_messages(sample: dict[str, Any]) -> Iterator[Observed]:
    """Every turn of one sample, in session order; image turns keep their caption."""
    conv = sample["conversation"]
    sessions = sorted(
        (int(k.split("_")[1]), k)
        for k in conv
        if k.startswith("session_") and not k.endswith("date_time")
    )
    speakers = (conv.get("speaker_a"), conv.get("speaker_b"))
    for _, key in sessions:
        said_at = message_time(
            parse_locomo_time(conv[f"{key}_date_time"]), f"{sample.get('sample_id')} {key}"
        )
        for turn in conv[key]:
            where = f"{sample.get('sample_id')} {turn.get('dia_id')}"
            if turn.get("speaker") not in speakers:
                raise InvalidInputError(
                    f"{where} has speaker {turn.get('speaker')!r}, not one of the sample's "
                    f"speakers ({speakers[0]}, {speakers[1]})"
                )
            caption = turn.get("blip_caption")
            text = message_text(turn.get("text", ""), where)
            if caption:
                text = f"{text} [shares a photo: {caption}]".strip()
            yield Observed(turn["speaker"], text, said_at, turn["dia_id"], key, caption)


def import_locomo(
    mind: Mind, path: Path, sample: str | None, progress: Callable[[int], None] | None = None
) -> list[dict[str, Any]]:
    """Import one or all LoCoMo samples; returns what each import did."""
    samples = locomo_samples(path)
    if sample is not None:
        samples = [s for s in samples if s.get("sample_id") == sample]
        if not samples:
            raise InvalidInputError(f"no sample {sample!r} in {path}")
    # Every sample is validated before anything is written.
    validated = [(s, list(locomo_messages(s))) for s in samples]
    done: list[dict[str, Any]] = []
    for s, messages in validated:
        conv = s["conversation"]
        kept = [m for m in messages if m.text]
        with noting_kept(sum(d["added"] for d in done), MESSAGES):  # the samples before stay
            added, already = record(
                mind,
                f"locomo/{s['sample_id']}",
                [conv["speaker_a"], conv["speaker_b"]],
                iter(kept),
                progress,
            )
        empty = len(messages) - len(kept)
        done.append(
            {
                "sample": s["sample_id"],
                "added": added,
                "skipped": already + empty,
                "skipped_reasons": skipped_reasons(already, empty),
            }
        )
    return done


def chat_messages(path: Path) -> Iterator[Observed]:
    """A JSONL transcript: one {"role", "content", "time"?} object per line (UTF-8, a byte
    order mark allowed)."""
    try:
        lines = import_bytes(path).decode("utf-8-sig").splitlines()
    except UnicodeDecodeError as e:
        raise InvalidInputError(f"cannot read {path} as UTF-8 text ({e})") from None
    base = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    seen: Counter[tuple[str, str | None, str]] = Counter()
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        try:
            obj = json.loads(line)
            raw_role, raw_content = obj["role"], obj["content"]
        except RecursionError:  # nested past Python's stack: said as the other importers say it
            raise InvalidInputError(f"{where} is not JSON ({TOO_DEEP})") from None
        except (ValueError, KeyError, TypeError):
            raise InvalidInputError(
                f'{where} is not a JSON object with "role" and "content"'
            ) from None
        role, text = chat_role(raw_role, where), message_text(raw_content, where)
        time = str(obj["time"]) if obj.get("time") else None
        said_at = message_time(time, where) if time else base
        key = (role, time, text)
        source_id = chat_line_id(role, time, text, seen[key])
        seen[key] += 1
        yield Observed(role, text, said_at, source_id)


def chat_sources(mind: Mind, messages: list[Observed]) -> Iterator[str]:
    """Where a transcript may belong, in the order it is tried (`Mind.transcript_source`):
    `chat/<keyed hash of its first message>`, then `.../2`, `.../3`: a conversation is named
    by what it contains, and a transcript that begins like another but then differs gets the
    next name. Keyed (`TextKeys`): the name is in the clear, the message's id is sealed."""
    first = f"{CHAT}{mind.text_keys.keyed(IMPORT, messages[0].source_id)[:32]}"
    yield first
    for n in itertools.count(2):
        yield f"{first}/{n}"


def _transcript(
    mind: Mind, kept: list[Observed], speakers: list[str], progress: Callable[[int], None] | None
) -> tuple[str, int, int]:
    """Import a transcript where its content says it belongs: (source, added, skipped). A
    conversation imported before content names (under its file's name) or under a name given
    with --conversation is found too, whatever the file is called now (`transcript_source`)."""
    for _ in range(CONFLICT_RETRIES):
        source = mind.transcript_source(kept, chat_sources(mind, kept), kin=CHAT)
        try:
            added, already = mind.import_conversation(
                source, speakers, kept, progress, BATCH, same_transcript=True
            )
        except ConversationTakenError:
            continue  # a transcript that begins alike was imported meanwhile: choose again
        return source, added, already
    raise ConflictError("other imports keep taking this transcript's name; run it again")


def _named(
    mind: Mind,
    path: Path,
    name: str,
    kept: list[Observed],
    speakers: list[str],
    progress: Callable[[int], None] | None,
) -> tuple[str, int, int]:
    """Import a transcript into the conversation `chat/NAME`: a new one, or the one the
    transcript is (its same first messages: it adds the messages after them); a conversation
    that holds another transcript is refused, with nothing written."""
    source = f"{CHAT}{clean_text(name, 'conversation name', 200, single_line=True)}"
    try:
        added, already = mind.import_conversation(
            source, speakers, kept, progress, BATCH, same_transcript=True
        )
    except ConversationTakenError as e:
        raise InvalidInputError(
            f"{path} is not conversation {name!r}: its message {e.position} is not the "
            f"conversation's message {e.position}, so it is another transcript (nothing was "
            "imported); import it without --conversation, or name a new conversation"
        ) from None
    return source, added, already


def import_chat(
    mind: Mind,
    path: Path,
    progress: Callable[[int], None] | None = None,
    conversation: str | None = None,
) -> dict[str, Any]:
    """Import a JSONL transcript (validated fully before anything is written).

    A transcript is the conversation it contains, whatever the file is called or wherever it
    lies: the same transcript again adds nothing, one that goes on from an imported one (the
    same first messages, then more) adds its new messages to it, and one that begins like an
    imported one but then differs is another conversation (`chat_sources`). `conversation`
    names the conversation instead (`chat/NAME`): a new one, or the one the transcript is (the
    same first messages); one holding another transcript is refused (`_named`). A transcript
    with no message is refused (nothing is recorded)."""
    messages = list(chat_messages(path))
    kept = [m for m in messages if m.text]
    if not kept:
        raise InvalidInputError(
            f"{path} holds no message with text; give a transcript of "
            '{"role", "content"} lines (nothing was imported)'
        )
    speakers = sorted({m.speaker for m in kept})
    if conversation is not None:
        source, added, already = _named(mind, path, conversation, kept, speakers, progress)
    else:
        source, added, already = _transcript(mind, kept, speakers, progress)
    empty = len(messages) - len(kept)
    return {
        "source": source,
        "file": str(path),
        "added": added,
        "skipped": already + empty,
        "skipped_reasons": skipped_reasons(already, empty),
    }
