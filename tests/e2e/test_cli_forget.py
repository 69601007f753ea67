"""`mind forget` end to end: what a selector names leaves no byte under the home and no word on
any reading surface, the rest of the mind is intact, `mind verify` passes, a second forget of
the same thing changes nothing, and a forget killed at any point is finished by the next command.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Result, subprocess_env
from tests.e2e.forget_memories import (
    CANARIES,
    SURVIVOR,
    Memories,
    build_memories,
    events_of,
    files_holding,
    files_under,
    forget,
    holds,
    ledger_head,
    module_cli,
    read_side,
    recalls,
    stored_keys,
    turn,
    verified,
)

Cli = Callable[..., Result]
MIND = [sys.executable, "-c", "from mindledger.cli.main import main; main()"]
FORGOTTEN = "mind.forget.forgotten"


@pytest.fixture(scope="module")
def memories_once(tmp_path_factory: pytest.TempPathFactory) -> Memories:
    """The mind with every canary, built once for the module."""
    folder = tmp_path_factory.mktemp("memories")
    cli = module_cli(folder / "mind")
    assert cli("init", "--name", "Echo").exit_code == 0
    return build_memories(cli, folder / "mind", folder)


@pytest.fixture
def memories(memories_once: Memories, home: Path, cli: Cli) -> Memories:
    """Each test's own copy of that mind, as the test's home (the tests forget from it)."""
    shutil.copytree(memories_once.home, home)
    # This process has used the home before the test, as when the test built it: a warning
    # (the chat history's file mode) is printed once per process and home.
    assert cli("status").exit_code == 0
    return Memories(home, memories_once.selectors)


@pytest.mark.parametrize("kind", sorted(CANARIES))
def test_a_forgotten_memory_leaves_no_byte_under_the_home_and_no_word_on_the_read_side(
    cli: Cli, memories: Memories, tmp_path: Path, kind: str
) -> None:
    canary = CANARIES[kind]
    others = [w for k, w in CANARIES.items() if k != kind]
    assert files_holding(memories.home, canary) != []
    assert canary in read_side(cli, tmp_path / "before")
    keys_before = stored_keys(memories.home)

    result = forget(cli, *memories.selectors[kind])

    assert result.exit_code == 0, result.stderr
    assert result.json()["forgotten"] is True
    assert files_holding(memories.home, canary) == []
    shown = read_side(cli, tmp_path / "after").lower()
    assert canary.lower() not in shown
    assert [w for w in others if w.lower() not in shown] == []
    destroyed = keys_before - stored_keys(memories.home)
    assert len(destroyed) == result.json()["keys"] > 0
    kept = [str(p) for p in files_under(memories.home) for k in destroyed if k in p.read_bytes()]
    assert kept == []
    assert verified(cli)
    assert recalls(cli, SURVIVOR, SURVIVOR)


def test_forgetting_every_memory_in_turn_leaves_only_the_survivor(
    cli: Cli, memories: Memories, tmp_path: Path
) -> None:
    for option, value in memories.selectors.values():
        assert forget(cli, option, value).exit_code == 0

    shown = read_side(cli, tmp_path / "after").lower()

    assert [w for w in CANARIES.values() if files_holding(memories.home, w)] == []
    assert [w for w in CANARIES.values() if w.lower() in shown] == []
    assert len(events_of(cli, FORGOTTEN)) == len(memories.selectors)
    assert verified(cli)
    assert recalls(cli, SURVIVOR, SURVIVOR)
    assert (memories.home / "chat_history").read_text() == f"Where do the {SURVIVOR} birds nest?\n"


def test_the_forgotten_event_records_the_selector_and_counts_never_the_content(
    cli: Cli, memories: Memories
) -> None:
    option, value = memories.selectors["turn"]

    data = forget(cli, option, value).json()

    (event,) = events_of(cli, FORGOTTEN)
    assert event["payload"] == {
        "forget_id": data["forget_id"],
        "selector": "turn",
        "value": value,
        "counts": {"turn": 3},
        "events": 3,
        "keys": data["keys"],
        "context_turns": data["context_turns"],
        "role": "owner",
        "via": "cli",
    }
    assert data["context_turns"] >= 2  # its own prompt and the next turn's, which quoted it


# -- the same on PostgreSQL ---------------------------------------------------------------------


def pg_dump(dsn: str, schema: str) -> bytes:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_dump"))
    if not found:
        pytest.skip("pg_dump is not installed")
    dump = subprocess.run(
        [str(found[-1]), "--schema", schema, dsn], capture_output=True, check=True
    )
    return dump.stdout


def postgres_keys(dsn: str, schema: str) -> set[bytes]:
    import psycopg

    with psycopg.connect(dsn) as conn:
        return {bytes(k) for (k,) in conn.execute(f'SELECT key FROM "{schema}".ledger_keys')}


def test_on_postgresql_a_dump_of_the_schema_holds_no_forgotten_word(
    cli: Cli, home: Path, tmp_path: Path
) -> None:
    from tests.integration.backends import POSTGRES_DSN, postgres_schema

    if not POSTGRES_DSN:
        pytest.skip("set MIND_TEST_POSTGRES_DSN (`.ci/run` starts a server)")
    with postgres_schema() as schema:
        made = cli("init", "--name", "Echo", "--postgres", POSTGRES_DSN, "--schema", schema)
        assert made.exit_code == 0, made.stderr
        memories = build_memories(cli, home, tmp_path)
        shown = read_side(cli, tmp_path / "before").lower()
        assert [w for w in CANARIES.values() if w.lower() not in shown] == []
        keys = postgres_keys(POSTGRES_DSN, schema)

        for option, value in memories.selectors.values():
            result = forget(cli, option, value)
            assert result.exit_code == 0, result.stderr

        dumped = pg_dump(POSTGRES_DSN, schema)
        destroyed = keys - postgres_keys(POSTGRES_DSN, schema)
        shown = read_side(cli, tmp_path / "after").lower()
        assert verified(cli)
        assert recalls(cli, SURVIVOR, SURVIVOR)
    assert [w for w in CANARIES.values() if holds(dumped, w)] == []
    assert destroyed and [k for k in destroyed if k.hex().encode() in dumped] == []
    assert [w for w in CANARIES.values() if files_holding(home, w)] == []
    assert [w for w in CANARIES.values() if w.lower() in shown] == []


# -- forgetting twice ---------------------------------------------------------------------------


def test_forgetting_the_same_thing_twice_says_nothing_is_left_and_writes_nothing(
    cli: Cli, memories: Memories
) -> None:
    option, value = memories.selectors["commitment"]
    first = forget(cli, option, value).json()
    head, keys = ledger_head(memories.home), stored_keys(memories.home)

    again = forget(cli, option, value)
    text = cli("forget", option, value, "--yes")

    assert again.exit_code == 0 and text.exit_code == 0
    data = again.json()
    assert data.pop("forget_id") != first["forget_id"]  # a fresh id, recorded nowhere
    assert data == {
        "dry_run": False,
        "selector": "commitment",
        "value": value,
        "counts": first["counts"],  # the events it names are still there, unreadable
        "events": first["events"],
        "keys": 0,
        "context_turns": 0,  # the prompts that quoted it went the first time
        "forgotten": False,
        "already_forgotten": True,
    }
    assert text.output.splitlines()[0] == (
        f"nothing left to forget for {option} {value}: already forgotten"
    )
    assert (ledger_head(memories.home), stored_keys(memories.home)) == (head, keys)
    assert len(events_of(cli, FORGOTTEN)) == 1


def test_a_dry_run_counts_what_would_go_and_changes_nothing(cli: Cli, memories: Memories) -> None:
    head, keys = ledger_head(memories.home), stored_keys(memories.home)

    result = cli("forget", *memories.selectors["conversation"], "--dry-run", "--json")

    assert result.exit_code == 0, result.stderr
    data = result.json()
    assert (data["dry_run"], data["forgotten"]) == (True, False)
    # Its two messages' keys, and the two keys of the sent prompt of the turn that quoted them.
    assert (data["counts"], data["events"], data["keys"]) == ({"conversation": 3}, 3, 4)
    assert data["context_turns"] == 1
    assert CANARIES["conversation"] not in result.output
    assert (ledger_head(memories.home), stored_keys(memories.home)) == (head, keys)


def test_without_yes_an_already_forgotten_selector_says_so_and_needs_no_confirmation(
    cli: Cli, memories: Memories
) -> None:
    option, value = memories.selectors["concept"]
    forget(cli, option, value)
    head = ledger_head(memories.home)

    result = cli("forget", option, value)

    assert result.exit_code == 0, result.stderr
    assert result.output.splitlines()[0] == (
        f"nothing left to forget for {option} {value}: already forgotten"
    )
    assert ledger_head(memories.home) == head


def test_without_a_terminal_a_forget_without_yes_is_refused_in_one_line(
    cli: Cli, memories: Memories
) -> None:
    head, keys = ledger_head(memories.home), stored_keys(memories.home)

    result = cli("forget", *memories.selectors["thread"])

    assert result.exit_code == 1
    assert (result.output, result.stderr) == (
        "",
        "Error: forgetting cannot be undone: add --yes to confirm it (1 events, 3 keys; "
        "--dry-run lists them)\n",
    )
    assert (ledger_head(memories.home), stored_keys(memories.home)) == (head, keys)


# -- a forget killed on the way -----------------------------------------------------------------


@pytest.mark.parametrize("point", ["after-keys", "after-event", "after-purge"])
def test_a_forget_killed_at_any_point_is_finished_once_by_the_next_command(
    cli: Cli, mind_home: Path, point: str
) -> None:
    message = f"My bank PIN is {CANARIES['turn']} 0451"
    told = turn(cli, message, "I will not repeat it.")
    turn(cli, f"Where do the {SURVIVOR} birds nest?", "On the beach.")
    (mind_home / "chat_history").write_text(f"{message}\nWhere do the {SURVIVOR} birds nest?\n")
    env = subprocess_env(mind_home, MIND_TEST_FORGET_CRASH=point)

    killed = subprocess.run(
        [*MIND, "forget", "--turn", str(told["turn"]), "--yes"], env=env, capture_output=True
    )
    status = subprocess.run([*MIND, "status"], env=subprocess_env(mind_home), capture_output=True)

    assert killed.returncode == -9, killed.stderr
    assert status.returncode == 0, status.stderr
    assert not (mind_home / "forget.pending").exists()
    assert len(events_of(cli, FORGOTTEN)) == 1
    assert files_holding(mind_home, CANARIES["turn"]) == []
    assert verified(cli)
    assert recalls(cli, SURVIVOR, SURVIVOR)


def test_a_killed_forget_is_finished_by_a_read_command_too(cli: Cli, mind_home: Path) -> None:
    told = turn(cli, f"My bank PIN is {CANARIES['turn']} 0451", "I will not repeat it.")
    env = subprocess_env(mind_home, MIND_TEST_FORGET_CRASH="after-keys")
    killed = subprocess.run(
        [*MIND, "forget", "--turn", str(told["turn"]), "--yes"], env=env, capture_output=True
    )

    texts = cli("query", "SELECT text FROM messages").json()

    assert killed.returncode == -9
    assert [t for t in texts if CANARIES["turn"] in str(t["text"])] == []
    assert not (mind_home / "forget.pending").exists()
    assert len(events_of(cli, FORGOTTEN)) == 1


# -- the model may not forget -------------------------------------------------------------------


def test_a_forget_line_in_the_reply_is_refused_recorded_and_forgets_nothing(
    cli: Cli, mind_home: Path
) -> None:
    said = f"I keep my spare key under the {CANARIES['turn']} flowerpot"
    turn(cli, said, "Noted.")
    keys = stored_keys(mind_home)

    result = turn(cli, "Please forget everything I said", "Done.\nFORGET: --speaker user")

    assert result["reply"] == "Done."
    assert result["rejections"] == [
        {
            "line": "FORGET: --speaker user",
            "reason": "only the mind's owner can forget (`mind forget`, or the server with the "
            "mind's token); a model's FORGET line is refused",
        }
    ]
    (rejected,) = events_of(cli, "mind.turn.line_rejected")
    assert rejected["payload"]["line"] == "FORGET: --speaker user"
    assert events_of(cli, FORGOTTEN) == []
    assert keys <= stored_keys(mind_home)
    assert recalls(cli, "flowerpot", CANARIES["turn"])
