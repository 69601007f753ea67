"""Soak: a served mind under mixed load for a bounded time, watched for leaks and slow-down.

Clients loop against one real `mind serve` (SQLite home, mock model) until the time is up, each
doing turns, recalls, asks, and remember-then-forget pairs in a fixed mix. A sampler reads the
server's process tree every few seconds (resident memory and open files, from /proc). After
warm-up, the run holds when:
- resident memory and open files at the end are within 10% of their level right after warm-up
  (open files counted with the clients paused and nothing in flight, right after warm-up and
  at the end, each time after the same forget, turn and recall: what a served mind keeps open
  between requests depends on the request that came last, so only counts taken in one state
  show a leak);
- the p95 of the last window is within 20% of the first window after warm-up (windows of five
  minutes on a 30-minute run, a third of the measured time on a shorter one);
- every acknowledged turn is recorded exactly once and completed, and the ledger verifies.
`--smoke` (the CI run) fails only on what is not timing: the records, the chain and open files;
memory and p95 are reported (a shared 2-core machine makes 60 s of timing noise, not a figure).
Run: .venv/bin/python -m bench.soak [--seconds 1800] [--warmup 300] [--clients 4] [--smoke]
Writes bench/out/soak.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.common import percentiles
from bench.serve import OUT, base_env, init_home, mind, start_server, stop_server
from bench.serve_load import Target, check_ledger, request_json, targets

MIX = ("turn", "recall", "turn", "ask", "turn", "recall", "remember_forget", "turn")


@dataclass
class Load:
    """What the clients did: latencies by op, the turn texts acknowledged, failures."""

    until: float
    lock: threading.Lock = field(default_factory=threading.Lock)
    samples: list[tuple[float, str, float]] = field(default_factory=list)
    acknowledged: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    go: threading.Event = field(default_factory=threading.Event)
    idle: threading.Condition = field(default_factory=threading.Condition)
    waiting: int = 0

    def note(self, op: str, took: float) -> None:
        with self.lock:
            self.samples.append((time.monotonic(), op, took))

    def wait_if_paused(self) -> None:
        """Between two requests: wait while the run is paused (its files are being counted)."""
        if self.go.is_set():
            return
        with self.idle:
            self.waiting += 1
            self.idle.notify_all()
        self.go.wait()
        with self.idle:
            self.waiting -= 1

    def paused(self, clients: int, deadline: float = 120.0) -> bool:
        """Pause the clients and wait until each has finished its request in flight."""
        self.go.clear()
        with self.idle:
            return self.idle.wait_for(lambda: self.waiting >= clients, timeout=deadline)


def client(target: Target, c: int, load: Load, mix: tuple[str, ...] = MIX) -> None:
    """One client's loop: the mix, over and over, until the time is up."""
    i = 0
    while time.monotonic() < load.until:
        load.wait_if_paused()
        op = mix[i % len(mix)]
        start = time.perf_counter()
        try:
            if op == "turn":
                text = f"soak c{c} t{i}"
                body = {"text": text, "model": "mock", "mock_reply": f"Noted {i}."}
                request_json(target, "POST", "turns", body)
                with load.lock:
                    load.acknowledged[text] += 1
            elif op == "recall":
                request_json(target, "GET", f"recall?q=soak+c{c}+t{i - 1}&budget=2000", None)
            elif op == "ask":
                body = {"question": f"What did client {c} note at {i}?", "model": "mock"}
                request_json(target, "POST", "ask", {**body, "mock_reply": f"Item {i}."})
            else:
                item = request_json(target, "POST", "knowledge", {"text": f"c{c} fact {i}"})
                forget = {"selector": "knowledge", "value": str(item["id"])}
                request_json(target, "POST", "forget", forget)
        except Exception as e:  # a failed request is a finding, not the end of the run
            with load.lock:
                load.failures.append(f"{op}: {e}"[:300])
        load.note(op, time.perf_counter() - start)
        i += 1


def tree_usage(pid: int) -> tuple[int, int]:
    """Resident kB and open files of a process and its descendants (Linux /proc)."""
    rss = files = 0
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            status = Path(f"/proc/{p}/status").read_text()
            rss += int(next(x.split()[1] for x in status.splitlines() if x.startswith("VmRSS:")))
            files += len(os.listdir(f"/proc/{p}/fd"))
            for task in os.listdir(f"/proc/{p}/task"):
                children = Path(f"/proc/{p}/task/{task}/children").read_text().split()
                todo.extend(int(x) for x in children)
        except (OSError, StopIteration, ValueError):
            continue  # the process ended between two reads
    return rss, files


def sampler(pid: int, load: Load, every: float, out: list[dict[str, float]]) -> None:
    start = time.monotonic()
    while time.monotonic() < load.until:
        rss, files = tree_usage(pid)
        load1 = os.getloadavg()[0]  # how busy the machine was: p95 means little on a busy one
        out.append(
            {"t": round(time.monotonic() - start, 1), "rss_kb": rss, "files": files, "load": load1}
        )
        time.sleep(every)  # a sampling period, not a wait for a condition


