"""The main job until turns land: a short scripted session of direct commands on a scratch mind.

Run it with `make run`. It prints every command and its output, then verifies the ledger.
"""

from __future__ import annotations

import os
import shlex
import sys
import tempfile

from click.testing import CliRunner

from cli.main import mind

SESSION = [
    "init --name Echo",
    "commit 'Send the weekly report on Friday'",
    "concept define project.alpha 'The billing rewrite'",
    "concept define team.billing 'The billing team'",
    "concept relate project.alpha team.billing --as owned-by",
    "thread open 'Why did the import fail?' --content 'The nightly import failed on 3 May.'",
    "identity adopt Nova --reason 'chosen together'",
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
        print(result.output, end="")
        if result.exit_code != 0:
            print(result.stderr, file=sys.stderr, end="")
            return result.exit_code
    print(f"\nThe mind lives in {home}; try `MIND_HOME={home} .venv/bin/mind log`.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
