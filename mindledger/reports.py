"""Named reports over the read models (as rows or a PNG picture) and the read-model tables
exported as Parquet or CSV files (`mind report`, `mind export --format parquet|csv`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mindledger.compose import Home, read_model
from mindledger.domain.errors import InvalidInputError
from mindledger.output_paths import refuse_home_file, replaced_on_success
from mindledger.queries import records

# The names of `projections.queries.analytics.REPORTS`, kept here so a front-end can offer them
# without importing DuckDB; an unknown name is refused there in its own words.
REPORT_NAMES = ("commitments", "activity")
TABLE_FORMATS = ("parquet", "csv")


def report_table(home: Home, name: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    """A named report's columns and rows: `commitments` (opened/closed per day by origin,
    median hours to close) or `activity` (events per day by type)."""
    from mindledger.projections.queries.analytics import report

    with read_model(home) as con:
        return report(con, name)


def report_records(home: Home, name: str) -> list[dict[str, Any]]:
    """A named report, one object per row (what `mind report NAME --json` prints)."""
    return records(*report_table(home, name))


def report_png(home: Home, name: str, out: Path | None = None) -> dict[str, Any]:
    """Draw a named report as a PNG at `out` (default `report-NAME.png`), the file replaced
    only once it is whole (what `mind report NAME --format png --json` prints)."""
    from mindledger.projections.queries.plots import plot_report

    path = out or Path(f"report-{name}.png")
    refuse_home_file(home, path, "--out")
    columns, rows = report_table(home, name)
    with replaced_on_success(path) as temp:
        plot_report(name, columns, rows, temp)
    return {"report": name, "format": "png", "path": str(path)}


def export_tables(home: Home, folder: Path, fmt: str = "parquet") -> dict[str, Any]:
    """Write every read-model table into `folder` as Parquet or CSV files (what `mind export
    --format parquet|csv --json` prints)."""
    from mindledger.projections.queries import analytics

    if fmt not in TABLE_FORMATS:
        raise InvalidInputError(f"format {fmt!r} is not one of {', '.join(TABLE_FORMATS)}")
    refuse_home_file(home, folder, "FOLDER")
    with read_model(home) as con:
        written = analytics.export_tables(con, folder, fmt)
    return {"folder": str(folder), "format": fmt, "files": [str(p) for p in written]}
