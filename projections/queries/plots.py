"""Pictures of the reports (matplotlib, offline, no display needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def plot_report(name: str, columns: list[str], rows: list[tuple[Any, ...]], out: Path) -> Path:
    """Draw a report as a PNG: events or commitments per day, one line per type or origin."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series_col = "type" if name == "activity" else "origin"
    value_col = "events" if name == "activity" else "opened"
    idx_day, idx_series = columns.index("day"), columns.index(series_col)
    idx_value = columns.index(value_col)
    series: dict[str, tuple[list[Any], list[Any]]] = {}
    for row in rows:
        days, values = series.setdefault(str(row[idx_series]), ([], []))
        days.append(row[idx_day])
        values.append(row[idx_value])
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for label, (days, values) in sorted(series.items()):
        ax.plot(days, values, marker="o", label=label)
    ax.set_title(f"mind report {name}: {value_col} per day")
    ax.set_xlabel("day")
    ax.set_ylabel(value_col)
    if series:
        ax.legend(fontsize="small")
    fig.autofmt_xdate()
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out
