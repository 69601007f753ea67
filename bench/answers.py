"""Does memory help? LoCoMo questions asked as real turns, with our recall, with a plain BM25
context of the same size, and with no memory at all: same model, same questions, same run.

A fixed subset (the first `--conversations` conversations; `--per-category` questions of each of
categories 1-4 whose gold answer is at most MAX_ANSWER_WORDS words, drawn with a fixed seed) is
asked of a mind that imported the question's conversation. Every question is asked in a fresh
copy of that mind, so no question sees an earlier one's turn. The visible reply is scored
against the gold answer by token F1 (SQuAD normalisation) and by whether it contains the answer.

`--smoke` runs our own memory questions instead: facts told in earlier turns (a promise, a name,
a date, a preference, ...), then asked, with recall and with no memory.

Run: .venv/bin/python -m bench.answers [--model SPEC] [--json] [--smoke]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench.answer_scoring import contains_answer, normalise, repeats_itself, token_f1
from bench.common import new_mind
from bench.locomo import DATA, baseline
from mindledger.adapters.importers import import_locomo, locomo_samples
from mindledger.compose import Home, build_model, read_model, turn_service
from mindledger.domain.context_port import (
    AssembledContext,
    ContextRequest,
    PendingContext,
    Retrieval,
)
from mindledger.domain.identity import DEFAULT_MODEL
from mindledger.domain.model_port import CompletionModel
from mindledger.domain.turns import TurnOutcome
from mindledger.projections.retrieval.context import fit

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
CONDITIONS = ("recall", "bm25", "none")
MAX_ANSWER_WORDS = 6
NOW = "2024-01-01T00:00:00Z"  # after every LoCoMo session, as bench/locomo.py
SEED = 18

# Our own memory questions: (what is told in an earlier turn, the question, the gold answer).
SMOKE = [
    ("Please remember: I promised to send the budget report to Maria on Friday.",
     "What did I promise to send to Maria?", "the budget report"),
    ("My sister is called Ada.", "What is my sister called?", "Ada"),
    ("My dentist appointment is on 14 March.", "When is my dentist appointment?", "14 March"),
    ("I prefer green tea to coffee.", "Which drink do I prefer?", "green tea"),
    ("My cat's name is Pixel.", "What is my cat's name?", "Pixel"),
    ("The wifi password at the cabin is bluefern42.",
     "What is the wifi password at the cabin?", "bluefern42"),
]  # fmt: skip


@dataclass
class Answer:
    """One question asked under one condition, scored."""

    category: int
    condition: str
    question: str
    gold: str
    reply: str
    f1: float
    contains: bool
    model_ms: float
    context_tokens: int
    cut_off: bool
    repeats: bool
    status: str


def pick_questions(sample: dict[str, Any], per_category: int, seed: int) -> list[dict[str, Any]]:
    """`per_category` questions of each of categories 1-4 with a short gold answer, drawn with
    `seed` (the same draw every run)."""
    rng = random.Random(f"{seed}/{sample['sample_id']}")
    chosen = []
    for category in CATEGORIES:
        pool = [
            qa
            for qa in sample["qa"]
            if qa.get("category") == category
            and "answer" in qa
            and 0 < len(normalise(str(qa["answer"])).split()) <= MAX_ANSWER_WORDS
        ]
        chosen += rng.sample(pool, min(per_category, len(pool)))
    return chosen


class FixedMemory:
    """The turn's retrieval port with its memory replaced: a turn's request for context gets
    what `memory(query)` gives (a BM25 block, or nothing); closing goes to `inner`."""

    def __init__(self, inner: Retrieval, memory: Callable[[str], AssembledContext]) -> None:
        self.inner, self.memory = inner, memory

    def context(self, request: ContextRequest) -> PendingContext:
        """The fixed memory for the request's query, already read."""
        return Ready(self.memory(request.query))

    def close(self) -> None:
        """Release what the real read side holds."""
        self.inner.close()


class Ready:
    """A context that is already there (`PendingContext`)."""

    def __init__(self, context: AssembledContext) -> None:
        self.context = context

    def result(self) -> AssembledContext:
        """The context."""
        return self.context

    def cancel(self) -> None:
        """Nothing to give up."""


def ask(
    template: Path,
    work: Path,
    question: str,
    model: CompletionModel,
    budget: int,
    memory: Callable[[str], AssembledContext] | None = None,
) -> TurnOutcome:
    """One real turn in a fresh copy of the mind at `template`; `memory` replaces recall."""
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(template, work)
    service = turn_service(Home(work))
    if memory is not None:
        service.retrieval = FixedMemory(service.retrieval, memory)
    with service:
        outcome: TurnOutcome = service.run(question, model, budget=budget)
    return outcome


def score(category: int, condition: str, question: str, gold: str, o: TurnOutcome) -> Answer:
    """The reply of one turn against its gold answer."""
    return Answer(
        category,
        condition,
        question,
        gold,
        o.reply,
        round(token_f1(o.reply, gold), 4),
        contains_answer(o.reply, gold),
        o.latency_ms,
        o.context_tokens,
        o.cut_off,
        repeats_itself(o.reply_raw),
        o.status,
    )


def no_memory(query: str) -> AssembledContext:
    """No memory at all."""
    return AssembledContext([], "", 0)


