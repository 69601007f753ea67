"""The server's own entry: `python -m mindledger.service serve|mcp SPEC`.

`mind serve` and `mind mcp` parse and check their arguments (click's business), then hand the
process over to this entry (`os.execv`: the same pid, streams and signals), so the command line
never imports the server and the server never imports the command line. SPEC is one JSON
object: `{"homes": [...], "host", "port", "idle_s", "allow_remote", "max_body", "cors", "json"}`
for `serve`, `{"home": ...}` for `mcp`. Errors are one `Error: ...` line and exit 1, as every
command's are.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

# The floor is imported inside each entry: `mcp` answers its client's `initialize` first.


def _say(text: str) -> None:
    from mindledger.safe_text import for_terminal

    print(for_terminal(text), flush=True)


def serve(spec: dict[str, Any]) -> None:
    """Serve the homes until SIGTERM or Ctrl-C, printing the ready line once; then end the
    process (exit 0)."""
    from mindledger.compose import Home
    from mindledger.safe_text import json_text
    from mindledger.service.cors import check_origins
    from mindledger.service.minds import Minds
    from mindledger.service.process import ServeOptions, check_bind
    from mindledger.service.process import serve as run

    options = ServeOptions(
        spec["host"],
        spec["port"],
        spec["idle_s"],
        spec["allow_remote"],
        spec["max_body"],
        cors=tuple(check_origins(spec.get("cors", []))),
    )
    check_bind(options)
    minds = Minds.open([Home.from_option(Path(p), "--home") for p in spec["homes"]])

    def announce(ready: dict[str, Any]) -> None:
        if spec["json"]:
            print(json_text(ready, indent=None), flush=True)  # one line: a launcher reads it
            return
        _say(f"Serving {', '.join(ready['minds'])} at {ready['url']} (pid {ready['pid']})")
        for name, sock in ready["sockets"].items():
            _say(f"  {name}: socket {sock or '(none: path too long)'}")
        _say("  token: `mind serve --print-token`; stop: `mind server stop` or Ctrl-C")

    run(minds, options, announce)
    # Every mind is closed (or its running turn recorded interrupted: should that fail, it
    # stays `started` with this pid and the next turn on the ledger marks it). Leave at once:
    # not waiting for a turn's thread, which may wait on its model, and not tearing the
    # interpreter down, whose final garbage collection over LiteLLM's objects took 3-4 s of a
    # stop on a loaded machine (the stop is promised within 2 s).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def mcp(spec: dict[str, Any]) -> None:
    """Serve one mind over stdio until the client closes it; a well-formed `initialize` first
    is answered before the floor and the MCP SDK are imported (`mcp_stdio.early_start`)."""
    from mindledger.service.mcp_stdio import early_start

    wire, first, answered = early_start(spec["home"])
    from mindledger.compose import Home
    from mindledger.service.mcp_server import serve_stdio

    serve_stdio(Home.from_option(Path(spec["home"]), "--home"), wire, first, answered)


def main(argv: list[str]) -> int:
    """Run `serve` or `mcp` from its SPEC; one error line and 1 on a failure."""
    if len(argv) != 3 or argv[1] not in ("serve", "mcp"):
        print("usage: python -m mindledger.service serve|mcp SPEC (run by `mind serve`)")
        return 2
    spec = json.loads(argv[2])
    home = Path(spec.get("home") or spec["homes"][0])
    try:
        (serve if argv[1] == "serve" else mcp)(spec)
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # the process boundary: one line; a traceback goes to the home's log
        from mindledger.error_report import failure_message
        from mindledger.safe_text import error_text

        print(f"Error: {error_text(failure_message(e, home), home)}", file=sys.stderr, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
