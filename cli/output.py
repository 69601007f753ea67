"""Printing: JSON for programs, aligned text for people."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import click


def plain(value: Any) -> Any:
    """A JSON-ready form of values DuckDB returns (times as ISO-8601, decimals as numbers)."""
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if hasattr(value, "as_integer_ratio"):
        return float(value)
    return str(value)


def emit_json(data: Any) -> None:
    """Print one JSON document."""
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=plain))


def table(rows: Sequence[dict[str, Any]], columns: Sequence[str], empty: str) -> None:
    """Print rows as a plain aligned table, or `empty` when there are none."""
    if not rows:
        click.echo(empty)
        return
    cells = [[_cell(r.get(c)) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    click.echo("  ".join(c.upper().ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip())
    for row in cells:
        click.echo("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip())


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}"
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value) or "-"
    text = str(value).replace("\n", " ")
    return text if len(text) <= 60 else text[:57] + "..."
