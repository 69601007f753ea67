"""Export/import round trip: `mind export --format jsonl`, `mind verify --export` and
`mind import ledger` on a large ledger, each next to the raw rate of reading the same file and
hashing each line (sha256) in the same run.

Run: .venv/bin/python -m bench.export_roundtrip [--sizes 100000 1000000]
[--base ../wt-base --rounds 3]

With `--base` (a checkout of the previous release), `verify --export` of the same file is also
timed alternately with this tree's and the raw read, each round in the same order, in processes
of their own (the check's own time, without the interpreter's start).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from bench.common import fill, new_mind, report, timed
from mindledger.cli.main import mind


def run_mind(home: Path, *args: str) -> dict[str, Any]:
    """`mind --home HOME ARGS --json` in-process; its JSON summary."""
    result = CliRunner().invoke(mind, ["--home", str(home), *args, "--json"])
    assert result.exit_code == 0, result.output
    summary: dict[str, Any] = json.loads(result.stdout)
    return summary


def raw_read_and_hash(path: Path) -> int:
    """The floor: read the file line by line and sha256 each line; returns the line count."""
    lines = 0
    with open(path, "rb", buffering=1 << 20) as f:
        for line in f:
            hashlib.sha256(line).digest()
            lines += 1
    return lines


def round_trip(folder: Path, size: int) -> dict[str, Any]:
    source, target = folder / "source", folder / "target"
    app = new_mind(source)
    fill_s, _ = timed(lambda: fill(app, size))
    app.close()
    export_s, exported = timed(
        lambda: run_mind(source, "export", str(folder / "out"), "--format", "jsonl")
    )
    path = Path(exported["file"])
    raw_s, lines = timed(lambda: raw_read_and_hash(path))
    verify_s, checked = timed(lambda: run_mind(source, "verify", "--export", str(path)))
    import_s, imported = timed(lambda: run_mind(target, "import", "ledger", str(path)))
    assert checked["ok"] and imported["head"] == exported["head"] == checked["head"]
    events = exported["events"]
    assert imported["events"] == events and lines == events + 1
    raw = lines / raw_s
    return {
        "events": events,
        "file_mb": round(exported["bytes"] / 2**20, 1),
        "bytes_per_event": round(exported["bytes"] / events),
        "fill_events_per_s": round(events / fill_s),
        "raw_read_sha256_lines_per_s": round(raw),
        "export_events_per_s": round(events / export_s),
        "export_ratio_to_raw": round(events / export_s / raw, 3),
        "verify_export_events_per_s": round(events / verify_s),
        "verify_ratio_to_raw": round(events / verify_s / raw, 3),
        "import_events_per_s": round(events / import_s),
        "import_ratio_to_raw": round(events / import_s / raw, 3),
        "seconds": {
            "export": round(export_s, 2),
            "raw": round(raw_s, 2),
            "verify": round(verify_s, 2),
            "import": round(import_s, 2),
        },
    }


REPO = Path(__file__).resolve().parent.parent
_TIMED_VERIFY = (
    "import sys, time; from pathlib import Path; from mindledger.ledger_io import verify_export;"
    "t, c = time.perf_counter(), time.process_time(); r = verify_export(Path(sys.argv[1]));"
    "assert r['ok'], r; print(time.perf_counter() - t, time.process_time() - c)"
)


def _verify_seconds(tree: Path, path: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one check (CPU time is the steadier on a busy machine)."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run(
        [sys.executable, "-c", _TIMED_VERIFY, str(path)],
        env=env,
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
    )
    wall, cpu = out.stdout.split()[-2:]
    return float(wall), float(cpu)


def verify_alternating(path: Path, base: Path, rounds: int) -> dict[str, Any]:
    """`verify --export` of one file by this tree and by `base`, and the raw read + sha256,
    alternately; lines per second of each (wall and CPU) and each check's ratio to raw."""
    wall = {"raw": 0.0, "base": 0.0, "this": 0.0}
    cpu = dict(wall)
    lines = 0
    for _ in range(rounds):
        started, cpu_started = time.perf_counter(), time.process_time()
        lines = raw_read_and_hash(path)
        wall["raw"] += time.perf_counter() - started
        cpu["raw"] += time.process_time() - cpu_started
        for name, tree in (("base", base.resolve()), ("this", REPO)):
            w, c = _verify_seconds(tree, path)
            wall[name] += w
            cpu[name] += c
    figures: dict[str, Any] = {"lines": lines, "rounds": rounds}
    for kind, seconds in (("wall", wall), ("cpu", cpu)):
        rates = {name: lines * rounds / s for name, s in seconds.items()}
        figures |= {f"{name}_lines_per_{kind}_s": round(rate) for name, rate in rates.items()}
        figures[f"base_ratio_to_raw_{kind}"] = round(rates["base"] / rates["raw"], 4)
        figures[f"this_ratio_to_raw_{kind}"] = round(rates["this"] / rates["raw"], 4)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    parser.add_argument("--base", type=Path, help="a checkout of the previous release")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            report("export_roundtrip", round_trip(Path(tmp), size))
            if args.base is not None:
                path = Path(tmp) / "out" / "ledger.jsonl"
                report("verify_export", verify_alternating(path, args.base, args.rounds))


if __name__ == "__main__":
    main()
