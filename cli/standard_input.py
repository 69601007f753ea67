"""How `mind turn -` decodes its standard input, the same in-process and through a server."""

from __future__ import annotations

import codecs
import io

BOM = "\ufeff"


def decoded(raw: bytes, encoding: str | None, errors: str | None = "strict") -> str:
    """`raw` in `encoding` (UTF-8 when none), newlines as in any text file. A UTF-8 byte-order
    mark (Notepad, PowerShell) is not part of the text, as `mind import chat` reads it."""
    encoding = encoding or "utf-8"
    if codecs.lookup(encoding).name == "utf-8":
        encoding = "utf-8-sig"  # UTF-8, less a byte-order mark at the start
    return io.TextIOWrapper(io.BytesIO(raw), encoding=encoding, errors=errors).read()
