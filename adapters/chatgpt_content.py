"""The text of one ChatGPT export message (`content` by `content_type`).

Text parts are kept; a non-text part (an image, an audio clip, a file) becomes a placeholder
like "[image]" and is counted; the assistant's reasoning ("thoughts", "reasoning_recap") is
skipped and counted: it is not what was said.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

PLACEHOLDERS = {
    "image_asset_pointer": "[image]",
    "audio_asset_pointer": "[audio]",
    "real_time_user_audio_video_asset_pointer": "[audio/video]",
    "video_container_asset_pointer": "[video]",
}
REASONING = ("thoughts", "reasoning_recap")
NON_TEXT = "non-text parts kept as placeholders"


def message_content(content: Any, notes: Counter[str]) -> str | None:
    """The message's text ('' when it has none), or None when it is not imported."""
    if not isinstance(content, dict):
        return ""
    kind = content.get("content_type")
    if kind in REASONING:
        notes["reasoning summaries skipped"] += 1
        return None
    if kind == "user_editable_context":
        # Custom instructions: what the user said about themselves and how to answer.
        fields = (content.get("user_profile"), content.get("user_instructions"))
        return "\n\n".join(f for f in fields if isinstance(f, str) and f.strip())
    parts = content.get("parts")
    if isinstance(parts, list):
        return "\n".join(_part(p, notes) for p in parts if p != "")
    text = content.get("text")
    if isinstance(text, str):
        return text
    notes[NON_TEXT] += 1
    return f"[{str(kind)[:40]}]"


def _part(part: Any, notes: Counter[str]) -> str:
    if isinstance(part, str):
        return part
    if isinstance(part, dict):
        text = part.get("text")
        if part.get("content_type") == "audio_transcription" and isinstance(text, str):
            return text
        kind = str(part.get("content_type") or "attachment")[:40]
        notes[NON_TEXT] += 1
        return PLACEHOLDERS.get(kind, f"[{kind}]")
    notes[NON_TEXT] += 1
    return "[attachment]"
