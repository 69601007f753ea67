"""How the embedded model's settings change its replies: loop rate and model time per turn.

A fixed set of questions is asked, each as a real turn in a fresh copy of the demo's mind (a
commitment to send the weekly report on Friday, two related concepts, a thread, the name Nova),
under each settings profile: `before` is how the embedded model was called until issue 18 (full
protocol, a 2,000-token memory budget, 512 tokens, repeat penalty 1.15); `after` is
adapters/local_model.py's EMBEDDED; the others change one thing at a time. A reply loops when
bench/answer_scoring.repeats_itself says so; it is cut off when it hit the reply limit.

Run: .venv/bin/python -m bench.embedded_settings [--profiles before,after] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.answer_scoring import repeats_itself
from bench.answers import ask
from bench.common import new_mind
from mindledger.adapters.litellm_model import ModelSettings
from mindledger.adapters.local_model import (
    EMBEDDED,
    EmbeddedModel,
    EmbeddedTuning,
    LocalModelServer,
)
from mindledger.domain.identity import DEFAULT_MODEL

QUESTIONS = [
    "What did I promise to send on Friday?",
    "Hello! What is the capital of France?",
    "Thanks. Please remember that my sister is called Ada.",
    "What is project alpha?",
    "Why did the import fail?",
    "What is your name?",
    "Give me three tips for a productive morning.",
    "Summarise what you know about me.",
]
BEFORE = EmbeddedTuning(
    max_tokens=512,
    sampling={"repeat_penalty": 1.15},
    stop=[],
    compact_prompt=False,
    memory_budget=None,
)
PROFILES = {
    "before": BEFORE,
    # The compact protocol and a 600-token memory block, sampling as before.
    "compact": replace(BEFORE, compact_prompt=True, memory_budget=EMBEDDED.memory_budget),
    # ... and DRY with the repeat penalty of `after`, still 512 tokens.
    "compact+dry": replace(EMBEDDED, max_tokens=512, stop=[]),
    "after": EMBEDDED,
}


def demo_mind(folder: Path) -> None:
    """The state the demo's first turn sees (scripts/demo.py's commands before its turns)."""
    app = new_mind(folder)
    app.adopt_name("Nova", "chosen together")
    app.open_commitment("Send the weekly report on Friday")
    app.define_concept("project.alpha", "The billing rewrite")
    app.define_concept("team.billing", "The billing team")
    app.relate_concepts("project.alpha", "team.billing", "owned-by")
    app.open_thread("Why did the import fail?", "The nightly import failed on 3 May.")
    app.close()


def mean_usage(outcomes: list[Any], key: str) -> int:
    """The mean of one usage count over the outcomes (0 for none)."""
    return round(statistics.mean(o.usage.get(key, 0) for o in outcomes)) if outcomes else 0


def measure(names: list[str], questions: list[str]) -> list[dict[str, Any]]:
    """One row per profile: replies cut off, replies that loop, model time per turn."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        template = Path(tmp) / "demo"
        demo_mind(template)
        run_dir = Path(tmp) / "run"
        try:
            for name in names:
                tuning = PROFILES[name]
                # A generous timeout: on a busy machine a 512-token loop takes minutes.
                settings = ModelSettings(DEFAULT_MODEL, timeout=900, max_tokens=tuning.max_tokens)
                model = EmbeddedModel(run_dir, settings, tuning)
                outcomes = [
                    ask(template, Path(tmp) / "work", q, model, budget=2000) for q in questions
                ]
                for q, o in zip(questions, outcomes, strict=True):
                    print(f"  [{name}] {q} -> {o.reply[:80]!r}", flush=True)
                done = [o for o in outcomes if o.status == "complete"]
                times = [o.latency_ms for o in done] or [0.0]
                rows.append(
                    {
                        "profile": name,
                        "turns": len(outcomes),
                        "failed": len(outcomes) - len(done),
                        "cut_off": sum(o.cut_off for o in done),
                        "repeats": sum(repeats_itself(o.reply_raw) for o in done),
                        "model_ms_mean": round(statistics.mean(times)),
                        "model_ms_p50": round(statistics.median(times)),
                        "prompt_tokens_mean": mean_usage(done, "prompt_tokens"),
                        "reply_tokens_mean": mean_usage(done, "completion_tokens"),
                    }
                )
        finally:
            LocalModelServer(run_dir).stop()
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    """The rows as a markdown table."""
    head = (
        "| settings | turns | cut off | repeats itself | model ms/turn (mean, p50) "
        "| prompt tokens | reply tokens |\n|---|---|---|---|---|---|---|\n"
    )
    return head + "".join(
        f"| {r['profile']} | {r['turns']} | {r['cut_off']} | {r['repeats']} "
        f"| {r['model_ms_mean']}, {r['model_ms_p50']} | {r['prompt_tokens_mean']} "
        f"| {r['reply_tokens_mean']} |\n"
        for r in rows
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profiles", default="before,after", help=f"of {', '.join(PROFILES)}")
    parser.add_argument("--questions", type=int, default=len(QUESTIONS))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("MIND_NOW", "2026-05-08T09:00:00Z")
    rows = measure(args.profiles.split(","), QUESTIONS[: args.questions])
    print(json.dumps(rows, indent=2) if args.json else markdown(rows))


if __name__ == "__main__":
    main()
