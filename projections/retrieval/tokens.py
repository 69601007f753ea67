"""Counting tokens the same way everywhere, without a tokenizer download.

The count is an estimate (about 4 characters per token for English, the usual rule for GPT-style
BPE vocabularies), but it is applied to exactly the text that is rendered, so a budget is a hard
bound on that estimate. A model-exact count would need each model's tokenizer, which is not
available offline for every model.
"""

from __future__ import annotations

import math

CHARS_PER_TOKEN = 4


def count_tokens(text: str) -> int:
    """Estimated tokens in `text`."""
    return math.ceil(len(text) / CHARS_PER_TOKEN) if text else 0


def clip_to_tokens(text: str, tokens: int) -> str:
    """The longest prefix of `text` (ending in an ellipsis) that fits in `tokens`."""
    if count_tokens(text) <= tokens:
        return text
    keep = max(tokens * CHARS_PER_TOKEN - 1, 0)
    return text[:keep] + "…" if keep else ""
