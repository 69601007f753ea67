"""`mind forget` given what it cannot act on: one `Error:` line, exit 1, the ledger and the key
store as they were; and any text as a selector's value never ends in a traceback."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from mindledger.domain.conversation import conversation_id
from tests.conftest import Result
from tests.e2e.forget_memories import jsonl, ledger_head, stored_keys, turn
from tests.fuzz.harness import argv_texts, fuzz_step

Cli = Callable[..., Result]
SELECTORS = ["turn", "conversation", "speaker", "commitment", "concept", "thread", "knowledge"]
# Two transcript names whose conversations' ids share their first 8 hex digits (found by search).
CLASHING = ("h74040.jsonl", "h113075.jsonl")


@pytest.fixture
def talked(cli: Cli, mind_home: Path) -> Path:
    """A mind with a turn, a commitment and a concept in it."""
    turn(cli, "I keep my spare key under the flowerpot", "Noted.")
    cli("commit", "Water the fern")
    cli("concept", "define", "garden.secret", "The hedge")
    return mind_home


def refused(result: Result, *fragments: str) -> str:
    """The one error line of a refused forget."""
    assert result.exit_code == 1, result.output + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert "Traceback" not in result.output + result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        ([], ["give exactly one of --turn, --conversation"]),
        (["--speaker", "user", "--concept", "garden.secret"], ["give exactly one of"]),
        (["--turn", "deadbeefdeadbeef"], ["--turn deadbeefdeadbeef names nothing this mind holds"]),
        (["--commitment", "c0000000000"], ["--commitment c0000000000 names nothing"]),
        (["--concept", "garden.nothing"], ["--concept garden.nothing names nothing"]),
        (["--concept", "Garden Secret"], ["--concept 'Garden Secret' is not valid"]),
        (["--speaker", "Nobody"], ["--speaker Nobody names nothing"]),
        (["--thread", "t00000000"], ["--thread t00000000 names nothing"]),
        (["--knowledge", "k0000000000"], ["--knowledge k0000000000 names nothing"]),
        (["--turn", "abc"], ["--turn takes an id or at least 8 of its first hex digits", "'abc'"]),
        (["--thread", "not-hex-at-all"], ["--thread takes an id or at least 8"]),
        (["--turn", "  "], ["--turn needs a value"]),
        (["--before", "yesterday"], ["--before: time 'yesterday' is not ISO-8601"]),
        (["--before", "0001-01-01T00:00:00Z"], ["outside the years 1970 to 2999"]),
        (["--before", "2000-01-01T00:00:00Z"], ["--before 2000-01-01T00:00:00Z names nothing"]),
        (["--before", "2999-01-01T00:00:00Z"], ["in the future", "give a past time"]),
        (["--speaker", "x" * 100_000], ["--speaker " + "x" * 77 + "... names nothing"]),
    ],
    ids=lambda v: " ".join(v)[:60] if isinstance(v, list) and v and v[0].startswith("-") else None,
)
def test_a_forget_it_cannot_act_on_is_refused_in_one_line_and_changes_nothing(
    cli: Cli, talked: Path, args: list[str], fragments: list[str]
) -> None:
    before = (ledger_head(talked), stored_keys(talked))

    result = cli("forget", *args, "--yes")

    refused(result, *fragments)
    assert (ledger_head(talked), stored_keys(talked)) == before
    assert not (talked / "forget.pending").exists()


def test_an_id_prefix_two_conversations_share_is_refused_naming_both(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    streams = [conversation_id(f"chat/{name}").hex for name in CLASHING]
    assert streams[0][:8] == streams[1][:8]  # the search's finding still holds
    for name in CLASHING:
        path = jsonl(tmp_path / name, [{"role": "user", "content": name}])
        cli("import", "chat", str(path), "--conversation", name)
    before = (ledger_head(mind_home), stored_keys(mind_home))

    result = cli("forget", "--conversation", streams[0][:8], "--yes")

    line = refused(result, f"--conversation {streams[0][:8]} names 2 streams", "more of the id")
    assert all(s[:12] in line for s in streams)
    assert (ledger_head(mind_home), stored_keys(mind_home)) == before


def test_the_full_id_of_one_of_two_clashing_conversations_forgets_only_it(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    streams = [conversation_id(f"chat/{name}").hex for name in CLASHING]
    for name in CLASHING:
        path = jsonl(tmp_path / name, [{"role": "user", "content": name}])
        cli("import", "chat", str(path), "--conversation", name)

    result = cli("forget", "--conversation", streams[1], "--yes", "--json")

    assert result.exit_code == 0, result.stderr
    assert json.loads(result.output)["counts"] == {"conversation": 2}
    texts = [r["text"] for r in cli("query", "SELECT text FROM messages").json()]
    assert texts == [CLASHING[0]]


@pytest.mark.parametrize("kind", [*SELECTORS, "before"])
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(value=argv_texts)
def test_any_text_as_a_selector_s_value_in_a_dry_run_is_answered_and_changes_nothing(
    talked: Path, kind: str, value: str
) -> None:
    keys = stored_keys(talked)

    run = fuzz_step(talked, ["forget", f"--{kind}", value, "--dry-run"])

    assert stored_keys(talked) == keys
    assert not (talked / "forget.pending").exists()
    if run.exit_code == 0:
        assert (
            json.loads(
                fuzz_step(talked, ["forget", f"--{kind}", value, "--dry-run", "--json"]).stdout
            )["dry_run"]
            is True
        )


def test_a_concept_is_forgotten_by_its_token_in_any_case(cli: Cli, talked: Path) -> None:
    result = cli("forget", "--concept", "Garden.Secret", "--yes", "--json")

    assert result.exit_code == 0, result.stderr
    assert json.loads(result.output)["counts"] == {"concept": 1}
    assert cli("concepts", "--json").json()[0]["definition"] == "[forgotten]"
