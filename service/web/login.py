"""One-time login links (`mind open`): a nonce the page exchanges once for the mind's token.

The nonce lives only in the server's memory, is used at most once and expires after
`LIFETIME_S`; it travels in the URL's fragment, which browsers never send to a server, so it
reaches no log. The page keeps the token in sessionStorage and sends it as a bearer header
(no cookie, so no cross-site request can carry it).
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

LIFETIME_S = 120.0


@dataclass
class LoginNonces:
    """Nonces issued for one server: nonce -> (mind name, token, expiry)."""

    clock: Callable[[], float] = time.monotonic
    _issued: dict[str, tuple[str, str, float]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def issue(self, mind: str, token: str) -> str:
        """A new single-use nonce that stands for `token` of `mind`."""
        nonce = secrets.token_urlsafe(24)
        with self._lock:
            self._drop_expired()
            self._issued[nonce] = (mind, token, self.clock() + LIFETIME_S)
        return nonce

    def redeem(self, nonce: str) -> tuple[str, str] | None:
        """(mind, token) for a live nonce, which is spent; None for any other."""
        with self._lock:
            self._drop_expired()
            found = self._issued.pop(nonce, None)
        return (found[0], found[1]) if found else None

    def _drop_expired(self) -> None:
        now = self.clock()
        for nonce in [n for n, v in self._issued.items() if v[2] <= now]:
            del self._issued[nonce]
