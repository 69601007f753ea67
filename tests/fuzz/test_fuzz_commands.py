"""Arbitrary text, bytes and hostile strings in every command's arguments and options."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz.harness import argv_texts, fuzz_step

T = "<text>"  # a slot the fuzzer fills with text
N = "<name>"  # a file name the fuzzer fills, inside the test's folder (never "/" or "..")
COMMANDS: list[list[str]] = [
    ["commit", T],
    ["commit", T, "--thread", T],
    ["commit", T, "--concept", T, "--json"],
    ["close", T],
    ["close", T, "--reason", T],
    ["concept", "define", T, T],
    ["concept", "alias", T, T],
    ["concept", "relate", T, T, "--as", T],
    ["concept", "bind", T, "--commitment", T],
    ["thread", "open", T, "--content", T, "--json"],
    ["thread", "resolve", T, "--as", "done", "--reason", T],
    ["threads", "--as-of", T],
    ["identity", "adopt", T, "--reason", T],
    ["config", "set", "threads.cap", T],
    ["config", "set", "workspace", T],
    ["model", "set", T],
    ["recall", T],
    ["recall", T, "--budget", T],
    ["query", T],
    ["query", "SELECT $x AS v", "-p", "x", T, "--csv"],
    ["query", "SELECT 1", "--timeout", T],
    ["log", "--limit", T, "--kind", T],
    ["verify", "--head", T],
    ["graph", "neighbors", T],
    ["turn", T, "--model", "mock", "--mock-reply", T],
    ["tick", "--now", T, "--model", "mock", "--mock-reply", T],
    ["init", "--name", T],
    ["import", "chat", T],
    ["export", N, "--format", "csv"],
    ["report", "activity", "--format", "png", "--out", N],
    ["graph", "export", "--format", "graphml", "--out", N],
    ["replay", "--into", N, "--check"],
]
# Names stay in the test's folder: an export to "/" would succeed, as root, and litter the disk.
names = argv_texts.map(lambda t: "out-" + t.replace("/", "_"))
pytestmark = pytest.mark.usefixtures("mind_home")


def _fill(template: list[str], data: st.DataObject) -> list[str]:
    return [
        data.draw(argv_texts) if part == T else data.draw(names) if part == N else part
        for part in template
    ]


@pytest.mark.parametrize("template", COMMANDS, ids=" ".join)
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_any_argument_ends_in_success_or_one_line_and_keeps_the_ledger_sound(
    template: list[str],
    data: st.DataObject,
    mind_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)  # anything a command writes beside it lands in the test's folder
    args = _fill(template, data)

    fuzz_step(mind_home, args)
