"""What the meaning channels cost recall at scale: `recall` for LoCoMo questions at N events
with vectors off ("off"), the per-message vector channel alone as it was ("messages"), as
shipped ("shipped": with the named speakers' nearest messages) and with the windows channel too
("windows": cut and looked up at every recall, as a plain embedder runs it), and as a mind runs
it, from the vector projection's file ("stored": vectors.sqlite read by position, the query
embedded; "stored_windows": with the stored windows too, what this release adds), alternately
(all arms see the same load), on a home built as bench.recall builds it. The vectors are the
offline MiniLM's through bench/vector_cache.py (the plain embedder's texts are read and looked
up by hash; the file is filled from the same vectors, windows by the projection's own
`embed_windows`), all computed before timing; the query's embedding, uncached, is timed apart
(the arms' query vectors come from the cache).

Run: .venv/bin/python -m bench.windows_cost [--size 100000] [--queries 200] [--keep DIR]
     [--vector-cache FILE] [--data ../shared/data/locomo/locomo10.json]
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import numpy as np

from bench.common import percentiles, report, timed
from bench.recall import NOW, cost_arguments, home_of, questions_of
from bench.vector_cache import CachedMiniLM
from mindledger.adapters.minilm import shared_model
from mindledger.adapters.vector_store import StoredVectors
from mindledger.compose import Home, read_model
from mindledger.projections.retrieval import channels, speakers, turn_windows
from mindledger.projections.retrieval.recall import NO_LIMIT, recall

ARMS = ("off", "messages", "shipped", "windows", "stored", "stored_windows")
# The arms' settings: (channels.VECTOR_K, turn_windows.WINDOW_K, speakers.SPEAKER_VECTOR_K).
SHIPPED = (channels.VECTOR_K, 0, speakers.SPEAKER_VECTOR_K)
SETTINGS = {
    "off": SHIPPED,
    "messages": (channels.VECTOR_K, 0, 0),
    "shipped": SHIPPED,
    "windows": (channels.VECTOR_K, turn_windows.WINDOW_K, speakers.SPEAKER_VECTOR_K),
    "stored": SHIPPED,
    "stored_windows": (channels.VECTOR_K, turn_windows.WINDOW_K, speakers.SPEAKER_VECTOR_K),
}
MODEL = "local/all-minilm-l6-v2"


def stored_file(home: Home, embed: CachedMiniLM) -> Path:
    """vectors.sqlite as the vector projection fills it (every item, every window), from the
    cached vectors: the repeated conversations' texts are embedded once."""
    from mindledger.adapters.vector_store import FILE, VectorStore
    from mindledger.projections.retrieval.vector_items import (
        items_after,
        tracked_position,
        window_rows,
    )
    from mindledger.vector_projection import embed_windows

    path = home.path / FILE
    store = VectorStore(path)
    try:
        if store.tracked()[0] == MODEL:
            return path
        store.reset(MODEL)
        with read_model(home) as con:
            upto = tracked_position(con)
            items = items_after(con, 0, upto, 10**9)
            rows = window_rows(con, 0, upto)
        for start in range(0, len(items), 5000):
            chunk = items[start : start + 5000]
            vectors = embed.matrix([t for _, _, t in chunk])
            store.add(MODEL, [(p, k) for p, k, _ in chunk], vectors, chunk[-1][0])
        store.add(MODEL, [], np.zeros((0, 0), dtype=np.float32), upto)
        embed_windows(store, MODEL, embed, rows, 0, None)
    finally:
        store.close()
    return path


def use(arm: str) -> None:
    channels.VECTOR_K, turn_windows.WINDOW_K, speakers.SPEAKER_VECTOR_K = SETTINGS[arm]


def main() -> None:
    parser = cost_arguments()
    parser.add_argument("--vector-cache", type=Path, help="keep the vectors here between runs")
    args = parser.parse_args()
    questions = questions_of(args.data, args.queries)
    with tempfile.TemporaryDirectory() as tmp:
        home, catch_up = home_of(args.keep or Path(tmp), args.size, args.data)
        embed = CachedMiniLM(args.vector_cache or Path(tmp) / "vectors.sqlite")
        stored = StoredVectors(stored_file(home, embed), MODEL, embed)
        times: dict[str, list[float]] = {a: [] for a in ARMS}
        with read_model(home) as con:
            # The stored texts' vectors (messages and windows), off the clock.
            use("messages")
            channels.vector_channel(con, "", NO_LIMIT, embed)
            use("windows")
            channels.vector_channel(con, "", NO_LIMIT, embed)
            # The query's embedding, uncached (a recall's only model call).
            model = shared_model()
            query_s = [timed(functools.partial(model.encode, [q]))[0] for q in questions]

            def one(arm: str, q: str) -> float:
                use(arm)
                chosen = stored if arm.startswith("stored") else embed
                return timed(
                    lambda: recall(con, q, 2000, NOW, embed=None if arm == "off" else chosen)
                )[0]

            for q in questions[:5]:  # warm-up of every arm
                for arm in ARMS:
                    one(arm, q)
            for q in questions:
                for arm in ARMS:
                    times[arm].append(one(arm, q))
        use("windows")
    p = {a: percentiles(t) for a, t in times.items()}
    report(
        "windows_cost",
        {
            "ledger_events": args.size,
            "queries": len(questions),
            "catch_up_events_per_s": round(catch_up),
            **{f"recall_{a}_{k}": v for a in ARMS for k, v in p[a].items()},
            **{f"embed_query_{k}": v for k, v in percentiles(query_s).items()},
            "p95_ratio_shipped_to_off": round(
                p["shipped"]["p95_ms"] / max(p["off"]["p95_ms"], 1e-9), 3
            ),
            "p95_ratio_shipped_to_messages": round(
                p["shipped"]["p95_ms"] / max(p["messages"]["p95_ms"], 1e-9), 3
            ),
            "p95_ratio_windows_to_shipped": round(
                p["windows"]["p95_ms"] / max(p["shipped"]["p95_ms"], 1e-9), 3
            ),
            # The change a mind sees: the stored windows beside what the file gave before.
            "p95_ratio_stored_windows_to_stored": round(
                p["stored_windows"]["p95_ms"] / max(p["stored"]["p95_ms"], 1e-9), 3
            ),
            "p50_ratio_stored_windows_to_stored": round(
                p["stored_windows"]["p50_ms"] / max(p["stored"]["p50_ms"], 1e-9), 3
            ),
        },
    )


if __name__ == "__main__":
    main()
