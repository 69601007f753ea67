"""A plain `mind mcp` goes straight to the server's entry; anything else is click's to parse."""

from __future__ import annotations

from pathlib import Path

import pytest

from mindledger.cli.mcp_entry import plain_mcp_home

D = "{folder}"  # the test's folder, filled in per case
PLAIN = [
    (["mcp", "--home", D], D),
    (["--home", D, "mcp"], D),
    ([f"--home={D}", "mcp", "--json"], D),
    (["mcp", "--json", "--home", D], D),
]
NOT_PLAIN = [
    ["mcp", "--help"],
    ["--help"],
    ["turn", "hi", "--home", D],
    ["mcp", "mcp", "--home", D],
    ["--json", "mcp", "--home", D],  # the group takes no --json: click says so
    ["mcp", "--home", D, "--home", D],
    ["mcp", "--home"],
    ["mcp", "--home", ""],
    ["mcp", "--home", "\udcff"],  # undecodable: the command line's own refusal
    ["mcp", "--home", "{folder}/a-file"],  # not a folder: click's words
    ["mcp", "--home", "{folder}/missing"],
    [],
]


@pytest.mark.parametrize(("argv", "home"), PLAIN)
def test_a_plain_mcp_call_names_its_home(argv: list[str], home: str, tmp_path: Path) -> None:
    given = [a.format(folder=tmp_path) for a in argv]

    assert plain_mcp_home(given) == home.format(folder=tmp_path)


@pytest.mark.parametrize("argv", NOT_PLAIN)
def test_any_other_call_is_left_to_click(argv: list[str], tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a folder")

    assert plain_mcp_home([a.format(folder=tmp_path) for a in argv]) is None


def test_without_home_it_is_mind_home_else_the_data_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "data" / "mindledger").mkdir(parents=True)
    monkeypatch.setenv("MIND_HOME", str(tmp_path))
    from_env = plain_mcp_home(["mcp"])
    monkeypatch.delenv("MIND_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))

    assert from_env == str(tmp_path)
    assert plain_mcp_home(["mcp"]) == str(tmp_path / "data" / "mindledger")
