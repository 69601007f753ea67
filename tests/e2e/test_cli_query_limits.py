"""`mind query` stops at its time, row and byte limits with one line; report PNGs at any date."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import duckdb
import pytest

from mindledger.projections.engine.duckdb_files import sandboxed
from mindledger.projections.queries import analytics
from mindledger.projections.queries.analytics import QueryLimits, QueryStoppedError, run_query
from mindledger.projections.queries.plots import plot_report
from tests.conftest import Result

Cli = Callable[..., Result]
ENDLESS = "SELECT sum(range * random()) FROM range(100000000000)"


def test_a_query_past_its_time_limit_stops_with_one_line(cli: Cli, mind_home: Path) -> None:
    result = cli("query", ENDLESS, "--timeout", "0.2")

    assert result.exit_code == 1
    assert result.output == ""
    assert result.stderr == (
        "Error: the query ran longer than 0.2 s (--timeout, or the setting query_timeout) and "
        "was stopped; nothing was printed\n"
    )


@pytest.mark.parametrize(
    ("sql", "options", "message"),
    [
        ("SELECT * FROM range(11)", ["--max-rows", "10"], "10 rows (--max-rows, or the"),
        ("SELECT repeat('x', 600) FROM range(2)", ["--max-bytes", "1000"], "larger than 1000"),
    ],
)
def test_a_result_over_a_cap_is_refused_with_one_line(
    cli: Cli, mind_home: Path, sql: str, options: list[str], message: str
) -> None:
    result = cli("query", sql, *options)

    assert result.exit_code == 1
    assert result.output == ""
    assert len(result.stderr.splitlines()) == 1 and message in result.stderr


def test_a_result_at_the_cap_is_printed_whole(cli: Cli, mind_home: Path) -> None:
    result = cli("query", "SELECT range AS n FROM range(10)", "--max-rows", "10", "--nl")

    assert result.exit_code == 0
    assert result.output.splitlines() == [f'{{"n": {n}}}' for n in range(10)]


def test_the_limits_come_from_the_environment_too(
    cli: Cli, mind_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MIND_QUERY_MAX_ROWS", "3")

    result = cli("query", "SELECT * FROM range(4)")

    assert (result.exit_code, "more than 3 rows" in result.stderr) == (1, True)


class InterruptedOnce:
    """An Event whose first wait is cut short by Ctrl-C, as on a terminal."""

    def __init__(self) -> None:
        import threading

        self.inner = threading.Event()
        self.waits = 0

    def set(self) -> None:
        self.inner.set()

    def wait(self, timeout: float | None = None) -> bool:
        self.waits += 1
        if self.waits == 1:
            raise KeyboardInterrupt
        return self.inner.wait(timeout)


def test_ctrl_c_during_a_long_query_stops_it_with_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    original = analytics._Outcome

    def outcome() -> Any:
        made = original()
        made.done = InterruptedOnce()  # type: ignore[assignment]
        return made

    monkeypatch.setattr(analytics, "_Outcome", outcome)
    duckdb.connect(str(tmp_path / "empty.duckdb")).close()
    con = sandboxed(tmp_path / "empty.duckdb")

    with pytest.raises(QueryStoppedError, match=r"^the query was interrupted \(Ctrl-C\)"):
        run_query(con, ENDLESS, {}, QueryLimits(seconds=600))
    con.close()


def test_a_report_png_of_days_at_the_ends_of_the_calendar_is_drawn(tmp_path: Path) -> None:
    rows = [(date(1, 1, 1), "mind.commitment.opened", 1), (date(9999, 12, 31), "x", 2)]
    out = tmp_path / "activity.png"

    plot_report("activity", ["day", "type", "events"], rows, out)

    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_report_png_with_mind_now_in_the_year_one_is_one_line(
    cli: Cli, mind_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("MIND_NOW", "0001-01-01T00:00:00Z")

    result = cli("report", "activity", "--format", "png", "--out", str(tmp_path / "a.png"))

    assert result.exit_code == 1  # refused at start-up: MIND_NOW is kept to 1970-2999
    assert result.stderr.startswith("Error: MIND_NOW") and result.stderr.count("\n") == 1


def test_an_export_folder_named_with_a_quote_is_written(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "it's here"

    result = cli("export", str(folder), "--format", "csv")

    assert result.exit_code == 0, result.stderr
    assert (folder / "events.csv").read_text().startswith("position,")


def test_a_report_png_named_without_png_is_still_a_png(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    out = tmp_path / "activity.etc_passwd"

    result = cli("report", "activity", "--format", "png", "--out", str(out))

    assert result.exit_code == 0, result.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_report_png_that_cannot_be_written_says_so_in_one_line(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    out = tmp_path / ("x" * 300 + ".png")

    result = cli("report", "activity", "--format", "png", "--out", str(out))

    assert result.exit_code == 1
    assert result.stderr.startswith("Error: cannot write ") and result.stderr.count("\n") == 1


def test_a_report_png_named_with_undecodable_bytes_is_written_and_named(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    out = tmp_path / "activity-\udcff.png"  # `--out $'activity-\xff.png'` arrives like this

    result = cli("report", "activity", "--format", "png", "--out", str(out))

    assert result.exit_code == 0, result.stderr
    assert result.output.startswith("wrote ") and result.output.endswith("activity-\ufffd.png\n")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_an_export_that_cannot_be_written_names_the_folder_on_one_line(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "out-\n\udc80"  # a line break and an undecodable byte in the name

    result = cli("export", str(folder), "--format", "csv")

    assert result.exit_code == 1
    assert result.stderr.startswith("Error: cannot write '") and result.stderr.count("\n") == 1


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "-1", "0"])
@pytest.mark.parametrize("where", ["option", "environment"])
def test_a_query_timeout_that_is_not_a_finite_positive_number_is_refused(
    cli: Cli, mind_home: Path, monkeypatch: pytest.MonkeyPatch, value: str, where: str
) -> None:
    if where == "environment":
        monkeypatch.setenv("MIND_QUERY_TIMEOUT", value)
    args = ["--timeout", value] if where == "option" else []

    result = cli("query", "SELECT 1 AS one", *args)

    assert result.exit_code != 0 and '"one"' not in result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error: ")]
    named = "--timeout" if where == "option" else "MIND_QUERY_TIMEOUT (environment)"
    assert len(errors) == 1 and named in errors[0] and "ran longer" not in errors[0]
