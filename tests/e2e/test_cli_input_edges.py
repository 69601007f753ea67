"""One line at the input edges: a file nested past Python's stack for every command that reads
JSON, and a byte-order mark on `mind turn -`'s standard input."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Result
from tests.fuzz.harness import ledger_state

Cli = Callable[..., Result]
# 3,000 levels in 6 KB: json.loads gives up (RecursionError) long before the file ends.
DEEP = b"[" * 3000 + b"]" * 3000 + b"\n"


@pytest.mark.parametrize(
    ("command", "says"),
    [
        (("import", "locomo"), "is not a readable LoCoMo JSON file (it is nested too deeply"),
        (("import", "chat"), ":1 is not JSON (it is nested too deeply to read)"),
        (("import", "pmm"), "is not JSON (it is nested too deeply to read)"),
        (("import", "chatgpt"), "is not JSON (it is nested too deeply to read)"),
        (("verify", "--export"), "at line 1: not a JSON line (it is nested too deeply to read)"),
    ],
    ids=lambda c: " ".join(c) if isinstance(c, tuple) else "",
)
def test_a_file_nested_3000_deep_is_one_line_and_writes_nothing(
    cli: Cli, mind_home: Path, tmp_path: Path, command: tuple[str, ...], says: str
) -> None:
    deep = tmp_path / "deep.json"
    deep.write_bytes(DEEP)
    before = ledger_state(mind_home)

    done = cli(*command, str(deep))

    assert done.exit_code == 1, done.stderr
    [line] = done.stderr.splitlines()
    assert says in line and "recursion" not in line, line
    assert ledger_state(mind_home) == before
    assert cli("verify").exit_code == 0


def test_a_ledger_import_nested_3000_deep_is_one_line_and_makes_no_home(
    cli: Cli, tmp_path: Path
) -> None:
    deep = tmp_path / "deep.jsonl"
    deep.write_bytes(DEEP)
    target = tmp_path / "restored"

    done = cli("--home", str(target), "import", "ledger", str(deep))

    assert done.exit_code == 1, done.stderr
    assert done.stderr.splitlines() == [
        "Error: line 1: not a JSON line (it is nested too deeply to read)"
    ]
    assert not (target / "ledger.sqlite").exists()


def test_a_byte_order_mark_on_standard_input_is_not_part_of_the_turn(
    cli: Cli, mind_home: Path
) -> None:
    said = "\ufeffI like tea"

    done = cli("turn", "-", "--model", "mock", "--mock-reply", "Noted.", "--json", input=said)

    assert done.exit_code == 0, done.stderr
    turn = done.json()
    log = cli("log", "--turn", turn["turn"])
    assert "--- user ---\nI like tea\n" in log.output
