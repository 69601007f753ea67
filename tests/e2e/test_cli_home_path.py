"""A home path no command could use is refused in one line, before anything is created."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Result

Cli = Callable[..., Result]


def one_error_line(result: Result) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ")
    assert "Traceback" not in result.stderr
    return lines[0]


@pytest.mark.parametrize("command", [("init", "--name", "a"), ("status",)])
@pytest.mark.parametrize("via", ["--home", "MIND_HOME"])
def test_a_home_name_too_long_is_one_error_line(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: tuple[str, ...], via: str
) -> None:
    home = tmp_path / ("a" * 300)
    if via == "MIND_HOME":
        monkeypatch.setenv("MIND_HOME", str(home))
        result = cli(*command)
    else:
        result = cli("--home", str(home), *command)

    assert result.exit_code == 1
    assert "longer than 255 bytes" in one_error_line(result)
    assert list(tmp_path.iterdir()) == []


def test_a_home_path_that_is_not_utf8_is_refused_and_nothing_created(
    cli: Cli, tmp_path: Path
) -> None:
    home = Path(os.fsdecode(os.fsencode(tmp_path) + b"/\xff"))

    result = cli("--home", str(home), "init", "--name", "a")

    assert result.exit_code == 1
    assert "not UTF-8" in one_error_line(result)
    assert list(tmp_path.iterdir()) == []
