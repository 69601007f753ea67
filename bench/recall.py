"""Retrieval latency at growing ledger sizes: LoCoMo conversations imported again and again
(under distinct sources) until the ledger holds N events, then `recall` for LoCoMo questions,
beside its reference in the same run: a raw DuckDB term lookup for the same queries (the
query's terms' postings fetched by one plain statement, nothing scored or joined).

Run: .venv/bin/python -m bench.recall [--sizes 100000 1000000] [--queries 200]
     [--keep DIR] (build each home once into DIR/nN and reuse it: to compare releases on the
     same read model, run this module from each checkout alternately with the same DIR)
     [--vectors] (also recall with the vector channel on, alternately with it off and with the
     query's embedding alone: every stored item's vector is computed first, each distinct text
     once, as the vector projection keeps them; only the query is embedded per recall)
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb

from bench.common import new_mind, percentiles, report, timed
from bench.locomo import DATA
from mindledger.adapters.importers import locomo_messages, locomo_samples, record
from mindledger.compose import Home, open_reader, read_model, read_model_paths
from mindledger.projections.engine.projector import Projector
from mindledger.projections.retrieval.recall import recall
from mindledger.projections.retrieval.text_index import terms

NOW = datetime(2024, 1, 1, tzinfo=UTC)
# The reference: what any lexical recall must at least do, in one statement.
LOOKUP = "SELECT term, position, tf FROM doc_terms WHERE term IN (SELECT unnest($t))"


def build(folder: Path, size: int, data: Path) -> tuple[Home, float, float]:
    app = new_mind(folder)
    samples = locomo_samples(data)
    messages = [(s, list(locomo_messages(s))) for s in samples]
    written, copy = 1, 0
    start = time.perf_counter()
    while written < size:
        for s, turns in messages:
            take = turns[: size - written]
            # Its two speakers, as `mind import locomo` records them: a question naming one
            # runs the speaker channels (homes built before 2026-12-04 evening had none).
            speakers = [s["conversation"]["speaker_a"], s["conversation"]["speaker_b"]]
            added, _ = record(app, f"bench/{copy}/{s['sample_id']}", speakers, iter(take))
            written += added + 1
            if written >= size:
                break
        copy += 1
    fill = time.perf_counter() - start
    home = Home(folder)
    projector = Projector(read_model_paths(home).working)
    # As the follower would have done: including its maintenance (the sorted term index).
    # The reader carries the key store: the messages' sealed text is opened, as a mind's is.
    reader = open_reader(home)
    seconds, applied = timed(lambda: projector.catch_up(reader, maintain=True))
    projector.close()
    reader.close()
    return home, written / fill, applied / seconds


def questions_of(data: Path, limit: int) -> list[str]:
    """The first `limit` LoCoMo questions of categories 1-4 (category 5 names no evidence)."""
    samples = locomo_samples(data)
    return [qa["question"] for s in samples for qa in s["qa"] if qa["category"] != 5][:limit]


def cost_arguments(description: str | None = None) -> argparse.ArgumentParser:
    """The options of a bench that times recall on one LoCoMo home of N events."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--keep", type=Path, help="build the home here once and reuse it")
    return parser


def home_of(root: Path, size: int, data: Path) -> tuple[Home, float]:
    """The home of `size` LoCoMo events under `root` (built there once, then reused) and its
    catch-up rate when built now (0.0 when reused)."""
    folder = root / f"n{size}"
    if (folder / "readmodel.duckdb").exists():
        return Home(folder), 0.0
    home, _, catch_up = build(folder, size, data)
    return home, catch_up


def project_vectors(home: Home) -> tuple[int, float]:
    """vectors.sqlite filled as the vector projection would, windows of consecutive messages
    included (the imported conversations repeat, so each distinct text is embedded once and
    its vector kept at every position that holds it); how many items and the seconds
    embedding took."""
    import numpy as np

    from mindledger.adapters.embeddings import embed_matrix
    from mindledger.adapters.vector_store import FILE, VectorStore
    from mindledger.domain.settings import DEFAULT_EMBEDDING_MODEL as MODEL
    from mindledger.projections.retrieval.vector_items import (
        items_after,
        tracked_position,
        window_rows,
    )
    from mindledger.vector_projection import embed_windows

    with read_model(home) as con:
        upto = tracked_position(con)
        items = items_after(con, 0, upto, 10**9)
        said = window_rows(con, 0, upto)  # the messages the windows are cut from
    distinct = sorted({t for _, _, t in items})
    seconds, vectors = timed(lambda: embed_matrix(MODEL, distinct))
    row = {t: i for i, t in enumerate(distinct)}
    store = VectorStore(home.path / FILE)
    try:
        store.reset(MODEL)
        for start in range(0, len(items), 5000):
            chunk = items[start : start + 5000]
            last = upto if start + 5000 >= len(items) else chunk[-1][0]
            rows = [(p, k) for p, k, _ in chunk]
            store.add(MODEL, rows, vectors[[row[t] for _, _, t in chunk]], last)
        known: dict[str, Any] = {}

        def once(texts: list[str]) -> Any:
            new = sorted({t for t in texts if t not in known})
            if new:
                known.update(zip(new, embed_matrix(MODEL, new), strict=True))
            return np.stack([known[t] for t in texts])

        started = time.perf_counter()
        embed_windows(store, MODEL, once, said, 0, None)
        seconds += time.perf_counter() - started
    finally:
        store.close()
    return len(items), seconds


