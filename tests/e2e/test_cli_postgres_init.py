"""`mind init --postgres DSN --schema S`, then the commands that follow, through the CLI."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import Result
from tests.integration.backends import POSTGRES_DSN, needs_postgres, postgres_schema

Cli = Callable[..., Result]


@needs_postgres
def test_a_mind_made_with_init_postgres_is_where_the_next_commands_look(
    cli: Cli, home: Path
) -> None:
    with postgres_schema() as schema:
        made = cli("init", "--name", "Echo", "--postgres", POSTGRES_DSN, "--schema", schema)
        turn = cli(
            "turn", "hello", "--model", "mock", "--mock-reply", "Hi\nCOMMIT: say hi", "--json"
        )
        status = cli("status", "--json")
        verified = cli("verify", "--json")

    assert made.exit_code == 0, made.stderr
    assert not (home / "ledger.sqlite").exists()
    assert turn.exit_code == 0, turn.stderr
    assert len(turn.json()["opened"]) == 1
    assert status.json()["backend"] == "postgres"
    assert verified.json()["ok"] is True
