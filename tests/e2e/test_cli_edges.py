"""One line at every edge: a stdout that cannot be written, bytes on stdin that are not text,
a model LiteLLM cannot route. Each is one `Error:` line, a tested exit code, and nothing
written where nothing should be."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from mindledger.cli.main import mind as mind_command
from tests.conftest import Result, subprocess_env

Cli = Callable[..., Result]
MIND = [sys.executable, "-c", "from mindledger.cli.main import main; main()"]
FULL = Path("/dev/full")
needs_dev_full = pytest.mark.skipif(not FULL.exists(), reason="needs Linux's /dev/full")


def error_lines(stderr: str) -> list[str]:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert "Traceback" not in stderr and "Exception ignored" not in stderr, stderr
    return lines


def positions(home: Path) -> int:
    """How many events the ledger holds (read without the CLI's own output)."""
    import sqlite3

    con = sqlite3.connect(home / "ledger.sqlite")
    try:
        return int(con.execute("SELECT count(*) FROM stored_events").fetchone()[0])
    finally:
        con.close()


@pytest.fixture
def run(mind_home: Path) -> Iterator[Callable[..., subprocess.CompletedProcess[str]]]:
    """Run `mind` as a real process on the test's mind, stdout wherever the test says."""

    def go(*args: str, stdout: int | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*MIND, *args],
            env=subprocess_env(mind_home, MIND_NO_SERVER="1", LITELLM_OFFLINE_MODE="true"),
            stdout=stdout if stdout is not None else subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
        )

    yield go


@needs_dev_full
@pytest.mark.parametrize(
    "args",
    [("commitments",), ("log", "--json"), ("graph", "export"), ("--help",), ("status",)],
    ids=["table", "json", "graph", "help", "status"],
)
def test_a_full_stdout_is_one_error_line_and_exit_1(
    run: Callable[..., subprocess.CompletedProcess[str]], cli: Cli, args: tuple[str, ...]
) -> None:
    cli("commit", "Water the ficus " + "x" * 9000)  # more than a buffer's worth of output

    with open(FULL, "wb") as full:
        result = run(*args, stdout=full.fileno())

    assert result.returncode == 1
    assert error_lines(result.stderr) == [
        "Error: cannot write the output (No space left on device)"
    ]


@needs_dev_full
@pytest.mark.parametrize("as_json", [False, True], ids=["reply", "json"])
def test_a_turn_whose_output_fails_says_it_was_recorded(
    run: Callable[..., subprocess.CompletedProcess[str]], mind_home: Path, as_json: bool
) -> None:
    before = positions(mind_home)
    args = ["turn", "hello", "--model", "mock", "--mock-reply", "Hi there."]

    with open(FULL, "wb") as full:
        result = run(*args, *(["--json"] if as_json else []), stdout=full.fileno())

    assert result.returncode == 1
    [line] = error_lines(result.stderr)
    assert line.startswith("Error: cannot write the output (No space left on device); turn ")
    turn_id = line.split("; turn ")[1].split()[0]
    assert "was recorded all the same (complete" in line and f"mind log --turn {turn_id}" in line
    assert positions(mind_home) > before
    shown = run("log", "--turn", turn_id)
    assert shown.returncode == 0 and "--- user ---\nhello\n" in shown.stdout


def test_a_turn_into_a_closed_pipe_says_it_was_recorded(
    run: Callable[..., subprocess.CompletedProcess[str]], mind_home: Path
) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader has gone before anything is written

    try:
        result = run(
            "turn", "hello", "--model", "mock", "--mock-reply", "Hi.", "--json", stdout=write_end
        )
    finally:
        os.close(write_end)

    assert result.returncode == 1
    [line] = error_lines(result.stderr)
    assert line.startswith("Error: cannot write the output (Broken pipe); turn ")


def test_a_reader_that_stops_early_is_no_error(
    run: Callable[..., subprocess.CompletedProcess[str]],
) -> None:
    """As with Unix tools (`mind log | head -1`): the reader chose to stop."""
    read_end, write_end = os.pipe()
    os.close(read_end)

    try:
        result = run("log", stdout=write_end)
    finally:
        os.close(write_end)

    assert result.returncode == 1
    assert error_lines(result.stderr) == []


@pytest.mark.parametrize(
    "data", [b"hello \xff\xfe there", b"\xc3", b"caf\xe9"], ids=["ff-fe", "cut", "latin-1"]
)
def test_stdin_that_is_not_utf8_is_one_line_and_records_nothing(
    mind_home: Path, data: bytes
) -> None:
    before = positions(mind_home)

    result = CliRunner().invoke(
        mind_command, ["turn", "-", "--model", "mock", "--mock-reply", "Hi."], input=data
    )

    assert result.exit_code == 1
    [line] = error_lines(result.stderr)
    assert line.startswith("Error: standard input is not utf-8 text (byte ")
    assert positions(mind_home) == before


def test_stdin_that_is_not_utf8_as_a_real_process(
    run: Callable[..., subprocess.CompletedProcess[str]], mind_home: Path
) -> None:
    before = positions(mind_home)

    result = subprocess.run(
        [*MIND, "turn", "-", "--model", "mock", "--mock-reply", "Hi."],
        env=subprocess_env(mind_home, MIND_NO_SERVER="1"),
        input=b"caf\xe9 au lait",
        capture_output=True,
        timeout=120,
        check=False,
    )

    assert result.returncode == 1
    assert len(error_lines(result.stderr.decode())) == 1
    assert positions(mind_home) == before


def test_utf8_stdin_with_windows_line_ends_is_one_message(cli: Cli, mind_home: Path) -> None:
    result = cli(
        "turn",
        "-",
        "--model",
        "mock",
        "--mock-reply",
        "Hi.",
        "--json",
        input="caf\u00e9\r\nau lait\n",
    )

    assert result.exit_code == 0
    assert json.loads(result.output)["status"] == "complete"


@pytest.mark.parametrize(
    "spec",
    ["", "nosuchprovider/x", "opanai/gpt-4o", "openai/", "   "],
    ids=["empty", "unknown", "typo", "no-name", "blank"],
)
def test_a_model_litellm_cannot_route_is_refused_before_anything_is_written(
    cli: Cli, mind_home: Path, spec: str
) -> None:
    before = positions(mind_home)

    result = cli("turn", "hello", "--model", spec)

    assert result.exit_code == 1
    [line] = error_lines(result.stderr)
    assert "LiteLLM cannot route model" in line and "nothing was recorded" in line
    assert "docs.litellm.ai" not in line
    assert positions(mind_home) == before