def locomo_answers(
    model: CompletionModel,
    data: Path,
    conversations: int,
    per_category: int,
    budget: int,
    seed: int = SEED,
    progress: Callable[[Answer], None] | None = None,
) -> list[Answer]:
    """Every chosen question under the three conditions."""
    answers: list[Answer] = []
    with tempfile.TemporaryDirectory() as tmp:
        for sample in locomo_samples(data)[:conversations]:
            template = Path(tmp) / sample["sample_id"]
            app = new_mind(template)
            import_locomo(app, data, sample["sample_id"])
            app.close()
            with read_model(Home(template)):
                pass  # caught up once here, not in every copy
            bm25, items, _ = baseline(sample)
            for qa in pick_questions(sample, per_category, seed):
                question, gold = qa["question"], str(qa["answer"])
                work = Path(tmp) / "work"
                recalled = ask(template, work, question, model, budget)
                # BM25 gets the same room recall used for this question.
                order = bm25.get_scores(normalise(question).split())
                ranked = [items[i] for i in sorted(range(len(items)), key=lambda i: -order[i])]

                room = max(recalled.context_tokens, 1)

                def bm25_memory(q: str, ranked: list[Any] = ranked, room: int = room) -> Any:
                    return fit(ranked, room)

                for condition, outcome in (
                    ("recall", recalled),
                    ("bm25", ask(template, work, question, model, budget, bm25_memory)),
                    ("none", ask(template, work, question, model, budget, no_memory)),
                ):
                    answers.append(score(qa["category"], condition, question, gold, outcome))
                    if progress:
                        progress(answers[-1])
    return answers


def smoke_answers(
    model: CompletionModel, budget: int, progress: Callable[[Answer], None] | None = None
) -> list[Answer]:
    """Our own memory questions: every fact told in a turn first, then each question asked in a
    fresh copy of that mind, with recall and with no memory."""
    answers: list[Answer] = []
    with tempfile.TemporaryDirectory() as tmp:
        template = Path(tmp) / "told"
        new_mind(template).close()
        for told, _, _ in SMOKE:
            with turn_service(Home(template)) as service:
                service.run(told, model, budget=budget)
        for _, question, gold in SMOKE:
            for condition, memory in (("recall", None), ("none", no_memory)):
                outcome = ask(template, Path(tmp) / "work", question, model, budget, memory)
                answers.append(score(0, condition, question, gold, outcome))
                if progress:
                    progress(answers[-1])
    return answers


def summary(answers: list[Answer]) -> list[dict[str, Any]]:
    """Per category (0 = all) and condition: questions, mean F1, contains rate, model time per
    turn, and how often a reply was cut off or repeated itself."""
    rows = []
    categories = sorted({a.category for a in answers})
    for category in [*categories, -1] if len(categories) > 1 else categories:
        for condition in CONDITIONS:
            group = [
                a for a in answers if a.condition == condition and category in (-1, a.category)
            ]
            if not group:
                continue
            rows.append(
                {
                    "category": CATEGORIES.get(category, "all" if category == -1 else "smoke"),
                    "condition": condition,
                    "questions": len(group),
                    "f1": round(statistics.mean(a.f1 for a in group), 3),
                    "contains": round(statistics.mean(a.contains for a in group), 3),
                    "model_ms_mean": round(statistics.mean(a.model_ms for a in group)),
                    "model_ms_p50": round(statistics.median(a.model_ms for a in group)),
                    "context_tokens_mean": round(statistics.mean(a.context_tokens for a in group)),
                    "cut_off": round(statistics.mean(a.cut_off for a in group), 3),
                    "repeats": round(statistics.mean(a.repeats for a in group), 3),
                    "failed": sum(a.status != "complete" for a in group),
                }
            )
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    """The summary as a markdown table."""
    head = (
        "| category | memory | n | F1 | contains | model ms/turn (mean, p50) | memory tokens "
        "| cut off | repeats |\n|---|---|---|---|---|---|---|---|---|\n"
    )
    return head + "".join(
        f"| {r['category']} | {r['condition']} | {r['questions']} | {r['f1']:.3f} "
        f"| {r['contains']:.3f} | {r['model_ms_mean']}, {r['model_ms_p50']} "
        f"| {r['context_tokens_mean']} | {r['cut_off']:.2f} | {r['repeats']:.2f} |\n"
        for r in rows
    )


@contextmanager
def open_model(spec: str, run_home: Path) -> Iterator[CompletionModel]:
    """The model named by `spec`, built the way `mind turn` builds it (config.json and
    MIND_MODEL_* of `run_home`); the embedded server it starts is stopped afterwards."""
    from mindledger.adapters.local_model import LocalModelServer

    try:
        yield build_model(Home(run_home), spec)
    finally:
        LocalModelServer(run_home / "run").stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=DEFAULT_MODEL, help="any configured model spec")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--conversations", type=int, default=2)
    parser.add_argument("--per-category", type=int, default=3)
    parser.add_argument("--budget", type=int, default=2000, help="recall budget (models may cap)")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--smoke", action="store_true", help="our own memory questions instead")
    parser.add_argument("--json", action="store_true", help="print JSON instead of markdown")
    args = parser.parse_args()
    os.environ["MIND_NOW"] = NOW
    os.environ.setdefault("MIND_MODEL_TIMEOUT", "900")  # a busy machine is slow, not broken

    def show(a: Answer) -> None:
        if not args.json:
            print(f"  [{a.condition}] {a.question} -> {a.reply[:70]!r} F1 {a.f1}", flush=True)

    with tempfile.TemporaryDirectory() as tmp, open_model(args.model, Path(tmp)) as model:
        if args.smoke:
            answers = smoke_answers(model, args.budget, show)
        else:
            answers = locomo_answers(
                model, args.data, args.conversations, args.per_category, args.budget,
                args.seed, show,
            )  # fmt: skip
    rows = summary(answers)
    if args.json:
        print(json.dumps({"model": args.model, "summary": rows,
                          "answers": [asdict(a) for a in answers]}, indent=2))  # fmt: skip
    else:
        print(f"\nmodel {args.model}\n\n{markdown(rows)}")


if __name__ == "__main__":
    main()
