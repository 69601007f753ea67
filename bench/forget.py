"""Forgetting (issue 16): `mind forget --speaker NAME --yes --json` on a sealed mind of N events,
as a whole process and by phase, next to references measured in the same run on the same
ledger: a raw sqlite3 read of every row (and the same with each state decoded by orjson) and
`mind replay --into X`. Afterwards `mind verify` must pass and a canary the speaker said must be
in no file of the home (it is in the read model before).

The mind: conversations of 1,000 messages among five speakers, imported through the application
(so every message's words are sealed under a key of its own), and about a tenth of
`bench.common.fill`'s commitments, concepts and threads. The load average goes with each figure:
the machine is shared. The phases come from the same `mind forget` process: it runs under a
wrapper (`PHASED`) that times the phase functions and otherwise starts the CLI as the `mind`
script does.

Run: .venv/bin/python -m bench.forget [--sizes 100000 1000000] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import duckdb
import orjson

from bench.common import T0, fill, new_mind, report, timed
from mindledger.domain.application import Mind
from mindledger.domain.conversation import Observed

REPO = Path(__file__).resolve().parent.parent
SPEAKERS = ("Caroline", "Melanie", "Gina", "Jon", "Nova")
TARGET = SPEAKERS[0]
PER_CONVERSATION = 1000
WORDS = (
    "garden painting beach concert recipe adoption school hiking camera festival guitar "
    "pottery library marathon ceramics sunrise workshop volunteer museum picnic kitten "
    "bicycle lantern harbour meadow novel journal violin orchard mountain"
).split()

# Runs `mind` as its script does, with the forget's phase functions timed (start and end
# against this process's clock); the marks go to stderr as one JSON line at exit.
PHASED = """
import atexit, json, sys, time
marks = []
def timed(name, fn):
    def run(*args, **kwargs):
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            marks.append((name, start, time.perf_counter()))
    return run
