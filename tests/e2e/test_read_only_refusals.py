"""Every command that records, run on a home this process cannot write (chmod 0500 folders,
0400 files), stops in one `Error:` line before any work: no model is asked (a loopback
provider that would hold the answer never hears a request), nothing in the home changes, and
the home serves as before once it is writable again.

Root ignores permission bits, so as root the `mind` processes run through `setpriv` without
CAP_DAC_OVERRIDE (still uid 0, now bound by the files' modes like any user); another user is
bound by the modes alone. (`nobody` cannot run the suite's interpreter where it lives under a
private /root, so it is not the way used here.)"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import Result

from tests.conftest import subprocess_env
from tests.service.stub_provider import Gate, held_provider

MIND = [sys.executable, "-c", "from mindledger.cli.main import main; main()"]
DROP = "-dac_override,-dac_read_search"
HELD = "@held"  # stands for the held provider's URL in the table below
QUESTION = "What colour is the boat?"


def unprivileged() -> list[str]:
    """The prefix that makes a `mind` process bound by the files' modes (none when not root)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root and setpriv is not installed: root would write anyway")
    prefix = [setpriv, f"--bounding-set={DROP}", f"--inh-caps={DROP}"]
    if subprocess.run([*prefix, "true"], check=False).returncode != 0:
        pytest.skip("cannot drop CAP_DAC_OVERRIDE here: root would write anyway")
    return prefix


def mind(home: Path, *args: str, prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*prefix, *MIND, *args],
        env=subprocess_env(home, LITELLM_OFFLINE_MODE="true", OPENAI_API_KEY="sk-test-not-real"),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def snapshot(home: Path) -> dict[str, tuple[int, bytes]]:
    return {
        str(p.relative_to(home)): (p.stat().st_mode, p.read_bytes() if p.is_file() else b"")
        for p in sorted(home.rglob("*"))
    }


def set_modes(home: Path, writable: bool) -> None:
    for path in [home, *home.rglob("*")]:
        if path.is_dir():
            path.chmod(0o700 if writable else 0o500)
        else:
            path.chmod(0o600 if writable else 0o400)


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A mind with a commitment, a thread, a knowledge item, an ask (its vector cache) and a
    turn, its read model caught up."""
    home = tmp_path_factory.mktemp("made") / "mind"
    for args in (
        ["init", "--name", "Echo"],
        ["commit", "Water the plants"],
        ["thread", "open", "Why does the shed leak?", "--content", "Since May."],
        ["remember", "The boat is red", "--question", QUESTION],
        ["ask", QUESTION, "--model", "mock", "--mock-reply", "Red."],
        ["turn", "The shed is blue", "--model", "mock", "--mock-reply", "Noted."],
        ["project"],
    ):
        done = made_here(home, *args)
        assert done.exit_code == 0, done.stderr
    ids = {
        "@cid": json.loads(made_here(home, "commitments", "--json").stdout)[0]["cid"],
        "@thread": json.loads(made_here(home, "threads", "--json").stdout)[0]["id"],
        "@item": json.loads(made_here(home, "knowledge", "list", "--json").stdout)[0]["item_id"],
    }
    return home, ids


def made_here(home: Path, *args: str) -> Result:
    """`mind ARGS` in this process, with the environment `mind` gives the processes: for the
    set-up (the processes under test are the refused writes)."""
    from click.testing import CliRunner

    from mindledger.cli.main import mind as mind_command

    env = {**subprocess_env(home, LITELLM_OFFLINE_MODE="true"), "MIND_NOW": None}
    return CliRunner(env=env).invoke(mind_command, list(args), catch_exceptions=False)


@pytest.fixture()
def read_only(
    made: tuple[Path, dict[str, str]], tmp_path: Path
) -> Iterator[tuple[Path, Gate, tuple[str, ...]]]:
    home = tmp_path / "mind"
    subprocess.run(["cp", "-a", str(made[0]), str(home)], check=True)
    (tmp_path / "chat.jsonl").write_text('{"role": "user", "content": "The gate is green"}\n')
    prefix = tuple(unprivileged())
    set_modes(home, writable=False)
    with held_provider("Never sent.") as gate:
        try:
            yield home, gate, prefix
        finally:
            set_modes(home, writable=True)


def command(home: Path, words: list[str], ids: dict[str, str], gate: Gate) -> list[str]:
    """`words` with the table's stand-ins filled: a commitment's CID, a thread's id, the item's
    id (`ids`), the held provider's URL, the transcript's path."""
    filled = {**ids, "@chat": str(home.parent / "chat.jsonl"), HELD: gate.url}
    return [filled.get(w, w) for w in words]


WRITES = [
    ["commit", "Call the plumber"],
    ["close", "@cid"],
    ["turn", "Is it raining?", "--model", "openai/stub", "--api-base", HELD],
    ["ask", "Where is the shed?", "--model", "openai/stub", "--api-base", HELD],
    ["ask", QUESTION, "--model", "openai/stub", "--api-base", HELD],
    ["remember", "The gate is green", "--question", "What colour is the gate?"],
    ["knowledge", "verify", "@item"],
    ["thread", "open", "Where did the key go?", "--content", "Lost on Monday."],
    ["thread", "resolve", "@thread", "--as", "dissolved", "--reason", "It is dry now."],
    ["concept", "define", "boat.colour", "The colour of the boat."],
    ["identity", "adopt", "Bob"],
    ["config", "set", "threads.top_k", "5"],
    ["tick"],
    ["import", "chat", "@chat"],
    ["forget", "--commitment", "@cid", "--yes"],
    ["project"],
    ["replay"],
]


@pytest.mark.parametrize("words", WRITES, ids=lambda w: " ".join(w[:2]))
def test_a_write_on_a_read_only_home_is_one_line_before_any_work(
    read_only: tuple[Path, Gate, tuple[str, ...]],
    made: tuple[Path, dict[str, str]],
    words: list[str],
) -> None:
    home, gate, prefix = read_only
    args = command(home, words, made[1], gate)
    before = snapshot(home)

    refused = mind(home, *args, prefix=prefix)

    assert refused.returncode == 1
    lines = refused.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), refused.stderr
    assert "read-only" in lines[0], lines[0]
    assert not gate.received.is_set()  # no model was asked
    assert snapshot(home) == before


def test_a_read_only_home_is_refused_by_mind_serve_in_one_line_and_served_once_writable(
    read_only: tuple[Path, Gate, tuple[str, ...]],
) -> None:
    home, _, prefix = read_only
    before = snapshot(home)

    refused = mind(home, "serve", "--port", "0", "--idle-exit", "1", prefix=prefix)
    unchanged = snapshot(home) == before
    set_modes(home, writable=True)
    verified = mind(home, "verify", "--json")
    recorded = mind(home, "commit", "Call the plumber")

    assert refused.returncode == 1
    lines = refused.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: cannot create"), refused.stderr
    assert unchanged
    assert verified.returncode == 0 and json.loads(verified.stdout)["ok"] is True
    assert recorded.returncode == 0, recorded.stderr
