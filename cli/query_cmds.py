"""Analytics commands: query, report, export."""

from __future__ import annotations

import contextlib
import csv
import io
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from mindledger.cli.arguments import ExportFolder, GivenPath
from mindledger.cli.floor import opened
from mindledger.cli.output import (
    OutputFailedError,
    echo,
    emit_json,
    json_text,
    path_text,
    table_text,
    write_out,
)
from mindledger.compose import Home
from mindledger.domain.errors import InvalidInputError
from mindledger.output_paths import names_standard_output
from mindledger.reports import REPORT_NAMES
from mindledger.safe_text import for_terminal


def _text(columns: list[str], rows: list[tuple[Any, ...]], fmt: str) -> str:
    """The rows as printed in `fmt` (json, nl, csv or table), ending in a newline."""
    from mindledger.results_files import Table

    if fmt == "json":  # the rows as `MindLedger.query` / `MindLedger.report` give them
        from mindledger.results_ledger import QueryRows

        shown = QueryRows.model_validate(Table(columns=columns, rows=rows).records())
        return json_text(shown.model_dump(mode="json")) + "\n"
    if fmt == "nl":
        return "".join(
            json_text(record, indent=None) + "\n"
            for record in Table(columns=columns, rows=rows).records()
        )
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows(rows)
        return for_terminal(buffer.getvalue())
    return table_text(Table(columns=columns, rows=rows).records(), columns, "(no rows)")


def _print(columns: list[str], rows: list[tuple[Any, ...]], fmt: str) -> None:
    write_out(_text(columns, rows, fmt), nl=False)


FORMATS = [
    click.option("--json", "fmt", flag_value="json", default=True, help="JSON array (default)."),
    click.option("--nl", "fmt", flag_value="nl", help="One JSON object per line."),
    click.option("--csv", "fmt", flag_value="csv", help="CSV with a header row."),
    click.option("--table", "fmt", flag_value="table", help="An aligned text table."),
]


def formats(fn: Any) -> Any:
    """Add the output-format flags."""
    for option in reversed(FORMATS):
        fn = option(fn)
    return fn


