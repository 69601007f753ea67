"""The `mind` program: a call a running server can take goes there (`cli.fast_path`, standard
library and click only); anything else loads the whole command tree (`cli.group`).

Nothing heavy may be imported at module level here: `python -X importtime -c 'import cli.main'`
shows what the fast path pays before it decides."""

from __future__ import annotations

import sys
from typing import Any


def main() -> None:
    """Console-script entry point."""
    from mindledger.cli.fast_path import run_via_server

    code = run_via_server(sys.argv[1:])
    if code is not None:
        raise SystemExit(code)
    from mindledger.cli.group import mind

    mind(prog_name="mind")


def __getattr__(name: str) -> Any:
    """`from mindledger.cli.main import mind` (tests, scripts) loads the command tree on use."""
    if name in ("mind", "MindGroup"):
        from mindledger.cli import group

        return getattr(group, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