def vector_arm(home: Home, questions: list[str]) -> dict[str, Any]:
    """Recall p50/p95 with the vector channel off and on, and the query's embedding alone,
    each question run by all three in turn (the same load)."""
    from mindledger.compose import embedder
    from mindledger.domain.settings import DEFAULT_EMBEDDING_MODEL as MODEL

    if not (home.path / "vectors.sqlite").exists():
        project_vectors(home)
    off, on, query = [], [], []
    cpu: dict[str, list[float]] = {"off": [], "on": [], "query": []}

    def both(arm: str, samples: list[float], fn: Any) -> None:
        started = time.process_time()  # every thread's: recall reads on two
        samples.append(timed(fn)[0])
        cpu[arm].append(time.process_time() - started)

    with read_model(home) as con:
        vectors = embedder(home, {})
        assert vectors is not None, "no vectors: is the offline model installed?"
        for q in questions[:5]:  # warm-up: the model loaded, the files read once
            recall(con, q, 2000, NOW, embed=vectors)
        for n, q in enumerate(questions):
            fresh = f"{q} ({n})"  # never a cached query vector: each recall embeds its query
            both("off", off, lambda q=q: recall(con, q, 2000, NOW))
            both("on", on, lambda q=fresh: recall(con, q, 2000, NOW, embed=vectors))
            again = f"{q} [{n}]"
            both("query", query, lambda q=again: vectors.matrix([q]))
        vectors.close()
    o, v, e = percentiles(off), percentiles(on), percentiles(query)
    return {
        "model": MODEL,
        **{"vectors_off_" + k: x for k, x in o.items()},
        **{"vectors_on_" + k: x for k, x in v.items()},
        **{"query_embedding_" + k: x for k, x in e.items()},
        "on_p95_ratio_to_off": round(v["p95_ms"] / max(o["p95_ms"], 1e-9), 2),
        **{f"{arm}_cpu_{k}": x for arm, xs in cpu.items() for k, x in percentiles(xs).items()},
    }


def lookup(con: duckdb.DuckDBPyConnection, query: str) -> list[Any]:
    return con.execute(LOOKUP, {"t": sorted(set(terms(query)))}).fetchall()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--data", type=Path, default=DATA, help="LoCoMo's locomo10.json")
    parser.add_argument("--keep", type=Path, help="build homes here once and reuse them")
    parser.add_argument("--vectors", action="store_true", help="also with the vector channel")
    args = parser.parse_args()
    questions = questions_of(args.data, args.queries)
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        for size in args.sizes:
            folder = root / f"n{size}"
            if (folder / "readmodel.duckdb").exists():
                home, fill_rate, project_rate = Home(folder), 0.0, 0.0
            else:
                home, fill_rate, project_rate = build(folder, size, args.data)
            with read_model(home) as con:
                for q in questions[:5]:  # warm-up of both
                    recall(con, q, 2000, NOW)
                    lookup(con, q)
                samples, raw, cpu, raw_cpu = [], [], [], []
                for q in questions:  # alternately: both see the same load
                    started = time.process_time()
                    samples.append(timed(lambda q=q: recall(con, q, 2000, NOW))[0])
                    cpu.append(time.process_time() - started)
                    started = time.process_time()
                    raw.append(timed(lambda q=q: lookup(con, q))[0])
                    raw_cpu.append(time.process_time() - started)
            mine, ref = percentiles(samples), percentiles(raw)
            # CPU time (DuckDB's threads included): the steadier figure on a busy machine,
            # where wall time waits for a core between a query's statements.
            mine_cpu, ref_cpu = percentiles(cpu), percentiles(raw_cpu)
            report(
                "recall",
                {
                    "ledger_events": size,
                    "queries": len(samples),
                    "import_events_per_s": round(fill_rate),
                    "catch_up_events_per_s": round(project_rate),
                    **{"recall_" + k: v for k, v in mine.items()},
                    **{"raw_lookup_" + k: v for k, v in ref.items()},
                    "p95_ratio_to_raw": round(mine["p95_ms"] / max(ref["p95_ms"], 1e-9), 2),
                    **{"recall_cpu_" + k: v for k, v in mine_cpu.items()},
                    **{"raw_lookup_cpu_" + k: v for k, v in ref_cpu.items()},
                    "cpu_p95_ratio_to_raw": round(
                        mine_cpu["p95_ms"] / max(ref_cpu["p95_ms"], 1e-9), 2
                    ),
                    "load": round(os.getloadavg()[0], 1),
                },
            )
            if args.vectors:
                report("recall_vectors", {"ledger_events": size, **vector_arm(home, questions)})


if __name__ == "__main__":
    main()
