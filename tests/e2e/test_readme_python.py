"""The README's Python API examples run as written, in order, on a mind made by `mind init`
(the real-model line runs on the scripted mock here: the embedded model is not needed to check
the API)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

REAL_MODEL = 'model="local/smollm2-135m-instruct"'


def python_blocks() -> list[str]:
    """The README's ```python blocks that use the Python API."""
    readme = (REPO / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, flags=re.S)
    return [b for b in blocks if "import mindledger" in b]


def test_the_readme_python_examples_run_as_written(tmp_path: Path) -> None:
    env = dict(os.environ, HOME=str(tmp_path), PYTHONPATH=str(REPO), MIND_NO_SERVER="1")
    env.update(MIND_NOW="2026-05-01T09:00:00Z", LITELLM_OFFLINE_MODE="true")
    env.pop("MIND_HOME", None)
    mind = [sys.executable, "-c", "from mindledger.cli.main import main; main()"]
    made = subprocess.run(
        [*mind, "--home", str(tmp_path / "minds" / "echo"), "init", "--name", "Echo"],
        env=env,
        capture_output=True,
        text=True,
    )
    blocks = python_blocks()
    script = "\n".join(b.replace(REAL_MODEL, 'model="mock", mock_reply="Hi."') for b in blocks)

    ran = subprocess.run(
        [sys.executable, "-c", script], env=env, cwd=tmp_path, capture_output=True, text=True
    )

    assert made.returncode == 0, made.stderr
    assert len(blocks) == 2 and REAL_MODEL in blocks[1]
    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.splitlines()
    assert lines[0].startswith("Call the plumber. ")
    assert lines[1] == "4471"
    assert any("boiler" in line for line in lines[2:-3])
    assert lines[-2] == "Hi."
    assert lines[-1] == "Error: budget 10 is too small; give at least 50 tokens"
    assert (tmp_path / "backup-py" / "ledger.jsonl").is_file()
    assert "Traceback" not in ran.stderr
