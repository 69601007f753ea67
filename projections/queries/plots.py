"""Pictures of the reports (matplotlib, offline, no display needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mindledger.domain.errors import MindError

MAX_DAY_LABELS = 12


def plot_report(name: str, columns: list[str], rows: list[tuple[Any, ...]], out: Path) -> Path:
    """Draw a report as a PNG: events or commitments per day, one line per type or origin."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series_col = "type" if name == "activity" else "origin"
    value_col = "events" if name == "activity" else "opened"
    idx_day, idx_series = columns.index("day"), columns.index(series_col)
    idx_value = columns.index(value_col)
    # Days are placed by their index among the report's days, labelled with their ISO dates:
    # matplotlib's own dates stop at years 1 and 9999 (a MIND_NOW of 0001-01-01 failed there).
    days = sorted({str(row[idx_day]) for row in rows})
    where = {day: i for i, day in enumerate(days)}
    series: dict[str, tuple[list[int], list[Any]]] = {}
    for row in rows:
        xs, values = series.setdefault(str(row[idx_series]), ([], []))
        xs.append(where[str(row[idx_day])])
        values.append(row[idx_value])
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for label, (xs, values) in sorted(series.items()):
        ax.plot(xs, values, marker="o", label=label)
    step = max(1, len(days) // MAX_DAY_LABELS)
    ax.set_xticks(range(0, len(days), step), days[::step])
    ax.set_title(f"mind report {name}: {value_col} per day")
    ax.set_xlabel("day")
    ax.set_ylabel(value_col)
    if series:
        ax.legend(fontsize="small")
    fig.autofmt_xdate()
    fig.tight_layout()
    try:
        # PNG whatever the name ends in: matplotlib would pick the format from the suffix.
        # Opened here, not by matplotlib: a name holding undecodable bytes (surrogate escapes,
        # as a non-UTF-8 command line gives them) still names a file.
        with open(out, "wb") as file:
            fig.savefig(file, dpi=100, format="png")
    except OSError as e:
        raise MindError(f"cannot write {str(out)!r}: {e.strerror or e}") from None
    finally:
        plt.close(fig)
    return out
