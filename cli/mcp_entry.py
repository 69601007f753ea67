"""`mind mcp` written plainly (`[--home DIR] mcp [--home DIR] [--json]`) goes straight to the
server's own entry, as the command would hand it over (`cli.serve_cmds.hand_over`), before the
command tree is imported: half a second of CPU an MCP client waits through before its
`initialize` is answered (bench/mcp_start.py). The entry refuses what the command would, in
the same line (no mind there, a bad setting). Anything else (`--help`, another option, a
`--home` that is not a folder, an undecodable argument) returns, and click parses it."""

from __future__ import annotations

import json
import os
import sys


def plain_mcp_home(argv: list[str]) -> str | None:
    """The home folder of a plain `mind mcp` call (`--home`, else MIND_HOME, else the
    per-user data directory, as `compose.default_home`), or None for any other call."""
    home: str | None = None
    seen_mcp = seen_json = False
    rest = list(argv)
    while rest:
        token, rest = rest[0], rest[1:]
        if any(0xD800 <= ord(ch) <= 0xDFFF for ch in token):
            return None  # undecodable: the command line's own refusal
        if token == "mcp" and not seen_mcp:
            seen_mcp = True
        elif token == "--json" and seen_mcp and not seen_json:
            seen_json = True
        elif token == "--home" and rest and home is None:
            home, rest = rest[0], rest[1:]
        elif token.startswith("--home=") and home is None:
            home = token.removeprefix("--home=")
        else:
            return None
    if not seen_mcp or home == "":
        return None
    if home is None:
        if os.environ.get("MIND_HOME"):
            home = os.path.expanduser(os.environ["MIND_HOME"])
        else:
            data = os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share")
            home = os.path.join(data, "mindledger")
    return home if os.path.isdir(home) else None  # not a folder: click's words


def hand_over_plain_mcp(argv: list[str]) -> None:
    """Become the server's entry for a plain `mind mcp` call; return for any other call."""
    home = plain_mcp_home(argv)
    if home is None:
        return
    spec = json.dumps({"home": home})
    os.execv(sys.executable, [sys.executable, "-m", "mindledger.service", "mcp", spec])
