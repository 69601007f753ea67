"""Every command behaves alike: --json, --home after the subcommand, --as-of, verbatim examples,
and a turn that says in text what it changed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from mindledger.cli.main import mind
from mindledger.cli.options import verbatim_examples, walk
from tests.conftest import REPO, Result

Cli = Callable[..., Result]


def _runnable(command: click.Command) -> bool:
    """A command that does something itself (a group only dispatches, unless it runs alone)."""
    if isinstance(command, click.Group):
        return command.invoke_without_command
    return True


def _path(command: click.Command) -> str:
    names = {
        id(c): n for c in walk(mind) if isinstance(c, click.Group) for n, c in c.commands.items()
    }
    return names.get(id(command), "mind")


def test_every_command_that_runs_takes_json_and_every_command_has_an_example() -> None:
    commands = walk(mind)

    without_json = [
        _path(c) for c in commands if _runnable(c) and not any("--json" in p.opts for p in c.params)
    ]
    without_example = [_path(c) for c in commands if "Example:" not in (c.help or "")]

    assert len(commands) > 40
    assert without_json == []
    assert without_example == []


def test_every_command_below_the_group_takes_home() -> None:
    commands = walk(mind)[1:]

    without_home = [_path(c) for c in commands if not any("--home" in p.opts for p in c.params)]

    assert without_home == []


def test_help_prints_examples_as_written_even_when_longer_than_the_terminal() -> None:
    runner = CliRunner()

    resolve = runner.invoke(mind, ["thread", "resolve", "--help"], terminal_width=60).output
    turn = runner.invoke(mind, ["turn", "--help"], terminal_width=60).output
    top = runner.invoke(mind, ["--help"], terminal_width=60).output

    assert (
        '    mind thread resolve t1a2b3c4d --as dissolved --reason "the question no longer '
        'applies"\n' in resolve
    )
    assert "--mock-reply $'Hello!\\nCOMMIT: say hello daily' --json\n" in turn
    assert (
        '      mind init --name Echo\n      mind commit "Send the weekly report on Friday"\n' in top
    )


def test_verbatim_examples_leaves_the_description_to_be_wrapped() -> None:
    text = (
        "Do a thing.\n\n    Longer words here.\n\n    Example:\n\n        mind a\n\n        mind b"
    )

    marked = verbatim_examples(text)

    assert (
        marked
        == "Do a thing.\n\nLonger words here.\n\nExample:\n\n\b\n    mind a\n\n\b\n    mind b"
    )


def test_home_is_accepted_after_the_subcommand_and_wins(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"

    created = cli("init", "--home", str(other), "--name", "Nova", "--json")
    status = cli("status", "--home", str(other), "--json").json()
    nested = cli("concept", "define", "team.billing", "The billing team", "--home", str(other))
    grouped = cli("concept", "--home", str(other), "define", "team.ops", "The ops team")
    here = cli("status", "--json").json()

    assert created.exit_code == 0 and created.json()["name"] == "Nova"
    assert (status["name"], status["home"]) == ("Nova", str(other))
    assert nested.exit_code == 0 and grouped.exit_code == 0
    assert [c["token"] for c in cli("concepts", "--home", str(other), "--json").json()] == [
        "team.billing",
        "team.ops",
    ]
    assert (here["name"], cli("concepts", "--json").json()) == ("Echo", [])


def test_write_commands_print_json(cli: Cli, mind_home: Path, tmp_path: Path) -> None:
    cid = cli("commit", "Send the weekly report", "--json").json()["cid"]

    closed = cli("close", cid, "--reason", "sent", "--json").json()
    defined = cli("concept", "define", "project.alpha", "The billing rewrite", "--json").json()
    cli("concept", "define", "team.billing", "The billing team")
    aliased = cli("concept", "alias", "project.alpha", "billing rewrite", "--json").json()
    related = cli(
        "concept", "relate", "project.alpha", "team.billing", "--as", "owned-by", "--json"
    ).json()
    bound = cli("concept", "bind", "project.alpha", "--commitment", cid, "--json").json()
    thread = cli("thread", "open", "Why did it fail?", "--content", "It failed", "--json").json()
    resolved = cli(
        "thread", "resolve", thread["id"], "--as", "dissolved", "--reason", "gone", "--json"
    ).json()
    adopted = cli("identity", "adopt", "Nova", "--reason", "chosen", "--json").json()
    configured = cli("config", "set", "threads.floor_interval", "12", "--json").json()
    again = cli("config", "set", "threads.floor_interval", "12", "--json").json()
    switched = cli("model", "set", "openai/gpt-4o-mini", "--json").json()
    exported = cli("export", "--format", "csv", str(tmp_path / "out"), "--json").json()
    reported = cli("report", "commitments", "--json").json()

    assert closed == {
        "cid": cid,
        "episode": 1,
        "text": "Send the weekly report",
        "closed": True,
        "reason": "sent",
    }
    assert defined == {"token": "project.alpha", "version": 1}
    assert aliased == {"token": "project.alpha", "alias": "billing rewrite", "added": True}
    assert related == {
        "source": "project.alpha",
        "target": "team.billing",
        "relation": "owned-by",
        "added": True,
    }
    assert bound == {"token": "project.alpha", "kind": "commitment", "target": cid}
    assert resolved == {
        "id": thread["id"],
        "stream_id": thread["stream_id"],
        "verdict": "dissolved",
    }
    assert adopted == {"name": "Nova", "reason": "chosen"}
    assert configured == {"key": "threads.floor_interval", "value": "12", "changed": True}
    assert again["changed"] is False
    assert switched == {"model": "openai/gpt-4o-mini"}
    assert exported["format"] == "csv" and len(exported["files"]) > 10
    assert all(Path(f).exists() for f in exported["files"])
    assert isinstance(reported, list) and reported


def test_stop_local_prints_json_when_no_server_runs(cli: Cli, mind_home: Path) -> None:
    result = cli("model", "stop-local", "--json")

    assert result.json() == {"stopped": False}


def test_as_of_takes_a_position_or_a_time_and_both_mean_the_same_point(
    cli: Cli, mind_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli("commit", "Water the ficus on Monday")
    position = cli("status", "--json").json()["head"]["position"]
    monkeypatch.setenv("MIND_NOW", "2026-05-03T09:00:00Z")
    cli("commit", "Water the orchid on Tuesday")

    def recalled(as_of: str) -> list[str]:
        items = cli("recall", "water", "--as-of", as_of, "--json").json()["items"]
        return sorted(i["text"] for i in items if i["kind"] == "commitment")

    by_position = recalled(str(position))
    by_time = recalled("2026-05-02T00:00:00Z")
    now = recalled("2026-05-04T00:00:00Z")
    bad = cli("recall", "water", "--as-of", "last week")
    past_head = cli("threads", "--as-of", "9999")

    assert by_position == by_time and len(by_position) == 1 and "ficus" in by_position[0]
    assert len(now) == 2
    assert bad.exit_code == 2 and "neither a ledger position" in bad.stderr
    assert past_head.exit_code == 1 and "no event at position 9999" in past_head.stderr


def test_threads_as_of_a_position_is_as_of_that_event_time(
    cli: Cli, mind_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli("thread", "open", "Ask about the launch", "--content", "The user hinted at May")
    position = cli("status", "--json").json()["head"]["position"]
    monkeypatch.setenv("MIND_NOW", "2026-05-04T09:00:00Z")
    cli("thread", "open", "Later question", "--content", "Opened three days on")

    by_position = cli("threads", "--as-of", str(position), "--json").json()
    by_time = cli("threads", "--as-of", "2026-05-01T09:00:00Z", "--json").json()

    assert [t["label"] for t in by_position] == ["Ask about the launch"]
    assert by_position == by_time


def test_a_turn_prints_one_line_for_every_change_it_made(cli: Cli, mind_home: Path) -> None:
    reply = "\n".join(
        [
            "Noted.",
            "COMMIT: call mum on Sunday",
            "CONCEPT: family.mum = The user's mother",
            "CONCEPT: family.dad = The user's father",
            "RELATE: family.mum -> married-to -> family.dad",
            "RELATE: family.mum -> knows -> family.nobody",
            "REFLECT: The user cares about family",
            'THREAD: {"label": "Is mum well?", "content": "The user sounded worried"}',
            'CLAIM:identity_proposal={"name": "Nova"}',
            'CLAIM:event_exists={"id": 1}',
        ]
    )

    result = cli("turn", "Remind me to call mum", "--model", "mock", "--mock-reply", reply)

    lines = [line.strip() for line in result.stderr.splitlines()]
    assert result.exit_code == 0 and result.output.strip() == "Noted."
    assert lines[0].startswith("[opened c") and len(lines) == 9
    assert lines[1:] == [
        "[defined concept family.mum]",
        "[defined concept family.dad]",
        "[related family.mum -married-to-> family.dad]",
        "[reflected: The user cares about family]",
        "[claim event_exists accepted (id=1)]",
        "[proposed the name Nova]",
        lines[7],
        "[rejected 'RELATE: family.mum -> knows -> family.nobody': "
        "concept family.nobody is not defined]",
    ]
    assert lines[7].startswith("[thread opened t")


def test_a_ratified_name_is_shown_in_text(cli: Cli, mind_home: Path) -> None:
    cli(
        "turn",
        "a name?",
        "--model",
        "mock",
        "--mock-reply",
        'Maybe.\nCLAIM:identity_proposal={"name": "Nova"}',
    )

    result = cli(
        "turn",
        "yes",
        "--model",
        "mock",
        "--mock-reply",
        'Done.\nCLAIM:identity_ratify={"name": "Nova"}',
    )

    assert "[adopted the name Nova]" in result.stderr
    assert cli("identity", "--json").json()["name"] == "Nova"


def test_chat_json_prints_each_turn_as_one_line_of_json(cli: Cli, mind_home: Path) -> None:
    import json

    result = cli(
        "chat",
        "--model",
        "mock",
        "--mock-reply",
        "Hi.\nCOMMIT: wave",
        "--json",
        input="hello\nagain\n",
    )

    turns = [json.loads(line) for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 0
    assert [t["reply"] for t in turns] == ["Hi.", "Hi."]
    assert len(turns[0]["opened"]) == 1 and turns[1]["rejections"][0]["line"] == "COMMIT: wave"


def _command_paths(group: click.Group, prefix: str = "") -> list[str]:
    paths = []
    for name, command in sorted(group.commands.items()):
        path = f"{prefix}{name}"
        if _runnable(command):
            paths.append(path)
        if isinstance(command, click.Group):
            paths += _command_paths(command, path + " ")
    return paths


def test_architecture_maps_every_command_to_its_use_case() -> None:
    text = (REPO / "ARCHITECTURE.md").read_text()
    section = text.split("## Commands: use case, events, read-model tables", 1)[1].split("\n## ")[0]
    first_cells = [row.split("|")[1] for row in section.splitlines() if row.startswith("| `")]

    def mapped(path: str) -> bool:
        group, _, leaf = path.rpartition(" ")
        return any(
            f"`{path}`" in cell
            or (group and cell.startswith(f" `{group} ") and f"`{leaf}`" in cell)
            for cell in first_cells
        )

    unmapped = [path for path in _command_paths(mind) if not mapped(path)]

    assert len(first_cells) > 30
    assert unmapped == []


@pytest.mark.parametrize(
    "name",
    sorted(
        n
        for n, c in mind.commands.items()
        if isinstance(c, click.Group) and not c.invoke_without_command
    ),
)
def test_a_group_named_alone_prints_its_help_as_help(cli: Cli, name: str) -> None:
    result = cli(name)

    assert result.exit_code == 2
    assert result.stderr.startswith(f"Usage: mind {name} ")
    assert "\\n" not in result.stderr and "\nCommands:\n" in result.stderr
