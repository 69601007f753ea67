"""The long fuzz run: the property tests of tests/fuzz with many more, freshly random examples.

Run: .venv/bin/python -m bench.fuzz [--examples 300] [-- extra pytest arguments]
(`make fuzz`). The suite runs the same properties with a few fixed examples each.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=300, help="examples per property")
    parser.add_argument("pytest_args", nargs="*", help="passed to pytest (e.g. -x, -k import)")
    options = parser.parse_args()
    env = dict(os.environ, MIND_FUZZ_EXAMPLES=str(options.examples), LITELLM_OFFLINE_MODE="true")
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "tests/fuzz"]
    return subprocess.call([*command, *options.pytest_args], cwd=REPO, env=env)


if __name__ == "__main__":
    raise SystemExit(main())