class FiniteSeconds(click.FloatRange):
    """A number of seconds in range; nan passes every comparison, so it is refused by name."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        seconds = super().convert(value, param, ctx)
        if not math.isfinite(seconds):
            self.fail(f"{value!r} is not a number of seconds over 0", param, ctx)
        return seconds


@click.command()
@click.argument("sql")
@click.option(
    "-p",
    "--param",
    "params",
    multiple=True,
    type=(str, str),
    metavar="NAME VALUE",
    help="A named parameter, used in SQL as $NAME.",
)
# The limits are settings (mindledger/settings.py: MIND_QUERY_*, .env, config.json); a flag wins.
@click.option(
    "--timeout",
    "seconds",
    type=FiniteSeconds(0, 86_400, min_open=True),
    help="Stop the query after this many seconds (default 30; setting MIND_QUERY_TIMEOUT).",
)
@click.option(
    "--max-rows",
    type=click.IntRange(1),
    help="Refuse a result with more rows (default 100000; setting MIND_QUERY_MAX_ROWS).",
)
@click.option(
    "--max-bytes",
    type=click.IntRange(1),
    help="Refuse a result larger than this, its values counted as text (default 64 MiB; "
    "setting MIND_QUERY_MAX_BYTES).",
)
@formats
@click.pass_obj
def query(
    home: Home,
    sql: str,
    params: tuple[tuple[str, str], ...],
    seconds: float | None,
    max_rows: int | None,
    max_bytes: int | None,
    fmt: str,
) -> None:
    """Run read-only SQL over the read models (tables: events, commitments, concepts, ...).

    A query runs at most --timeout seconds and returns at most --max-rows rows and --max-bytes
    bytes; past a limit it stops with a one-line error and prints nothing.

    Example:

        mind query "SELECT type, count(*) AS n FROM events GROUP BY type"

        mind query 'SELECT cid, text FROM commitments WHERE origin = $o' -p o owner --table
    """
    found = opened(home).query_table(
        sql, dict(params), seconds=seconds, max_rows=max_rows, max_bytes=max_bytes
    )
    _print(found.columns, found.rows, fmt)


@click.command()
@click.argument("name", type=click.Choice(REPORT_NAMES))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json", "csv", "png"]),
    default="table",
    show_default=True,
)
@click.option(
    "--out",
    type=GivenPath(dir_okay=False, allow_dash=True, path_type=Path),
    help="Write the report to this file in --format instead of printing it (- is standard "
    "output; png's default: report-NAME.png). A file is replaced whole; a FIFO or device is "
    "written, and so is a symbolic link to one (/dev/stdout); any other link is refused.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print JSON: the rows; with --out or png, what was written (the file keeps --format).",
)
@click.pass_obj
def report(home: Home, name: str, fmt: str, out: Path | None, as_json: bool) -> None:
    """A named report: `commitments` (opened/closed per day by origin, median hours to close)
    or `activity` (events per day by type).

    Example:

        mind report activity --format png --out activity.png

        mind report commitments --format csv --out commitments.csv
    """
    to_stdout = out is not None and names_standard_output(out)  # `-` or `/dev/stdout`
    if fmt == "png":
        if as_json and to_stdout:
            raise InvalidInputError("--json and --out - would mix JSON with the picture: drop one")
        done = opened(home).report_png(name, out).model_dump(mode="json")
    elif out is not None and not to_stdout:
        render = lambda cols, rows: _text(cols, rows, fmt)  # noqa: E731
        done = opened(home).report_file(name, out, fmt, render).model_dump(mode="json")
    else:
        table = opened(home).report_table(name)
        _print(table.columns, table.rows, "json" if as_json else fmt)
        return
    if as_json:
        emit_json(done)
    elif not to_stdout:
        echo(f"wrote {path_text(done['path'])}")


@click.command(name="export")
@click.argument("folder", type=ExportFolder())
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["parquet", "csv", "jsonl", "md"]),
    default="parquet",
    show_default=True,
    help="parquet/csv: the read-model tables; jsonl: the whole ledger, self-verifying "
    "(ledger.jsonl); md: a readable transcript (transcript.md).",
)
@click.option(
    "--force",
    is_flag=True,
    help="Replace the files of an earlier export in FOLDER (without it they are refused).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def export(home: Home, folder: Path, fmt: str, force: bool, as_json: bool) -> None:
    """Export every read-model table into FOLDER as Parquet or CSV files, or the ledger itself.

    `--format jsonl` writes the whole ledger with every hash (check it with `mind verify
    --export`, bring it back with `mind import ledger`); `--format md` a readable transcript.

    FOLDER is created if need be; other files in it are left alone. A file the export would
    write that is there already (an earlier export) is refused unless --force, and then
    replaced only once the new one is whole. A symbolic link in its place is always refused.

    Example:

        mind export --format csv ./mind-export

        mind export --format jsonl --force ./backup
    """
    if fmt in ("jsonl", "md"):
        from mindledger.cli.export_cmds import TerminalBar, echo_export

        with TerminalBar(not as_json) as bar:
            exported = opened(home).export(folder, fmt, force, progress=bar)
        done = exported.model_dump(mode="json")
        with _written_anyway(f"to {done['file']} ({done['events']} events)"):
            emit_json(done) if as_json else echo_export(done)
        return
    done = opened(home).export_tables(folder, fmt, force).model_dump(mode="json")
    with _written_anyway(f"to {folder} ({len(done['files'])} files)"):
        if as_json:
            emit_json(done)
            return
        echo(f"wrote {len(done['files'])} files to {path_text(folder)}")


@contextlib.contextmanager
def _written_anyway(where: str) -> Iterator[None]:
    """A stdout that fails after the export was written says so, and where (it is whole: there
    is no need to run it again)."""
    try:
        yield
    except OutputFailedError as e:
        raise e.saying(f"; the export was written all the same {for_terminal(where)}") from None


def register(group: click.Group) -> None:
    """Add these commands to the `mind` group."""
    for command in (query, report, export):
        group.add_command(command)
