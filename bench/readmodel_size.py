"""The read model's file size as a served mind grows: turns and remember-then-forget pairs through
the floor (`mindledger.open`, as `mind serve` holds a mind), in the soak's proportions (four
turns to one forget), the published file measured every `--every` turns, then the same ledger
replayed into a new file. With `--reference TREE` (another checkout), that tree's code does the
same beside this one's, each in its own process with its code first on the path.
Run: .venv/bin/python -m bench.readmodel_size [--turns 400] [--every 100] [--reference TREE]
"""

from __future__ import annotations

import argparse
import tempfile
import threading
from pathlib import Path
from typing import Any

from bench.common import report, run_in_tree

REPO = Path(__file__).resolve().parent.parent

WORKER = r"""
import json, sys, time
from pathlib import Path
import mindledger
from mindledger.compose import Home, open_reader
from mindledger.projections.engine.projector import Projector

job = json.loads(sys.argv[1])
folder = Path(job["folder"]) / "mind"
from bench.common import new_mind
new_mind(folder).close()
home = Home(folder)
mind = mindledger.open(folder)
sizes, start = [], time.perf_counter()

def mb(path):
    return round(path.stat().st_size / 1e6, 2) if path.exists() else 0.0

def events_bytes(path):
    if not path.exists():
        return 0
    import duckdb
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute("SELECT sum(strlen(payload::VARCHAR)) FROM events").fetchone()[0]
    finally:
        con.close()

for i in range(1, job["turns"] + 1):
    mind.turn(f"size t{i}: note item {i} for the week", model="mock", mock_reply=f"Noted {i}.")
    if i % 4 == 0:
        item = mind.remember(f"fact {i}")
        mind.forget("knowledge", str(item.id))
    if i % job["every"] == 0:
        sizes.append({"turns": i, "working_mb": mb(home.readmodel),
                      "published_mb": mb(home.published)})
mind.close()
fresh = folder.parent / "fresh.duckdb"
p = Projector(fresh)
p.catch_up(open_reader(home), maintain=True)
p.close()
print(json.dumps({
    "sizes": sizes,
    "events": open_reader(home, sealed=False).head()[0],
    "ledger_mb": round(home.ledger.stat().st_size / 1e6, 2),
    "published_payload_mb": round(events_bytes(home.published) / 1e6, 2),
    "replayed_mb": round(fresh.stat().st_size / 1e6, 2),
    "replayed_payload_mb": round(events_bytes(fresh) / 1e6, 2),
    "seconds": round(time.perf_counter() - start, 1),
}))
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=400)
    parser.add_argument("--every", type=int, default=100)
    parser.add_argument("--reference", type=Path, default=None, help="another checkout")
    args = parser.parse_args(argv)
    job = {"turns": args.turns, "every": args.every}
    found: dict[str, Any] = {}
    trees = {"this": REPO, **({"reference": args.reference} if args.reference else {})}

    failed: list[BaseException] = []

    def one(name: str, tree: Path) -> None:
        try:
            with tempfile.TemporaryDirectory(prefix="readmodel-size-") as folder:
                found[name] = run_in_tree(tree, WORKER, {**job, "folder": folder})
        except BaseException as e:  # raised again below, in the caller's thread
            failed.append(e)

    threads = [threading.Thread(target=one, args=item) for item in trees.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failed:
        raise failed[0]
    report("readmodel_size", {**job, **found})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
