"""Text made safe to show: nothing a terminal would obey, no secret, one line for an error.

Every front-end prints through these: a reply, a recalled text or a listing may hold whatever a
model or an import put in the ledger, and an escape sequence (colours, cursor moves, an OSC
window title, C1 controls, `\\r`, BEL, backspace) or a direction override would then act on the
terminal. Those characters are written out visibly (`\\x1b`, `\\u202e`); JSON escapes them as
`\\u001b`, so it stays valid and faithful. The ledger keeps the text as it was.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from pathlib import Path
from typing import Any

from mindledger.domain.redaction import redact, secret_values
from mindledger.domain.text import HIDDEN_BEYOND_C0, show_hidden

# Lone surrogates: what a non-UTF-8 byte in a path (or any argument) becomes in Python. No
# terminal encoding can write them (click.echo would raise UnicodeEncodeError), so they are
# written out as the escape Python shows for them (`\udcff`).
_SURROGATE = re.compile("[\ud800-\udfff]")


def for_terminal(text: str, keep: str = "\n\t") -> str:
    """`text` with every control, invisible and direction-changing character but those in
    `keep` (newline and tab) and every lone surrogate written out visibly."""
    shown = show_hidden(text, keep=keep)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", shown)


def _json_escape(ch: str) -> str:
    data = ch.encode("utf-16-be")
    return "".join(f"\\u{int.from_bytes(data[i : i + 2]):04x}" for i in range(0, len(data), 2))


def json_text(data: Any, indent: int | None = 2) -> str:
    """One JSON document; besides what JSON escapes itself (C0 controls), C1 controls, line
    separators and invisible or direction-changing characters are escaped as `\\uXXXX`."""
    text = json.dumps(data, indent=indent, ensure_ascii=False, default=plain)
    # Inside strings JSON escaped every C0 control already, so only the rest is looked for: a
    # pattern with the newline matched each line of indentation (172,000 calls, half of a
    # `mind threads --json` of 7,500 threads).
    if HIDDEN_BEYOND_C0.search(text) is None:
        return text
    return HIDDEN_BEYOND_C0.sub(lambda m: _json_escape(m.group()), text)


def configured_secrets(home: Path) -> list[str]:
    """The values to redact from failure messages: secret-named environment variables
    (`domain.redaction.is_secret_name`) and secret-named keys of the home's `.env`, parsed as
    the settings parse it. Used on the error path too, so an unreadable `.env` (itself the
    error being printed, perhaps) adds nothing instead of failing again."""
    from mindledger.settings import SettingError
    from mindledger.settings_sources import read_dotenv

    pairs = list(os.environ.items())
    with contextlib.suppress(SettingError, OSError):  # OSError: a home name too long, say
        pairs += list(read_dotenv(home / ".env").items())
    return secret_values(pairs)


def error_text(message: str, home: Path | None) -> str:
    """A failure message as printed: secrets redacted, safe for a terminal, and on one line (a
    line break in it, say from a file name, is written out as `\\n`)."""
    secrets = configured_secrets(home) if home is not None else secret_values(os.environ.items())
    return for_terminal(redact(message, secrets), keep="\t")


def plain(value: Any) -> Any:
    """A JSON-ready form of values DuckDB returns (times as ISO-8601, decimals as numbers)."""
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if hasattr(value, "as_integer_ratio"):
        return float(value)
    return str(value)
