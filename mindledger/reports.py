"""Named reports over the read models (as rows or a PNG picture) and the read-model tables
exported as Parquet or CSV files (`mind report`, `mind export --format parquet|csv`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from mindledger.compose import Home, read_model
from mindledger.domain.errors import InvalidInputError
from mindledger.output_paths import (
    OutputPathError,
    check_export_folder,
    check_output,
    click_name,
    output_file,
    output_folder,
    output_path,
    refuse_home_file,
    refuse_overwrite,
)
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
    """Draw a named report as a PNG at `out` (default `report-NAME.png`; a file replaced only
    once it is whole, a FIFO, device or `-` written, a symbolic link refused: `output_paths`);
    what `mind report NAME --format png --json` prints."""
    from mindledger.projections.queries.plots import plot_report

    path = out or Path(f"report-{name}.png")
    refuse_home_file(home, path, "out")
    check_output(path, "out")
    columns, rows = report_table(home, name)
    with output_path(path, "out") as temp:
        plot_report(name, columns, rows, temp)
    return {"report": name, "format": "png", "path": str(path)}


# The text of a report's columns and rows in a front-end's format (CSV, JSON, a table).
Render = Callable[[list[str], list[tuple[Any, ...]]], str]


def report_to_file(home: Home, name: str, out: Path, fmt: str, render: Render) -> dict[str, Any]:
    """Write a named report to `out` as the text `render` makes of it (in `fmt`, which the
    result names), as `report_png` writes its picture (what `mind report NAME --format csv
    --out FILE --json` prints)."""
    refuse_home_file(home, out, "out")
    check_output(out, "out")
    columns, rows = report_table(home, name)
    text = render(columns, rows)  # made before anything is written
    with output_file(out, "out") as file:
        file.write(text.encode("utf-8", "surrogateescape"))
    return {"report": name, "format": fmt, "path": str(out), "rows": len(rows)}


def export_tables(
    home: Home, folder: Path, fmt: str = "parquet", force: bool = False
) -> dict[str, Any]:
    """Write every read-model table into `folder` as Parquet or CSV files (what `mind export
    --format parquet|csv --json` prints); files of those names already there are refused
    unless `force`, and then each is replaced only once the new one is whole."""
    from mindledger.projections.engine.schema import TABLES
    from mindledger.projections.queries import analytics

    if fmt not in TABLE_FORMATS:
        raise InvalidInputError(f"format {fmt!r} is not one of {', '.join(TABLE_FORMATS)}")
    check_export_folder(home, folder, "folder")
    names = [f"{table}.{fmt}" for table in TABLES]
    refuse_overwrite(folder, names, "folder", force)
    for name in names:
        check_output(folder / name, "folder")  # a link or a folder of that name: refused first
    written = []
    # All the files or none: written into a temporary folder, moved into place once whole.
    with read_model(home) as con, output_folder(folder, "folder") as temp:
        for table, name in zip(TABLES, names, strict=True):
            try:
                analytics.copy_table(con, table, temp / name, fmt)
            except analytics.QueryError as e:  # named by the file asked for, not the temp
                raise OutputPathError(f"cannot write {click_name(folder / name)!r}: {e}") from None
            written.append(folder / name)
    return {"folder": str(folder), "format": fmt, "files": [str(p) for p in written]}