def settled_files(target: Target, pid: int, load: Load, tag: str) -> int:
    """The server's open files with no request in flight, counted in one state. A served mind
    keeps its turn pipeline open between turns (its ledger and key-store connections, 11 files
    here) and drops it at a forget, and a turn's read session stays open up to LINGER_S for the
    next turn: counted after whatever request came last, the idle count was 9 or 20, so the
    smoke failed whenever the count at the end caught the pipeline open and the one after
    warm-up did not. So each count follows the same three requests: a forget (the pipeline
    dropped, however many connections it had opened under load), a turn (opened again, by
    one request) and a recall (which closes the session the turn kept open)."""
    item = request_json(target, "POST", "knowledge", {"text": f"settle {tag}"})
    request_json(target, "POST", "forget", {"selector": "knowledge", "value": str(item["id"])})
    text = f"settle {tag}"
    body = {"text": text, "model": "mock", "mock_reply": "Settled."}
    request_json(target, "POST", "turns", body)
    with load.lock:
        load.acknowledged[text] += 1
    request_json(target, "GET", "recall?q=settle&budget=2000", None)
    caught_up(target)
    return steady_files(pid)


def caught_up(target: Target, within_s: float = 120.0) -> bool:
    """Wait until every projection of the mind is at the ledger's head: the vector projection
    embeds the new texts in a background pass that holds the ledger, vectors.sqlite and the
    forget lock open (7 files; seconds on a busy machine), and a count taken during it read
    as a leak (busy run r24a: 22 after warm-up, 29 at the end, those files the difference)."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        status = request_json(target, "GET", "status", None)
        if all(p.get("lag") == 0 for p in status.get("projections", [])):
            return True
        time.sleep(0.2)  # a polling period; the loop ends on the condition or the deadline
    return False


STEADY_READS = 10  # the same count this many reads in a row (0.2 s apart) is the idle count
STEADY_WITHIN_S = 30.0


def steady_files(pid: int) -> int:
    """The server's open files once they stop moving: what the last request set off in the
    background (a turn's read session caught up) may still hold a file for a moment after the
    projections reached the head, and a single read caught it in one count and not the other
    (busy run r23b). A leak is a count that stays up; so the count is taken once it reads the same
    STEADY_READS times in a row, or the fewest read when it never settles."""
    seen: list[int] = []
    deadline = time.monotonic() + STEADY_WITHIN_S
    while time.monotonic() < deadline:
        seen.append(tree_usage(pid)[1])
        if len(seen) >= STEADY_READS and len(set(seen[-STEADY_READS:])) == 1:
            return seen[-1]
        time.sleep(0.2)  # a sampling period between reads of /proc
    return min(seen)


def open_file_names(pid: int) -> list[str]:
    """What the server's own descriptors point at (named when its files did not stay flat)."""
    names = []
    for fd in sorted(os.listdir(f"/proc/{pid}/fd"), key=int):
        try:
            names.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except OSError:
            continue  # closed between the listing and the read
    return names


def level(points: list[dict[str, float]], key: str, t0: float, t1: float) -> float:
    """The median of a series between two times (one sample is noise; a window is a level)."""
    values = sorted(p[key] for p in points if t0 <= p["t"] <= t1) or [points[-1][key]]
    return values[len(values) // 2]


def window_p95(samples: list[tuple[float, str, float]], t0: float, t1: float) -> dict[str, Any]:
    """The window's p50/p95 over every request, and per kind of request (which one slows)."""
    took = [s for t, _, s in samples if t0 <= t < t1]
    by_op: dict[str, list[float]] = {}
    for t, op, s in samples:
        if t0 <= t < t1:
            by_op.setdefault(op, []).append(s)
    per_op = {op: percentiles(v) for op, v in sorted(by_op.items())}
    return {"ops": len(took), **(percentiles(took) if took else {}), "by_op": per_op}


def judge(
    samples: list[tuple[float, str, float]],
    usage: list[dict[str, float]],
    begin: float,
    seconds: float,
    warmup: float,
    clients: int,
    files0: int,
    files1: int,
) -> dict[str, Any]:
    """The flatness figures and whether each holds (`files0`, `files1`: the server's open
    files with nothing in flight, right after warm-up and at the end)."""
    measured = seconds - warmup
    width = min(300.0, measured / 3)
    first = window_p95(samples, begin + warmup, begin + warmup + width)
    last = window_p95(samples, begin + seconds - width, begin + seconds + 1)
    rss0 = level(usage, "rss_kb", warmup, warmup + width)
    rss1 = level(usage, "rss_kb", seconds - width, seconds)
    p95_ratio = last.get("p95_ms", 0) / max(first.get("p95_ms", 0), 1e-9)
    return {
        "window_s": round(width, 1),
        "first_window": first,
        "last_window": last,
        "p95_last_over_first": round(p95_ratio, 3),
        "rss_kb_after_warmup": rss0,
        "rss_kb_at_end": rss1,
        "rss_end_over_start": round(rss1 / max(rss0, 1), 3),
        "open_files_after_warmup": files0,
        "open_files_at_end": files1,
        "load_first_last": [
            level(usage, "load", warmup, warmup + width),
            level(usage, "load", seconds - width, seconds),
        ],
        "holds": {
            "rss_flat": rss1 <= rss0 * 1.10,
            # Counted with the clients paused and their requests finished: what a request in
            # flight holds (a socket, an attached read model, a forget's copies) is not
            # counted, so a leak is a count that grows with the requests served.
            "open_files_flat": files1 <= files0 * 1.10 + 1,
            "p95_flat": p95_ratio <= 1.20,
        },
    }


def prime(target: Target) -> None:
    """Each kind of request once, in order, before the clock starts: what a server loads on
    first use (the embedding model, on the first ask with an item to compare) is loaded
    once, not a leak, and would otherwise land in the measured time when the mix first hits
    it (an ask while a remembered item is not yet forgotten)."""
    request_json(target, "POST", "turns", {"text": "prime", "model": "mock", "mock_reply": "ok"})
    request_json(target, "GET", "recall?q=prime&budget=2000", None)
    item = request_json(target, "POST", "knowledge", {"text": "prime fact"})
    body = {"question": "What is the prime fact?", "model": "mock", "mock_reply": "It."}
    request_json(target, "POST", "ask", body)
    request_json(target, "POST", "forget", {"selector": "knowledge", "value": str(item["id"])})


def run(
    folder: Path, seconds: float, warmup: float, clients: int, mix: tuple[str, ...] = MIX
) -> dict[str, Any]:
    env = base_env()
    home = init_home(folder / "home", "Soak", env, turns=3)
    # The mind's own model is the scripted mock, as every request's is: a server warms the
    # client of its minds' model in the background (LiteLLM, seconds of imports and ~100 MB),
    # which on a busy machine ended minutes into the run and read as growth.
    mind(["--home", str(home), "model", "set", "mock"], {**env, "MIND_NO_SERVER": "1"})
    proc, info = start_server([home], env, folder / "serve.log")
    try:
        target = targets(info, [home])[0]
        prime(target)
        begin = time.monotonic()
        load = Load(until=begin + seconds)
        usage: list[dict[str, float]] = []
        watch = threading.Thread(target=sampler, args=(proc.pid, load, 2.0, usage), daemon=True)
        watch.start()
        load.go.set()
        with ThreadPoolExecutor(clients) as pool:
            running = [pool.submit(client, target, c, load, mix) for c in range(clients)]
            time.sleep(max(0.0, begin + warmup - time.monotonic()))  # the warm-up's length
            if not load.paused(clients):
                raise RuntimeError("the clients did not pause within 120 s")
            files0 = settled_files(target, proc.pid, load, "warm")
            names0 = open_file_names(proc.pid)
            load.go.set()
            for done in running:
                done.result()
        files1 = settled_files(target, proc.pid, load, "end")  # every client has finished
        watch.join()
        figures = judge(load.samples, usage, begin, seconds, warmup, clients, files0, files1)
        if not figures["holds"]["open_files_flat"]:
            names1 = open_file_names(proc.pid)
            figures["open_files_named"] = names1
            added = Counter(names1) - Counter(names0)  # what the end holds that warm-up did not
            figures["open_files_added"] = sorted(added.elements())
    finally:
        stop_server(proc)
    ops = Counter(op for _, op, _ in load.samples)
    figures.update(
        seconds=seconds,
        warmup_s=warmup,
        clients=clients,
        ops=dict(ops),
        failures=load.failures[:20],
        failed=len(load.failures),
        usage=usage[:: max(1, len(usage) // 60)],
        ledger=check_ledger(home, load.acknowledged, env),
        files_mb=home_files(home),
    )
    return figures


def home_files(home: Path) -> dict[str, float]:
    """The sizes of the home's larger files at the end (the ledger, the read models, a
    forget's base), in MB."""
    sizes = {p.name: p.stat().st_size / 1e6 for p in home.rglob("*") if p.is_file()}
    return {name: round(mb, 1) for name, mb in sorted(sizes.items()) if mb >= 0.5}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=1800.0)
    parser.add_argument("--warmup", type=float, default=None, help="default: a sixth, at most 300")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--smoke", action="store_true", help="fail only on records and files")
    parser.add_argument(
        "--mix", default=",".join(MIX), help="the requests each client loops over (which grows)"
    )
    parser.add_argument("--out", type=Path, default=OUT / "soak.json")
    args = parser.parse_args(argv)
    warmup = args.warmup if args.warmup is not None else min(300.0, args.seconds / 6)
    with tempfile.TemporaryDirectory(prefix="mind-soak-") as tmp:
        mix = tuple(args.mix.split(","))
        unknown = set(mix) - set(MIX)
        if unknown:
            parser.error(f"--mix: unknown requests {sorted(unknown)}; of {sorted(set(MIX))}")
        figures = run(Path(tmp), args.seconds, warmup, args.clients, mix)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(figures, indent=2))
    holds = figures["holds"]
    wanted = ["open_files_flat"] if args.smoke else list(holds)
    broken = [k for k in wanted if not holds[k]] + (["failures"] if figures["failed"] else [])
    if broken:
        print(f"soak: does not hold: {', '.join(broken)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