t0 = time.perf_counter()
from mindledger import adapters, domain, forget, projections
import mindledger.adapters.forget_plan, mindledger.adapters.key_store
import mindledger.domain.application, mindledger.projections.engine.purge
import mindledger.forget_aside
adapters.forget_plan.plan_forget = timed("plan", adapters.forget_plan.plan_forget)
# A forget plans by lookup in the home's index where it can (plan_of), by a scan otherwise.
aside = mindledger.forget_aside
aside.plan_of = timed("plan", aside.plan_of)
aside.swap_in = timed("rebuild", aside.swap_in)
store = adapters.key_store.SQLiteKeyStore
store.destroy = timed("destroy", store.destroy)
forget.open_mind = timed("open_mind", forget.open_mind)
app = domain.application.Mind
app.record_forgotten = timed("record", app.record_forgotten)
purge = projections.engine.purge
purge.rebuild_in_place = timed("rebuild", purge.rebuild_in_place)
forget.forget_data = timed("forget_data", forget.forget_data)
atexit.register(lambda: print("PHASES " + json.dumps({"t0": t0, "marks": marks}), file=sys.stderr))
from mindledger.cli.main import main
main()
"""


def load() -> float:
    """The 1-minute load average (2 cores: above 2 means waiting for a core)."""
    return round(os.getloadavg()[0], 2)


def message(i: int, speaker: str) -> str:
    a, b, c = WORDS[i % 29], WORDS[i * 7 % 29], WORDS[i * 13 % 29]
    return f"{speaker} here: the {a} and the {b} went well on day {i % 365}, next the {c} #{i}"


def build(app: Mind, size: int, canary: str) -> int:
    """About `size` events: a tenth from `fill`, the rest imported conversations; `canary` is
    in one message of TARGET's in the middle. Returns the events appended."""
    written = fill(app, size // 10)
    n, conversations = 0, 0
    middle = (size - written) // 2
    while written < size:
        messages = []
        for k in range(min(PER_CONVERSATION, size - written - 1)):
            speaker = SPEAKERS[k % len(SPEAKERS)]
            text = f"The vault code is {canary}" if n == middle - 1 else message(n, speaker)
            if n == middle - 1:
                speaker = TARGET
            said = T0 + timedelta(seconds=n * 41)
            messages.append(Observed(speaker, text, said, f"m{n}", f"session {k // 100}"))
            n += 1
        added, _ = app.import_conversation(f"bench:{conversations}", list(SPEAKERS), messages)
        written += added + 1  # and its Started event
        conversations += 1
    return written + 1  # the identity


def run_mind(
    home: Path, *args: str, script: str = "from mindledger.cli.main import main; main()"
) -> Any:
    """`mind ARGS --json` as a process: (wall seconds, JSON, stderr)."""
    env = dict(os.environ, MIND_HOME=str(home), PYTHONPATH=str(REPO))
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", script, *args, "--json"],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - start
    assert done.returncode == 0, done.stderr[-2000:]
    return seconds, json.loads(done.stdout), done.stderr


def raw_read(ledger: Path, decode: bool) -> int:
    """The floor: every chain row joined with its event, as the reader selects them, in one
    statement (and with `decode`, each state parsed by orjson); returns the rows."""
    con = sqlite3.connect(f"file:{ledger}?mode=ro", uri=True)
    cursor = con.execute(
        "SELECT c.position, c.content_hash, c.hash, e.topic, e.originator_id, "
        "e.originator_version, e.state FROM ledger_chain c "
        "LEFT JOIN stored_events e ON e.rowid = c.notification_id ORDER BY c.position"
    )
    rows = 0
    while chunk := cursor.fetchmany(5000):
        rows += len(chunk)
        if decode:
            for row in chunk:
                orjson.loads(row[6])
    con.close()
    return rows


def holders(home: Path, needle: str) -> list[str]:
    """The files under `home` whose bytes contain `needle`."""
    found, data = [], needle.encode()
    for path in sorted(home.rglob("*")):
        if path.is_file() and data in path.read_bytes():
            found.append(str(path.relative_to(home)))
    return found


def in_read_model(home: Path, needle: str) -> int:
    """Messages of the published read model whose text holds `needle`."""
    con = duckdb.connect(str(home / "readmodel.published.duckdb"), read_only=True)
    try:
        sql = "SELECT count(*) FROM messages WHERE contains(text, ?)"
        row = con.execute(sql, [needle]).fetchone()
    finally:
        con.close()
    return int(row[0]) if row else 0


def phases(stderr: str, wall: float) -> dict[str, float]:
    """The forget's phases in seconds, from the PHASED wrapper's marks."""
    line = next(x for x in stderr.splitlines() if x.startswith("PHASES "))
    data = json.loads(line.removeprefix("PHASES "))
    spans: dict[str, tuple[float, float]] = {}
    for name, start, end in data["marks"]:
        first = spans.get(name, (start, end))
        spans[name] = (min(first[0], start), max(first[1], end))
    plan, destroy, forget = spans["plan"], spans["destroy"], spans["forget_data"]
    rebuild = spans.get("rebuild", (forget[1], forget[1]))  # nothing to purge: no read model
    fact = (spans["open_mind"][0], spans["record"][1])
    timings = {
        "start_and_imports": wall - (forget[1] - forget[0]),
        "plan_scan": plan[1] - plan[0],
        "keys_counted_store_opened": destroy[0] - plan[1],
        "key_destruction": destroy[1] - destroy[0],
        "forgotten_event": fact[1] - fact[0],
        "read_model_rebuild": rebuild[1] - rebuild[0],
    }
    timings["rest"] = wall - sum(timings.values())
    return {k: round(v, 2) for k, v in timings.items()}


def profile_plan(home: Path) -> str:
    """cProfile of the plan scan in this process (read-only: nothing is destroyed)."""
    from mindledger.adapters.forget_plan import plan_forget
    from mindledger.compose import Home, open_keys, open_reader
    from mindledger.domain.forgetting import Selector

    reader = open_reader(Home(home))
    keys = open_keys(Home(home))
    profiler = cProfile.Profile()
    profiler.enable()
    plan_forget(reader, Selector("speaker", TARGET), keys)
    profiler.disable()
    keys.close()
    reader.close()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(12)
    return out.getvalue()


def bench(root: Path, size: int, profile: bool) -> dict[str, Any]:
    home, canary = root / f"n{size}", f"canary{uuid.uuid4().hex[:12]}"
    app = new_mind(home)
    build_load = load()
    build_s, events = timed(lambda: build(app, size, canary))
    app.close()
    figures: dict[str, Any] = {"events": events, "build_s": round(build_s, 1)}
    figures["build_events_per_s"] = round(events / build_s)
    figures["build_load"] = [build_load, load()]
    project_s, projected, _ = run_mind(home, "project")
    figures["project_s"], figures["project_load"] = round(project_s, 1), load()
    assert in_read_model(home, canary) == 1, "the canary is not in the read model"
    figures["canary_files_before"] = holders(home, canary)

    for decode in (False, True):
        seconds, rows = timed(lambda d=decode: raw_read(home / "ledger.sqlite", d))
        name = "raw_read_decode" if decode else "raw_read"
        figures[f"{name}_rows_per_s"], figures[f"{name}_load"] = round(rows / seconds), load()
    replay_s, replayed, _ = run_mind(home, "replay", "--into", str(root / f"replay{size}.duckdb"))
    figures["replay_s"], figures["replay_load"] = round(replay_s, 1), load()
    figures["replay_rebuild_s"] = replayed["seconds"]  # the rebuild alone, start-up aside
    figures["replay_events_per_s"] = round(events / replayed["seconds"])
    if profile:
        print(profile_plan(home), file=sys.stderr)

    figures["python_pass_s"] = round(
        timed(lambda: subprocess.run([sys.executable, "-c", ""]))[0], 2
    )
    forget_load = load()
    wall, forgot, stderr = run_mind(
        home, "forget", "--speaker", TARGET.lower(), "--yes", script=PHASED
    )
    assert forgot["forgotten"], forgot
    figures["forget"] = {k: forgot[k] for k in ("events", "keys", "counts", "context_turns")}
    figures["forget_wall_s"], figures["forget_load"] = round(wall, 1), [forget_load, load()]
    figures["forget_phases_s"] = timed_phases = phases(stderr, wall)
    plan_rate = events / max(timed_phases["plan_scan"], 1e-6)
    figures["plan_scan_events_per_s"] = round(plan_rate)
    figures["plan_scan_to_raw_read"] = round(plan_rate / figures["raw_read_rows_per_s"], 3)
    figures["plan_scan_to_raw_read_decode"] = round(
        plan_rate / figures["raw_read_decode_rows_per_s"], 3
    )
    figures["rebuild_to_replay"] = round(
        timed_phases["read_model_rebuild"] / max(replayed["seconds"], 1e-6), 2
    )
    figures["forget_to_replay"] = round(wall / replay_s, 2)

    verify_s, verified, _ = run_mind(home, "verify")
    assert verified["ok"], verified
    figures["verify_s"], figures["verify_load"] = round(verify_s, 1), load()
    figures["canary_files_after"] = holders(home, canary)
    figures["canary_in_read_model_after"] = in_read_model(home, canary)
    assert not figures["canary_files_after"] and not figures["canary_in_read_model_after"]
    assert projected["applied"] == replayed["applied"] == events, (projected, replayed)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--profile", action="store_true", help="cProfile the plan scan")
    args = parser.parse_args()
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            report("forget", bench(Path(tmp), size, args.profile))


if __name__ == "__main__":
    main()
