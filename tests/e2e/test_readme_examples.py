"""The README's shell examples run as written, in order, in a fresh home (turns on the mock)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import LOCOMO, REPO

# `mind` as the README's reader has it, except that a turn, a chat or a tick runs on LiteLLM's
# mock (a scripted reply unless the example gives one) and a follower catches up and exits.
WRAPPER = r"""
set -euo pipefail
mind() {
  local args=() sub="${1:-}" skip=0 scripted=0
  for a in "$@"; do
    if (( skip )); then skip=0; continue; fi
    case "$a" in
      --model|--api-base) skip=1; continue ;;
      --follow) continue ;;
      --mock-reply) scripted=1 ;;
    esac
    args+=("$a")
  done
  case "$sub" in
    turn|chat|tick) args+=(--model mock); (( scripted )) || args+=(--mock-reply "Noted.") ;;
  esac
  "$MIND_PYTHON" -c 'from mindledger.cli.main import main; main()' "${args[@]}"
}
"""


def shell_blocks(readme: str) -> list[str]:
    """The ```sh blocks, less the set-up (make) and the PostgreSQL one (it needs a server)."""
    blocks = re.findall(r"```sh\n(.*?)```", readme, flags=re.S)
    return [b for b in blocks if not b.startswith("make ") and "--postgres" not in b]


def run_shell(script: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, HOME=str(home), PYTHONPATH=str(REPO), MIND_PYTHON=sys.executable)
    env.update(MIND_NOW="2026-05-01T09:00:00Z", LITELLM_OFFLINE_MODE="true")
    env.pop("MIND_HOME", None)
    return subprocess.run(
        ["bash", "-c", WRAPPER + script + "\nwait\n"],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.slow
@pytest.mark.skipif(not LOCOMO.exists(), reason="the LoCoMo data is not beside the repository")
def test_the_readme_examples_run_as_written(tmp_path: Path) -> None:
    readme = (REPO / "README.md").read_text()
    work = tmp_path / "work" / "repo"
    work.mkdir(parents=True)
    (tmp_path / "work" / "shared").symlink_to(LOCOMO.parent.parent.parent)
    blocks = shell_blocks(readme)

    result = run_shell("\n".join(blocks), work, tmp_path / "home")
    query = next(line for b in blocks for line in b.splitlines() if "-p o owner" in line)
    rows = run_shell(f"export MIND_HOME=~/minds/echo\n{query}\n", work, tmp_path / "home")

    assert len(blocks) >= 6
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert "Send the weekly report on Friday" in rows.stdout.splitlines()[1]


def test_the_time_examples_run_on_a_mind_made_today(tmp_path: Path) -> None:
    # The README's and `tick --help`'s examples that give a time, on a mind whose events carry
    # today's clock (not the fixed MIND_NOW the walk-through above runs with).
    def given_a_time(text: str) -> list[str]:
        return [
            line.strip()
            for line in text.splitlines()
            if "mind tick" in line and ("MIND_NOW=" in line or "--now" in line)
        ]

    env = dict(os.environ, PYTHONPATH=str(REPO), MIND_PYTHON=sys.executable)
    env.update(MIND_HOME=str(tmp_path / "mind"), LITELLM_OFFLINE_MODE="true")
    env.pop("MIND_NOW", None)
    env.pop("MIND_ALLOW_PAST_NOW", None)
    help_text = subprocess.run(
        [sys.executable, "-c", "from mindledger.cli.main import main; main()", "tick", "--help"],
        env=env,
        capture_output=True,
        text=True,
    ).stdout
    examples = given_a_time((REPO / "README.md").read_text()) + given_a_time(help_text)
    script = "\n".join([WRAPPER, "mind init --name Echo", *examples])

    result = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True)

    assert len(examples) >= 2
    assert result.returncode == 0, result.stderr[-2000:]
