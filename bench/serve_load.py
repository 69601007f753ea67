"""Concurrent HTTP clients against real `mind serve` processes: turns (mock model) and recalls
with 1, 8 and 32 clients, on one mind and on 8 minds (one server), then on a PostgreSQL ledger
served by one server and by two (each with its own home and read models). Throughput and
p50/p95 per request; afterwards every ledger verifies, every turn sent is recorded once with its
own turn number and completed (the run fails otherwise).
Run: .venv/bin/python -m bench.serve_load [--ops 64] [--clients 1 8 32]
     (PostgreSQL part: MIND_TEST_POSTGRES_DSN=$(scripts/postgres-test-server.sh))
Writes bench/out/serve_load.json.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from bench.common import percentiles
from bench.serve import OUT, base_env, init_home, mind, start_server, stop_server


@dataclass(frozen=True)
class Target:
    """One mind as one server serves it."""

    host: str
    port: int
    token: str
    name: str
    home: Path  # the home whose ledger the turns land in (for the checks)


def targets(info: dict[str, Any], homes: Sequence[Path]) -> list[Target]:
    url = urlsplit(info["url"])
    return [
        Target(
            url.hostname or "127.0.0.1",
            url.port or 80,
            (home / "server-token").read_text(encoding="utf-8").strip(),
            _own_mind(home),
            home,
        )
        for home in homes
    ]


def _own_mind(home: Path) -> str:
    """The mind's name as its home's server.json gives it (each names only its own)."""
    info = json.loads((home / "server.json").read_text(encoding="utf-8"))
    return str(info["minds"][0])


def request(target: Target, method: str, tail: str, body: dict[str, Any] | None) -> float:
    """One request on a new connection; seconds taken (raises unless 200)."""
    start = time.perf_counter()
    request_json(target, method, tail, body)
    return time.perf_counter() - start


def request_json(target: Target, method: str, tail: str, body: dict[str, Any] | None) -> Any:
    """One request on a new connection; its JSON answer (raises unless 200)."""
    conn = http.client.HTTPConnection(target.host, target.port, timeout=600)
    headers = {"Authorization": f"Bearer {target.token}", "Content-Type": "application/json"}
    try:
        path = f"/v1/minds/{quote(target.name, safe='')}/{tail}"
        conn.request(method, path, None if body is None else json.dumps(body), headers)
        response = conn.getresponse()
        raw = response.read()
    finally:
        conn.close()
    if response.status != 200:
        raise RuntimeError(f"{method} {tail}: {response.status} {raw[:300]!r}")
    return json.loads(raw)


def phase(kind: str, clients: int, ops: int, spread: Sequence[Target], tag: str) -> dict[str, Any]:
    """`ops` turns or recalls by `clients` concurrent clients, client c on spread[c % len]."""
    per_client = [ops // clients + (1 if c < ops % clients else 0) for c in range(clients)]

    def client(c: int) -> list[float]:
        target = spread[c % len(spread)]
        took = []
        for i in range(per_client[c]):
            if kind == "turn":
                text = f"{tag} c{c} t{i}"
                body = {"text": text, "model": "mock", "mock_reply": f"ok {i}"}
                took.append(request(target, "POST", "turns", body))
            else:
                took.append(request(target, "GET", f"recall?q=c{c}+t{i}&budget=2000", None))
        return took

    start = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        samples = [s for result in pool.map(client, range(clients)) for s in result]
    wall = time.perf_counter() - start
    return {"ops": len(samples), "per_s": round(len(samples) / wall, 1), **percentiles(samples)}


def sent_texts(tag: str, clients: int, ops: int, spread: Sequence[Target]) -> dict[Path, list[str]]:
    """The texts phase('turn', ...) sent, by the home whose ledger holds them."""
    by_home: dict[Path, list[str]] = {}
    for c in range(clients):
        count = ops // clients + (1 if c < ops % clients else 0)
        home = spread[c % len(spread)].home
        by_home.setdefault(home, []).extend(f"{tag} c{c} t{i}" for i in range(count))
    return by_home


def check_ledger(home: Path, expected: Counter[str], env: dict[str, str]) -> dict[str, Any]:
    """Every sent turn recorded once, completed, with its own number; the chain verifies."""
    quiet = {**env, "MIND_NO_SERVER": "1"}
    events = json.loads(mind(["--home", str(home), "log", "--json", "--limit", "100000"], quiet))
    started = [e["payload"] for e in events if e["type"] == "mind.turn.started"]
    completed = sum(1 for e in events if e["type"] == "mind.turn.completed")
    texts = Counter(p["text"] for p in started)
    verify = json.loads(mind(["--home", str(home), "verify", "--json"], quiet, check=False))
    seqs = [p["seq"] for p in started]
    check = {
        "turns_recorded": len(started),
        "all_sent_recorded_once": all(texts[t] == n for t, n in expected.items()),
        "unique_turn_numbers": len(set(seqs)) == len(seqs),
        "all_completed": completed == len(started),
        "verifies": verify.get("ok") is True,
    }
    if not all(v for k, v in check.items() if k != "turns_recorded"):
        raise RuntimeError(f"ledger check failed for {home}: {check}")
    return check


def scenario(
    name: str, spread: Sequence[Target], clients_list: Sequence[int], ops: int, env: dict[str, str]
) -> dict[str, Any]:
    rows: dict[str, Any] = {}
    expected: dict[Path, Counter[str]] = {}
    for clients in clients_list:
        tag = f"{name}-{clients}"
        rows[f"{clients} clients"] = {
            "turns": phase("turn", clients, ops, spread, tag),
            "recalls": phase("recall", clients, ops, spread, tag),
        }
        for home, texts in sent_texts(tag, clients, ops, spread).items():
            expected.setdefault(home, Counter()).update(texts)
        print(name, clients, json.dumps(rows[f"{clients} clients"]), flush=True)
    checks = {str(home.name): check_ledger(home, want, env) for home, want in expected.items()}
    return {"load": rows, "checks": checks}


def sqlite_runs(
    folder: Path, clients: Sequence[int], ops: int, env: dict[str, str]
) -> dict[str, Any]:
    results = {}
    for minds in (1, 8):
        homes = [
            init_home(folder / f"s{minds}-{n}", f"Mind{n}", env, turns=2) for n in range(minds)
        ]
        proc, info = start_server(homes, env, folder / f"serve-{minds}.log")
        try:
            spread = targets(info, homes)
            results[f"sqlite, {minds} mind(s), 1 server"] = scenario(
                f"s{minds}", spread, clients, ops, env
            )
        finally:
            stop_server(proc)
    return results


def postgres_runs(
    folder: Path, dsn: str, clients: Sequence[int], ops: int, env: dict[str, str]
) -> dict[str, Any]:
    import psycopg

    schema = "bench_" + uuid.uuid4().hex[:10]
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    results = {}
    try:
        a = folder / "pg-a"
        quiet = {**env, "MIND_NO_SERVER": "1"}
        mind(
            ["--home", str(a), "init", "--name", "Echo", "--postgres", dsn, "--schema", schema],
            quiet,
        )
        b = folder / "pg-b"
        b.mkdir()
        shutil.copy(a / "config.json", b / "config.json")
        for servers in (1, 2):
            homes = [a, b][:servers]
            started = [start_server([h], env, folder / f"serve-pg-{h.name}.log") for h in homes]
            try:
                spread = [
                    targets(info, [h])[0] for (_, info), h in zip(started, homes, strict=True)
                ]
                # every server's turns land in the one ledger: check it once, through home a
                spread = [Target(t.host, t.port, t.token, t.name, a) for t in spread]
                results[f"postgres, 1 mind, {servers} server(s)"] = scenario(
                    f"pg{servers}", spread, clients, ops, env
                )
            finally:
                for proc, _ in started:
                    stop_server(proc)
    finally:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ops", type=int, default=64, help="turns (and recalls) per level")
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 8, 32])
    args = parser.parse_args()
    env = base_env()
    folder = Path(tempfile.mkdtemp(prefix="bench-serve-load-"))
    results = sqlite_runs(folder, args.clients, args.ops, env)
    dsn = os.environ.get("MIND_TEST_POSTGRES_DSN", "")
    if dsn:
        results |= postgres_runs(folder, dsn, args.clients, args.ops, env)
    OUT.mkdir(exist_ok=True)
    out = {"ops_per_level": args.ops, "clients": args.clients, "results": results}
    (OUT / "serve_load.json").write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(
        f"\n{'scenario':<34}{'clients':>8}{'turns/s':>9}{'p50':>8}{'p95':>8}"
        f"{'recalls/s':>10}{'p50':>8}{'p95':>8}"
    )
    for name, result in results.items():
        for level, row in result["load"].items():
            t, r = row["turns"], row["recalls"]
            print(
                f"{name:<34}{level.split()[0]:>8}{t['per_s']:>9}{t['p50_ms']:>8.0f}"
                f"{t['p95_ms']:>8.0f}{r['per_s']:>10}{r['p50_ms']:>8.0f}{r['p95_ms']:>8.0f}"
            )
    print("ledger checks:", json.dumps({k: v["checks"] for k, v in results.items()}))


if __name__ == "__main__":
    main()
