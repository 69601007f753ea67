"""Importers: other people's conversations into the ledger as observed messages (no model calls)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from domain.application import Mind
from domain.clock import parse_time
from domain.conversation import Observed
from domain.errors import InvalidInputError

BATCH = 500

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
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise InvalidInputError(f"{path} is not a readable LoCoMo JSON file ({e})") from None
    if not isinstance(data, list) or not all("conversation" in s for s in data):
        raise InvalidInputError(f"{path} does not look like locomo10.json (a list of samples)")
    return data


def locomo_messages(sample: dict[str, Any]) -> Iterator[Observed]:
    """Every turn of one sample, in session order; image turns keep their caption."""
    conv = sample["conversation"]
    sessions = sorted(
        (int(k.split("_")[1]), k)
        for k in conv
        if k.startswith("session_") and not k.endswith("date_time")
    )
    for _, key in sessions:
        said_at = parse_locomo_time(conv[f"{key}_date_time"])
        for turn in conv[key]:
            caption = turn.get("blip_caption")
            text = turn.get("text", "")
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
    done = []
    for s in samples:
        conv = s["conversation"]
        messages = list(locomo_messages(s))  # validated before anything is written
        added, skipped = record(
            mind,
            f"locomo/{s['sample_id']}",
            [conv["speaker_a"], conv["speaker_b"]],
            iter(messages),
            progress,
        )
        done.append({"sample": s["sample_id"], "added": added, "skipped": skipped})
    return done


def chat_messages(path: Path) -> Iterator[Observed]:
    """A JSONL transcript: one {"role", "content", "time"?} object per line."""
    try:
        lines = path.read_text().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise InvalidInputError(f"cannot read {path} as UTF-8 text ({e})") from None
    base = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            role, content = str(obj["role"]), str(obj["content"])
        except (ValueError, KeyError, TypeError):
            raise InvalidInputError(
                f'{path}:{n} is not a JSON object with "role" and "content"'
            ) from None
        said_at = parse_time(str(obj["time"])) if obj.get("time") else base
        yield Observed(role, content, said_at, f"{path.name}:{n}")


def import_chat(
    mind: Mind, path: Path, progress: Callable[[int], None] | None = None
) -> dict[str, Any]:
    """Import a JSONL transcript (validated fully before anything is written)."""
    messages = list(chat_messages(path))
    added, skipped = record(
        mind, f"chat/{path.name}", sorted({m.speaker for m in messages}), iter(messages), progress
    )
    return {"source": f"chat/{path.name}", "added": added, "skipped": skipped}
