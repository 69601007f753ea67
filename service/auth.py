"""Bearer tokens: one per mind, kept in `HOME/server-token` (mode 0600), compared in constant
time. A mind's token opens that mind only."""

from __future__ import annotations

import hmac


def bearer(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer TOKEN` header (None when absent or another kind)."""
    if not authorization:
        return None
    kind, _, value = authorization.strip().partition(" ")
    value = value.strip()
    return value if kind.lower() == "bearer" and value else None


def same_token(given: str, expected: str) -> bool:
    """Constant-time comparison (the time taken says nothing about how much matched)."""
    return hmac.compare_digest(given.encode("utf-8", "replace"), expected.encode("utf-8"))
