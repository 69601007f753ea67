"""Bearer tokens: one per mind, kept in `HOME/server-token` (mode 0600), compared in constant
time. A mind's token opens that mind only."""

from __future__ import annotations

import hmac
import os
import secrets
from pathlib import Path

from mindledger.domain.errors import MindError
from mindledger.server_files import TOKEN_FILE

TOKEN_BYTES = 32


class TokenFileError(MindError):
    """Raised when a home's server-token file cannot be read or made safely."""


def token_path(home: Path) -> Path:
    """Where a home keeps its token."""
    return home / TOKEN_FILE


def ensure_token(home: Path) -> str:
    """The home's token, made on first use (0600, created exclusively so two servers starting
    at once agree on one token)."""
    path = token_path(home)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return read_token(home)
    except OSError as e:
        raise TokenFileError(f"cannot create {path}: {e.strerror or e}") from None
    token = secrets.token_urlsafe(TOKEN_BYTES)
    with os.fdopen(fd, "w") as f:
        f.write(token + "\n")
    return token


def read_token(home: Path) -> str:
    """The token kept in the home (TokenFileError when missing, empty or open to others)."""
    path = token_path(home)
    try:
        mode = path.stat().st_mode & 0o777
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError) as e:
        raise TokenFileError(f"cannot read {path}: {e}") from None
    if mode & 0o077:
        raise TokenFileError(
            f"{path} can be read by other users (mode {mode:o}); run `chmod 600 {path}`"
        )
    if len(text) < 16:
        raise TokenFileError(f"{path} holds no usable token; delete it to make a new one")
    return text


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
