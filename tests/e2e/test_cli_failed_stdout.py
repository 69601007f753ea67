"""A stdout that cannot be written (`> /dev/full`, or closed: `>&-`) is one line and exit 1
for every command; a command that recorded its change first says so in that line and names
what it recorded, so that nobody runs it again, and one whose write changed nothing says that
(one place does this for every command: `cli.group`, from what the floor's write returned)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Result, subprocess_env

Cli = Callable[..., Result]
MIND = [sys.executable, "-c", "from mindledger.cli.main import main; main()"]
FULL = Path("/dev/full")
RECORDED = "was recorded all the same"
STDOUTS = ["full", "closed"]
CAUSE = {"full": "No space left on device", "closed": "standard output is closed"}


def events(home: Path) -> int:
    con = sqlite3.connect(f"file:{home / 'ledger.sqlite'}?mode=ro", uri=True)
    try:
        return int(con.execute("SELECT count(*) FROM stored_events").fetchone()[0])
    finally:
        con.close()


def run(home: Path, args: list[str], stdout: str) -> subprocess.CompletedProcess[str]:
    """`mind ARGS` with its stdout on /dev/full, or closed before it starts."""
    if stdout == "full" and not FULL.exists():
        pytest.skip("needs Linux's /dev/full")
    with open(FULL if stdout == "full" else os.devnull, "wb") as sink:
        return subprocess.run(
            [*MIND, *args],
            env=subprocess_env(home, MIND_NO_SERVER="1", LITELLM_OFFLINE_MODE="true"),
            stdout=sink,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
            preexec_fn=(lambda: os.close(1)) if stdout == "closed" else None,
        )


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in result.stderr and "Exception ignored" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    return lines[0]


def cid_of(cli: Cli) -> str:
    cid: str = cli("commitments", "--json").json()[0]["cid"]
    return cid


# A write, and the key of its --json result that names what it recorded.
WRITES: dict[str, tuple[Callable[[Cli], list[str]], str]] = {
    "commit": (lambda cli: ["commit", "Call the plumber"], "cid"),
    "close": (lambda cli: ["close", cid_of(cli), "--reason", "done"], "cid"),
    "remember": (lambda cli: ["remember", "The boat is red"], "id"),
    "forget": (lambda cli: ["forget", "--commitment", cid_of(cli), "--yes"], "forget_id"),
    "thread": (lambda cli: ["thread", "open", "Plan the garden", "--content", "Beds"], "id"),
    "concept": (lambda cli: ["concept", "define", "project.alpha", "The alpha project"], "token"),
    "config": (lambda cli: ["config", "set", "threads.cycle_threshold", "3.5"], "key"),
}


@pytest.mark.parametrize("stdout", STDOUTS)
@pytest.mark.parametrize("write", list(WRITES))
def test_a_write_whose_output_fails_says_it_was_recorded_and_names_it(
    cli: Cli, mind_home: Path, write: str, stdout: str
) -> None:
    assert cli("commit", "Water the ficus").exit_code == 0
    make, key = WRITES[write]
    args = make(cli)
    before = events(mind_home)

    result = run(mind_home, args, stdout)

    assert result.returncode == 1
    line = one_line(result)
    assert line.startswith(f"Error: cannot write the output ({CAUSE[stdout]}); it {RECORDED} (")
    named = line.split(f"{RECORDED} (")[1].split(")")[0]
    assert named.split()[0] == key and len(named.split()) == 2
    assert line.endswith("see `mind log` before running it again")
    assert events(mind_home) > before  # recorded once; the line says so
    assert cli("verify").exit_code == 0


@pytest.mark.parametrize("stdout", STDOUTS)
def test_a_turn_with_a_closed_stdout_says_it_was_recorded(mind_home: Path, stdout: str) -> None:
    before = events(mind_home)

    result = run(mind_home, ["turn", "hello", "--model", "mock", "--mock-reply", "Hi."], stdout)

    assert result.returncode == 1
    line = one_line(result)
    assert line.startswith(f"Error: cannot write the output ({CAUSE[stdout]}); turn ")
    assert RECORDED in line and events(mind_home) > before


@pytest.mark.parametrize("stdout", STDOUTS)
@pytest.mark.parametrize(
    "args",
    [["commit", "Water the ficus"], ["commitments"], ["graph", "export"], ["status", "--json"]],
    ids=["same-commit", "table", "graph", "json"],
)
def test_output_that_fails_where_nothing_was_recorded_is_one_line_without_recorded(
    cli: Cli, mind_home: Path, args: list[str], stdout: str
) -> None:
    assert cli("commit", "Water the ficus").exit_code == 0
    assert cli("commitments").exit_code == 0  # the read model is built
    before = events(mind_home)

    result = run(mind_home, args, stdout)

    assert result.returncode == 1
    also = "; nothing was recorded (it was already done)" if args[0] == "commit" else ""
    assert one_line(result) == f"Error: cannot write the output ({CAUSE[stdout]}){also}"
    assert events(mind_home) == before  # the same open text again changes nothing


def test_a_forget_with_nothing_left_whose_output_fails_says_nothing_was_recorded(
    cli: Cli, mind_home: Path
) -> None:
    assert cli("commit", "Water the ficus").exit_code == 0
    cid = cid_of(cli)
    assert cli("forget", "--commitment", cid, "--yes").exit_code == 0
    before = events(mind_home)

    result = run(mind_home, ["forget", "--commitment", cid, "--yes"], "full")

    assert result.returncode == 1
    assert one_line(result) == (
        f"Error: cannot write the output ({CAUSE['full']}); nothing was recorded (it was "
        "already done)"
    )
    assert events(mind_home) == before


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_an_export_whose_summary_fails_says_it_was_written_and_where(
    cli: Cli, mind_home: Path, tmp_path: Path, fmt: str
) -> None:
    assert cli("commit", "Water the ficus").exit_code == 0
    folder = tmp_path / "export"
    before = events(mind_home)

    result = run(mind_home, ["export", "--format", fmt, str(folder)], "full")

    assert result.returncode == 1
    files = sorted(folder.iterdir())
    where = {
        "jsonl": f"{folder / 'ledger.jsonl'} ({before} events)",
        "csv": f"{folder} ({len(files)} files)",
    }[fmt]
    assert one_line(result) == (
        f"Error: cannot write the output ({CAUSE['full']}); the export was written all the "
        f"same to {where}"
    )
    assert files and events(mind_home) == before
