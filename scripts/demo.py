"""The main job: a short session with real turns against the embedded local model.

Run it with `make run`. It prints every command and its output, then verifies the ledger. The
135M-parameter local model is tiny and often wrong; it proves the pipeline end to end, offline.
Its first turn asks about the commitment opened just before; a reply the model does not finish
within its reply limit is still shown, marked as cut off.
Point `mind model set` at a stronger model (Ollama, OpenAI, ...) for real use.
"""

from __future__ import annotations

import os
import shlex
import sys
import tempfile

from click.testing import CliRunner

from mindledger.cli.main import mind

SESSION = [
    "init --name Echo",
    "commit 'Send the weekly report on Friday'",
    "concept define project.alpha 'The billing rewrite'",
    "concept define team.billing 'The billing team'",
    "concept relate project.alpha team.billing --as owned-by",
    "thread open 'Why did the import fail?' --content 'The nightly import failed on 3 May.'",
    "identity adopt Nova --reason 'chosen together'",
    "turn 'What did I promise to send on Friday?'",
    "turn 'Hello! What is the capital of France?'",
    "turn 'Thanks. Please remember that my sister is called Ada.' --json",
    "commitments",
    "threads",
    "graph neighbors project.alpha",
    "log --limit 5",
    "verify",
    "status",
]


def main() -> int:
    home = os.environ.get("MIND_HOME") or tempfile.mkdtemp(prefix="mind-demo-")
    runner = CliRunner()
    for line in SESSION:
        print(f"$ mind {line}")
        result = runner.invoke(mind, ["--home", home, *shlex.split(line)])
        print(result.output, end="")  # stdout and stderr, as a terminal would show them
        if result.exit_code != 0 and not line.startswith("turn"):
            return result.exit_code
    runner.invoke(mind, ["--home", home, "model", "stop-local"])
    print(f"\nThe mind lives in {home}; try `MIND_HOME={home} .venv/bin/mind chat`.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
