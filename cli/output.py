"""Printing: JSON for programs, aligned text for people, and nothing a terminal would obey
(the rules are the floor's, `mindledger.safe_text`; this module only writes through click)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

from mindledger.safe_text import configured_secrets, error_text, for_terminal, json_text, plain

__all__ = ["configured_secrets", "echo", "emit_json", "error_text", "json_text", "plain", "table"]


def echo(message: Any = None, nl: bool = True, err: bool = False) -> None:
    """`click.echo`, made safe for a terminal (`for_terminal`)."""
    click.echo(None if message is None else for_terminal(str(message)), nl=nl, err=err)


def emit_json(data: Any) -> None:
    """Print one JSON document (`json_text`); a floor result as its JSON dump."""
    dump = getattr(data, "model_dump", None)  # duck-typed: this module never imports pydantic
    click.echo(json_text(dump(mode="json") if dump is not None else data))


def table(rows: Sequence[dict[str, Any]], columns: Sequence[str], empty: str) -> None:
    """Print rows as a plain aligned table, or `empty` when there are none."""
    if not rows:
        echo(empty)
        return
    cells = [[_cell(r.get(c)) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    echo("  ".join(c.upper().ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip())
    for row in cells:
        echo("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip())


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}"
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value) or "-"
    text = for_terminal(str(value).replace("\n", " "))
    return text if len(text) <= 60 else text[:57] + "..."
