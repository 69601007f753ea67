"""Export/import round trip: `mind export --format jsonl`, `mind verify --export` (the
integrity check, and `--deep`) and `mind import ledger` on a large ledger, each next to the raw
rate of reading the same file and hashing each line (sha256) in the same run.

Run: .venv/bin/python -m bench.export_roundtrip [--sizes 100000 1000000]
[--base ../wt-base --rounds 3]

With `--base` (a checkout of the previous release), the checks are also timed alternately, each
round in the same order, in processes of their own (the check's own time, without the
interpreter's start): the raw read of each file, the base tree's check (it reads only version 2,
so it checks a version 2 export of the same ledger, written by this tree's `export_lines`), this
tree's integrity check and its deep check of the version 3 file. Each check's rate is compared
with the raw rate of the file it reads. Each tree's modules are compiled before the first round
(`compiled`), so a timed check loads them as an installed mind does, not compiling its
modules from source inside the time that the raw read has no part in.
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
    deep_s, deep = timed(lambda: run_mind(source, "verify", "--export", str(path), "--deep"))
    import_s, imported = timed(lambda: run_mind(target, "import", "ledger", str(path)))
    assert checked["ok"] and deep["ok"] and checked["level"] == "integrity"
    assert imported["head"] == exported["head"] == checked["head"] == deep["head"]
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
        "verify_deep_events_per_s": round(events / deep_s),
        "verify_deep_ratio_to_raw": round(events / deep_s / raw, 3),
        "import_events_per_s": round(events / import_s),
        "import_ratio_to_raw": round(events / import_s / raw, 3),
        "seconds": {
            "export": round(export_s, 2),
            "raw": round(raw_s, 2),
            "verify": round(verify_s, 2),
            "verify_deep": round(deep_s, 2),
            "import": round(import_s, 2),
        },
    }


REPO = Path(__file__).resolve().parent.parent
# One check in a process of its own, after the floor's imports: wall and CPU seconds. A base
# tree's `verify_export` has one level (the deep check) and no `deep` argument.
# The CPU time counts the check's forked half too (adapters/export_split.py): a child's, once
# it is reaped, is in RUSAGE_CHILDREN.
_TIMED_VERIFY = (
    "import resource, sys, time; from pathlib import Path;"
    "from mindledger.ledger_io import verify_export;"
    "kw = {'deep': True} if sys.argv[2] == 'deep' else {};"
    "kids = lambda: sum(resource.getrusage(resource.RUSAGE_CHILDREN)[:2]);"
    "t, c, k = time.perf_counter(), time.process_time(), kids();"
    "r = verify_export(Path(sys.argv[1]), **kw); assert r['ok'], r;"
    "print(time.perf_counter() - t, time.process_time() - c + kids() - k)"
)


def compiled(tree: Path, cache: Path) -> None:
    """The tree's modules compiled into `cache`, where `_verify_seconds` loads them from (the
    checks import some of them inside their time; with PYTHONDONTWRITEBYTECODE set, as here,
    each process compiled them from source again: ~10 ms of CPU, 5% of a check of 100k lines)."""
    env = dict(os.environ, PYTHONPYCACHEPREFIX=str(cache))
    subprocess.run(
        [sys.executable, "-c", _COMPILE, str(tree / "mindledger")], env=env, cwd=tree, check=True
    )


# Every module under the package's folder, through its links (`compileall` skips a linked
# folder, and mindledger/adapters is one), each under the path it is imported by.
_COMPILE = (
    "import compileall, os, sys\n"
    "for folder, _, names in os.walk(sys.argv[1], followlinks=True):\n"
    "    for name in names:\n"
    "        if name.endswith('.py'):\n"
    "            assert compileall.compile_file(os.path.join(folder, name), quiet=2)\n"
)


def _verify_seconds(
    tree: Path, path: Path, level: str, cache: Path | None = None
) -> tuple[float, float]:
    """Wall and CPU seconds of one check (CPU time is the steadier on a busy machine), its
    modules loaded from `cache` (see `compiled`) when given."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    if cache is not None:
        env["PYTHONPYCACHEPREFIX"] = str(cache)
    out = subprocess.run(
        [sys.executable, "-c", _TIMED_VERIFY, str(path), level],
        env=env,
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
    )
    wall, cpu = out.stdout.split()[-2:]
    return float(wall), float(cpu)


def export_version_2(home: Path, path: Path) -> Path:
    """The home's ledger written as version 2 (what a base tree before version 3 reads)."""
    from mindledger.adapters.ledger_export import Genesis, export_lines
    from mindledger.compose import Home, open_keys, open_reader

    reader, keys = open_reader(Home(home)), open_keys(Home(home))
    try:
        events, head = reader.head()
        rows = reader.rows(stop=events)
        with open(path, "wb") as out:
            for line in export_lines(Genesis(*reader.meta()), rows, events, head, keys, 2):
                out.write(line)
    finally:
        keys.close()
        reader.close()
    return path


def _raw_seconds(path: Path) -> tuple[float, float, int]:
    started, cpu_started = time.perf_counter(), time.process_time()
    lines = raw_read_and_hash(path)
    return time.perf_counter() - started, time.process_time() - cpu_started, lines


# What is timed each round, in this order: (name, tree, file, level); "raw" reads and hashes.
RUNS = (
    ("raw_v3", None, "v3", "raw"),
    ("raw_v2", None, "v2", "raw"),
    ("base_v2", "base", "v2", "its only level"),  # the deep check, by another name
    ("this_integrity", "this", "v3", "integrity"),
    ("this_deep", "this", "v3", "deep"),
)


def verify_alternating(
    v3: Path,
    v2: Path,
    base: Path,
    rounds: int,
    runs: tuple[tuple[str, str | None, str, str], ...] = RUNS,
) -> dict[str, Any]:
    """The raw read + sha256 of each file, the base tree's check of the version 2 file, this
    tree's integrity and deep checks of the version 3 file, alternately; lines per second of
    each (wall and CPU) and each check's ratio to the raw rate of the file it reads."""
    files, trees = {"v3": v3, "v2": v2}, {"base": base.resolve(), "this": REPO}
    cache = v3.parent / "pycache"  # both trees' compiled modules, each under its own path
    for tree in trees.values():
        compiled(tree, cache)
    wall = {name: 0.0 for name, *_ in runs}
    cpu = dict(wall)
    lines = 0
    for _ in range(rounds):
        for name, tree, file, level in runs:
            if tree is None:
                w, c, lines = _raw_seconds(files[file])
            else:
                w, c = _verify_seconds(trees[tree], files[file], level, cache)
            wall[name] += w
            cpu[name] += c
    figures: dict[str, Any] = {"lines": lines, "rounds": rounds}
    for kind, seconds in (("wall", wall), ("cpu", cpu)):
        rates = {name: lines * rounds / s for name, s in seconds.items()}
        figures |= {f"{name}_lines_per_{kind}_s": round(rate) for name, rate in rates.items()}
        for name, _, file, level in runs:
            if level != "raw":
                ratio = rates[name] / rates[f"raw_{file}"]
                figures[f"{name}_ratio_to_raw_{kind}"] = round(ratio, 4)
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
                old = export_version_2(Path(tmp) / "source", Path(tmp) / "v2.jsonl")
                report("verify_export", verify_alternating(path, old, args.base, args.rounds))


if __name__ == "__main__":
    main()
