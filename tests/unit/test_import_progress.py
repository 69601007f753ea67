"""Long work (imports, exports, replays) shows a progress bar on a terminal's stderr, drawn from
the floor's `progress(done, total, doing)` calls, and nothing anywhere else."""

from __future__ import annotations

import io

import pytest

from mindledger.cli.export_cmds import TerminalBar
from mindledger.cli.import_cmds import IMPORT_PROGRESS_FROM


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_long_import_draws_a_bar_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    stderr = Terminal()
    monkeypatch.setattr("sys.stderr", stderr)

    with TerminalBar(True, IMPORT_PROGRESS_FROM) as bar:
        bar(0, 2000, "importing")
        bar(1000, 2000, "importing")

    assert "importing" in stderr.getvalue()


@pytest.mark.parametrize(("tty", "enabled", "total"), [(False, True, 5000), (True, False, 5000)])
def test_no_bar_off_a_terminal_with_json_or_for_a_short_file(
    monkeypatch: pytest.MonkeyPatch, tty: bool, enabled: bool, total: int
) -> None:
    stderr = Terminal() if tty else io.StringIO()
    monkeypatch.setattr("sys.stderr", stderr)

    with TerminalBar(enabled, IMPORT_PROGRESS_FROM) as bar:
        bar(0, total, "importing")
        bar(total, total, "importing")

    assert stderr.getvalue() == ""


def test_no_bar_for_a_short_import_even_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    stderr = Terminal()
    monkeypatch.setattr("sys.stderr", stderr)

    with TerminalBar(True, IMPORT_PROGRESS_FROM) as bar:
        bar(0, IMPORT_PROGRESS_FROM - 1, "importing")
        bar(10, IMPORT_PROGRESS_FROM - 1, "importing")

    assert stderr.getvalue() == ""


def test_the_floor_tells_a_plain_callable_how_an_export_goes(tmp_path: object) -> None:
    from pathlib import Path

    import mindledger

    home = Path(str(tmp_path)) / "mind"
    mindledger.init(home, "Echo")
    told: list[tuple[int, int, str]] = []

    with mindledger.open(home) as mind:
        mind.commit("Water the ferns on Sunday")
        mind.export(Path(str(tmp_path)) / "out", progress=lambda *a: told.append(a))

    assert told[0] == (0, 2, "exporting jsonl") and told[-1] == (2, 2, "exporting jsonl")
