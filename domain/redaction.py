"""Secrets out of failure messages, before they are recorded or printed.

A provider's error can quote the request (some echo the Authorization header, a proxy may log
the URL with `?api_key=`), and a failure message goes into the ledger, the read model and the
terminal. `redact` replaces every configured secret (`secret_values`) and anything shaped like
a credential: bearer tokens, `sk-...` / `sk-ant-...` keys and a few other well-known key forms,
Authorization and api-key header values, key and token query parameters, URL passwords.
A secret is also looked for in its base64 and URL-encoded forms (a Basic header carries
base64 of `user:password`), and the userinfo of a configured URL counts as a secret.

A provider's error can also quote the prompt it refused (a proxy showing what it blocked):
`without_prompt` takes the prompt's words out, so a failure holds the provider's reason and
not a copy of memory or of a caller's messages (the prompt is recorded apart, in the turn's
context scope, which a forget that reaches its words takes; a copy in the failure stayed).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import quote, quote_plus, unquote

REDACTED = "[redacted]"
QUOTED = "[prompt]"
# Characters of the prompt a failure message must repeat to be taken for a quote of it: a
# shorter run is as likely the provider's own words (and says little of the prompt).
QUOTE_MIN = 16
# Shorter values ("1", "true", "local") would blank out ordinary words of a message.
MIN_SECRET = 8
_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET)$|PASSWORD|PASSWD", re.IGNORECASE)
# Header and parameter names whose value is always a credential, then the plain words, whose
# value is taken for one only when it looks like one (8+ characters, a digit among them).
_ALWAYS = (
    r"(?:proxy-)?authorization|x-api-key|api[-_]?key|access[-_]?token|auth[-_]?token|"
    r"secret[-_]?key|client[-_]?secret|password|passwd"
)
_VALUE = r"[^\s\"',;&}\]]"
_DONE = r"(?!\[redacted\])"  # a value replaced already (a configured secret) is left alone
# A name is a header or parameter only where it starts a word that is not part of a path: in
# `'../../etc/passwd': give ...` the quote and colon after `passwd` close a quoted path, and the
# word after them is the message's, not a password.
_NAME_START = r"(?<![\w/\\])"
_USERINFO = re.compile(r"://([^/\s:@]*):([^@\s/]+)@")
_SHAPES = [
    # Authorization: Bearer abc / "api_key": "abc" / api-key=abc / x-api-key: abc
    (
        re.compile(
            rf"(?i){_NAME_START}({_ALWAYS})([\"']?\s*[:=]\s*[\"']?){_DONE}(?>(?:(?:bearer|basic|token)\s+)?)"
            rf"{_DONE}{_VALUE}+"
        ),
        rf"\1\2{REDACTED}",
    ),
    (
        re.compile(
            rf"(?i){_NAME_START}(token|key|secret)([\"']?\s*[:=]\s*[\"']?){_DONE}(?={_VALUE}*\d){_VALUE}{{8,}}"
        ),
        rf"\1\2{REDACTED}",
    ),
    (re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}"), rf"\1 {REDACTED}"),
    (re.compile(r"\bsk-[A-Za-z0-9_-]{8,}"), REDACTED),  # OpenAI, Anthropic (sk-ant-...)
    (re.compile(r"\b(?:gh[pousr]_|github_pat_)[A-Za-z0-9_]{16,}"), REDACTED),
    (re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{8,}"), REDACTED),
    (re.compile(r"\bAIza[0-9A-Za-z_-]{30,}"), REDACTED),
    (re.compile(r"\bAKIA[0-9A-Z]{16}\b"), REDACTED),
    (re.compile(r"(://[^/\s:@]+:)[^@\s/]+@"), rf"\1{REDACTED}@"),  # scheme://user:pass@host
]


def is_secret_name(name: str) -> bool:
    """Whether an environment variable or .env key names a secret (`*_API_KEY`, `*_KEY`,
    `*_TOKEN`, `*_SECRET`, `*PASSWORD*`)."""
    return bool(_SECRET_NAME.search(name))


def url_secrets(text: str) -> list[str]:
    """The credentials in the userinfo of every URL in `text` (`scheme://user:password@host`):
    the password and `user:password` (what a Basic Authorization header carries)."""
    found: list[str] = []
    for match in _USERINFO.finditer(text):
        user, password = unquote(match.group(1)), unquote(match.group(2))
        found += [password, f"{user}:{password}", match.group(2)]
    return found


def secret_values(pairs: Iterable[tuple[str, str]]) -> list[str]:
    """The values of the secret-named pairs worth redacting, and the userinfo of any URL among
    the values (`url_secrets`), longest first (a key that holds another as a prefix is replaced
    whole)."""
    found: set[str] = set()
    for name, value in pairs:
        if is_secret_name(name):
            found.add(value)
        if "://" in value:
            found.update(url_secrets(value))
    return sorted((v for v in found if len(v) >= MIN_SECRET), key=lambda v: (-len(v), v))


def encoded_forms(secret: str) -> set[str]:
    """`secret` as it may appear in a message: itself, URL-encoded, and base64 (standard and
    URL-safe, with and without padding)."""
    forms = {secret, quote(secret, safe=""), quote_plus(secret)}
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        encoded = encode(secret.encode()).decode()
        forms.update((encoded, encoded.rstrip("=")))
    return forms


def redact(text: str, secrets: Sequence[str] = ()) -> str:
    """`text` with every value of `secrets` and every credential-shaped string replaced by
    `[redacted]`."""
    forms = {
        form for secret in secrets if len(secret) >= MIN_SECRET for form in encoded_forms(secret)
    }
    for form in sorted(forms, key=lambda f: (-len(f), f)):
        text = text.replace(form, REDACTED)
    for pattern, replacement in _SHAPES:
        text = pattern.sub(replacement, text)
    return text


def _said(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    texts = []
    for message in messages:
        if isinstance(message.get("content"), str):
            texts.append(message["content"])
        for call in message.get("tool_calls") or ():
            function = call.get("function") if isinstance(call, Mapping) else None
            if isinstance(function, Mapping) and isinstance(function.get("arguments"), str):
                texts.append(function["arguments"])
    return texts


def without_prompt(text: str, messages: Sequence[Mapping[str, Any]]) -> str:
    """`text` (a failure message, on one line) with every run of QUOTE_MIN or more characters
    that `messages` hold, as text (its spaces run together, as a failure's are) or as JSON,
    replaced by `[prompt]`."""
    texts = _said(messages)
    if not texts or len(text) < QUOTE_MIN:
        return text
    sent = [
        "\x00".join(" ".join(t.split()) for t in texts),
        " ".join(json.dumps(list(messages), ensure_ascii=False, default=str).split()),
        " ".join(json.dumps(list(messages), default=str).split()),
    ]
    quoted = [False] * len(text)
    for start in range(len(text) - QUOTE_MIN + 1):
        window = text[start : start + QUOTE_MIN]
        if any(window in form for form in sent):
            quoted[start : start + QUOTE_MIN] = [True] * QUOTE_MIN
    kept: list[str] = []
    for n, ch in enumerate(text):
        if not quoted[n]:
            kept.append(ch)
        elif n == 0 or not quoted[n - 1]:
            kept.append(QUOTED)
    return "".join(kept)
