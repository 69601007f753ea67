"""Our code loads only as `mindledger.…`: the main commands, each in its own process, never put a
bare `domain`, `cli`, `service`, `adapters` or `projections` module (or a submodule of one) into
sys.modules, nor even try to import one (docs/decisions/0100-one-name-in-site-packages.md).

The processes run with the repository on PYTHONPATH, where a bare `domain.events` would load
without an error as a second copy of `mindledger.domain.events` (splitting registries such as
EVENT_TYPES): that is the copy these tests look for."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.conftest import REPO

BARE = ("domain", "cli", "service", "adapters", "projections")
NOW = "2026-05-01T09:00:00Z"

# Runs before anything of ours is imported: a finder that notes every import of a bare name
# (and lets it go on), and at exit the bare names in sys.modules, written to REPORT.
WATCH = f"""
import atexit, json, os, sys
BARE = {BARE!r}
attempted = []

class Watch:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.split(".")[0] in BARE:
            attempted.append(name)
        return None

sys.meta_path.insert(0, Watch)

def report():
    loaded = sorted(n for n in sys.modules if n.split(".")[0] in BARE)
    with open(os.environ["REPORT"], "w", encoding="utf-8") as out:
        json.dump({{"loaded": loaded, "attempted": sorted(set(attempted))}}, out)

atexit.register(report)
"""
# The commands one after another in one process (a process each would pay the start-up ten
# times for the same check): what any of them loads stays in sys.modules for the report.
RUN_MINDS = WATCH + (
    "from mindledger.cli.main import main\n"
    "for args in json.loads(sys.argv.pop(1)):\n"
    "    sys.argv = ['mind', *args]\n"
    "    try:\n"
    "        main()\n"
    "    except SystemExit as done:\n"
    "        if done.code not in (0, None):\n"
    "            raise SystemExit(f'{args}: exit {done.code}') from None\n"
)
IMPORT_ALL = WATCH + (
    "import importlib, pkgutil, mindledger\n"
    "failed = []\n"
    "for m in pkgutil.walk_packages(mindledger.__path__, 'mindledger.', onerror=failed.append):\n"
    "    importlib.import_module(m.name)\n"
    "print(json.dumps({'modules': len(sys.modules), 'failed': failed}))\n"
)

COMMANDS = [
    ["init", "--name", "Echo"],
    ["commit", "Send the report"],
    ["commitments", "--json"],
    ["turn", "hi", "--model", "mock", "--mock-reply", "Hello", "--no-server", "--json"],
    ["recall", "report", "--no-server", "--json"],
    ["status", "--json"],
    ["verify", "--json"],
    ["log", "--json"],
    ["query", "SELECT 1", "--json"],
    ["serve", "--help"],
]


def clean_env(tmp_path: Path) -> dict[str, str]:
    """A fresh home, a fixed clock, no server, no network for LiteLLM, and the repository (only
    it) on PYTHONPATH; none of the caller's MIND_* settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MIND_")}
    env.update(
        HOME=str(tmp_path),
        MIND_HOME=str(tmp_path / "mind"),
        MIND_NOW=NOW,
        MIND_NO_SERVER="1",
        LITELLM_OFFLINE_MODE="true",
        PYTHONPATH=str(REPO),
    )
    return env


def run_watched(code: str, args: list[str], env: dict[str, str], report: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        env={**env, "REPORT": str(report)},
        cwd=report.parent,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"{args}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    assert report.exists(), f"{args}: the process ended without running its atexit handlers"
    seen: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
    return {**seen, "stdout": done.stdout}


def test_the_main_commands_load_no_bare_module(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    work = tmp_path / "work"
    work.mkdir()

    seen = run_watched(RUN_MINDS, [json.dumps(COMMANDS)], env, work / "report.json")

    assert (seen["loaded"], seen["attempted"]) == ([], [])
    assert '"ok": true' in seen["stdout"]  # the commands ran (verify's answer is among them)
    assert not (tmp_path / "mind" / "server.json").exists()  # no background server was left


def test_the_watch_sees_a_bare_import(tmp_path: Path) -> None:
    """The check itself: with the repository on the path a bare import loads a second copy, and
    the watch reports it (so an empty report above means something)."""
    work = tmp_path / "work"
    work.mkdir()
    code = WATCH + (
        "import domain.events, mindledger.domain.events as ours\n"
        "print(json.dumps(domain.events.EVENT_TYPES is ours.EVENT_TYPES))\n"
    )

    seen = run_watched(code, [], clean_env(tmp_path), work / "report.json")

    assert json.loads(seen["stdout"]) is False  # two copies, two registries
    assert {"domain", "domain.events"} <= set(seen["loaded"]) <= set(seen["attempted"])


def test_importing_every_module_of_mindledger_loads_no_bare_module(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()

    seen = run_watched(IMPORT_ALL, [], clean_env(tmp_path), work / "report.json")

    assert json.loads(seen["stdout"])["failed"] == []
    assert (seen["loaded"], seen["attempted"]) == ([], [])
