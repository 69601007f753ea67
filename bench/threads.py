"""`mind threads` and a turn's threads block at many live and resolved threads (p50/p95).

Builds a mind with N threads (a quarter of them resolved, a fifth with credited work, mentions
on others), projects it, then times:
- `threads_listing`: `mind threads --json` in-process (read model open + tension of every live
  thread as of now + JSON), through click;
- `context_block`: the threads part of a turn's context (tension of every live thread, top-k,
  the rule, triage demand, last refusals) on an open read session;
- reference: a plain `SELECT * FROM threads` on the same connection, for the ratio.
Run: .venv/bin/python -m bench.threads [--threads 10000] [--runs 30]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from datetime import timedelta
from pathlib import Path

from click.testing import CliRunner

from bench.common import T0, new_mind, percentiles, report
from mindledger.cli.main import mind as mind_command
from mindledger.compose import Home, open_reader, read_model_paths
from mindledger.domain.events import DomainEvent
from mindledger.domain.thread import Thread
from mindledger.projections.engine.projector import Projector
from mindledger.projections.engine.readmodel import ReadSession
from mindledger.projections.queries.thread_queries import last_refusals
from mindledger.projections.retrieval.thread_context import live_threads, notices


def build(folder: Path, count: int) -> Home:
    app = new_mind(folder)
    batch: list[DomainEvent] = []
    for i in range(count):
        at = T0 + timedelta(minutes=7 * i)
        thread = Thread.open(
            f"Question {i}", f"Why did thing {i} happen the way it did?", "user", at
        )
        if i % 3 == 0:
            thread.mention(at + timedelta(minutes=1))
        if i % 5 == 0:
            thread.work(f"file:notes/{i}.md", 1.0, at + timedelta(hours=2))
        if i % 4 == 0:
            thread.resolve("dissolved", at + timedelta(hours=3), reason="no longer matters")
        batch.extend(thread.collect())
        if len(batch) >= 500:
            app.save(*batch)
            batch = []
    if batch:
        app.save(*batch)
    home = Home(folder)
    projector = Projector(read_model_paths(home).working)
    # The home's reader, with its key store: the threads' sealed text opened, as a catch-up's.
    projector.catch_up(open_reader(home))
    projector.close()
    return home


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = build(Path(tmp) / "mind", args.threads)
        now = T0 + timedelta(minutes=7 * args.threads + 60)
        os.environ["MIND_HOME"], os.environ["MIND_NOW"] = str(home.path), now.isoformat()
        runner = CliRunner()
        listing = []
        for _ in range(args.runs + 2):
            start = time.perf_counter()
            result = runner.invoke(mind_command, ["threads", "--json"], catch_exceptions=False)
            listing.append(time.perf_counter() - start)
            assert result.exit_code == 0
        block, plain = [], []
        with ReadSession(read_model_paths(home), open_reader(home)) as session:
            con = session.refresh()
            for _ in range(args.runs + 2):
                start = time.perf_counter()
                view = live_threads(con, now, 1 << 62)
                items = notices(view, last_refusals(con, None))
                block.append(time.perf_counter() - start)
                start = time.perf_counter()
                con.execute("SELECT * FROM threads").fetchall()
                plain.append(time.perf_counter() - start)
        live = view.live
    block_p, plain_p = percentiles(block[2:]), percentiles(plain[2:])
    report(
        "threads",
        {
            "threads": args.threads,
            "live": live,
            "notices": len(items),
            **{"threads_listing_" + k: v for k, v in percentiles(listing[2:]).items()},
            **{"context_block_" + k: v for k, v in block_p.items()},
            **{"select_all_threads_" + k: v for k, v in plain_p.items()},
            "context_block_p50_ratio_to_select_all": round(
                block_p["p50_ms"] / max(plain_p["p50_ms"], 0.01), 1
            ),
        },
    )


if __name__ == "__main__":
    main()
