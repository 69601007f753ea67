"""A query's offline MiniLM embedding, in-process: LoCoMo questions embedded one at a time, as
recall embeds a turn's query, by the few-rows product (weights in column blocks) and by the
whole-matrix product every batch uses, alternately question by question so both share the
machine's load of each moment. Reported: wall and CPU (this thread's) p50/p95 of each, their
ratios, and the largest difference between the two vectors of a question.
Run: PYTHONPATH=. .venv/bin/python -m bench.query_embed [--questions 200] [--data locomo10.json]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from bench.common import report
from bench.locomo import DATA
from mindledger.adapters import minilm


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(len(ordered) * p))] * 1000, 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--data", type=Path, default=DATA, help="locomo10.json")
    args = parser.parse_args()
    samples = json.loads(args.data.read_text())
    questions = [str(qa["question"]) for s in samples for qa in s["qa"]][: args.questions]
    model = minilm.shared_model()
    model.encode(questions[:4])  # first call: the BLAS's buffers
    blocked_rows = minilm.SMALL_ROWS
    taken: dict[str, tuple[list[float], list[float]]] = {"blocks": ([], []), "whole": ([], [])}
    vectors: dict[str, list[np.ndarray]] = {"blocks": [], "whole": []}
    for i, question in enumerate(questions):
        arms = ("blocks", "whole") if i % 2 else ("whole", "blocks")
        for arm in arms:
            minilm.SMALL_ROWS = blocked_rows if arm == "blocks" else 0
            wall, cpu = time.perf_counter(), time.thread_time()
            vectors[arm].append(model.encode([question])[0])
            taken[arm][1].append(time.thread_time() - cpu)
            taken[arm][0].append(time.perf_counter() - wall)
    minilm.SMALL_ROWS = blocked_rows
    tokens = [n or 0 for n in model.token_counts(questions)]
    figures: dict[str, object] = {
        "questions": len(questions),
        "tokens_p50": int(np.median(tokens)),
        "tokens_max": max(tokens),
    }
    for arm, (wall, cpu) in taken.items():
        figures[f"{arm}_wall_p50_ms"] = percentile(wall, 0.5)
        figures[f"{arm}_wall_p95_ms"] = percentile(wall, 0.95)
        figures[f"{arm}_cpu_p50_ms"] = percentile(cpu, 0.5)
        figures[f"{arm}_cpu_p95_ms"] = percentile(cpu, 0.95)
    for kind in ("wall", "cpu"):
        figures[f"{kind}_p50_ratio"] = round(
            percentile(taken["blocks"][kind == "cpu"], 0.5)
            / percentile(taken["whole"][kind == "cpu"], 0.5),
            2,
        )
    difference = np.abs(np.stack(vectors["blocks"]) - np.stack(vectors["whole"]))
    figures["max_abs_diff"] = float(difference.max())
    report("query_embed", figures)


if __name__ == "__main__":
    main()
