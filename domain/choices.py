"""The closed word lists a caller may choose from, apart from the aggregates that use them: a
front-end offers them as an option's choices without loading pydantic (`mind --help` stays
light). Each aggregate's `Literal` type spells the same words."""

from __future__ import annotations

ORIGINS: tuple[str, ...] = ("user", "assistant", "owner", "autonomy")  # a commitment's
VERDICTS: tuple[str, ...] = ("answered", "superseded", "dissolved", "abandoned")  # a thread's
KINDS: tuple[str, ...] = ("identity", "commitment", "concept", "thread", "import")  # `mind log`
# A knowledge item's validation state, freshness class and reuse policy.
STATES: tuple[str, ...] = (
    "unverified",
    "plausible",
    "supported",
    "verified",
    "disputed",
    "retracted",
)
FRESHNESS: tuple[str, ...] = ("immutable", "stable", "dynamic", "volatile")
POLICIES: tuple[str, ...] = ("always", "reuse-unless-stale", "revalidate-if-stale", "never-direct")

# A knowledge item's confidence is kept in parts per million (`knowledge.py`).
PPM = 1_000_000
