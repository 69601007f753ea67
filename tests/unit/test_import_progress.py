"""Long imports show a progress bar on a terminal's stderr, and nothing anywhere else."""

from __future__ import annotations

import io

import pytest

from mindledger.cli.import_cmds import ImportProgress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_long_import_draws_a_bar_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    stderr = Terminal()
    monkeypatch.setattr("sys.stderr", stderr)

    with ImportProgress(enabled=True) as bar:
        bar.start(2000)
        bar.update(1000)

    assert "importing" in stderr.getvalue()


@pytest.mark.parametrize(("tty", "enabled", "total"), [(False, True, 5000), (True, False, 5000)])
def test_no_bar_off_a_terminal_with_json_or_for_a_short_file(
    monkeypatch: pytest.MonkeyPatch, tty: bool, enabled: bool, total: int
) -> None:
    stderr = Terminal() if tty else io.StringIO()
    monkeypatch.setattr("sys.stderr", stderr)

    with ImportProgress(enabled) as bar:
        bar.start(total)
        bar.update(total)

    assert stderr.getvalue() == ""


def test_no_bar_for_a_short_import_even_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    stderr = Terminal()
    monkeypatch.setattr("sys.stderr", stderr)

    with ImportProgress(enabled=True) as bar:
        bar.start(ImportProgress.MIN_TOTAL - 1)
        bar.update(10)

    assert stderr.getvalue() == ""
