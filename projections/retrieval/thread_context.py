"""The threads block of a turn's context: the top-k live threads by tension, the triage demand,
the lines the last turn refused, and the rule that only artifact-backed work lowers tension."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import _duckdb as duckdb  # the engine without its Python layer: decisions/0026

from mindledger.domain.context_port import ContextItem
from mindledger.domain.prompt_text import in_label, one_line
from mindledger.domain.tension import TensionParams
from mindledger.projections.engine.kept_reads import KeptReads
from mindledger.projections.queries.kept_threads import KeptThreadReads
from mindledger.projections.queries.thread_queries import (
    ThreadReads,
    details,
    extremes,
    triage_demand,
)

RULE = (
    "[rule] Only verified work lowers a thread's tension: THREAD-WORK citing a workspace file "
    "changed in this cycle, a commitment closed in this turn with evidence, or a tool the "
    "runtime ran. Writing about a thread changes nothing but its mention count."
)


@dataclass
class ThreadView:
    """What a turn shows of its threads: the tensest, the calmest (for triage), the live count."""

    top: list[dict[str, Any]] = field(default_factory=list)
    calmest: list[dict[str, Any]] = field(default_factory=list)
    live: int = 0
    params: TensionParams = field(default_factory=TensionParams)
    # Every column of the top and, when triage is due, of the calmest, read in one statement.
    top_details: list[dict[str, Any]] = field(default_factory=list)
    calmest_details: list[dict[str, Any]] = field(default_factory=list)

    @property
    def triage_due(self) -> bool:
        return self.live > self.params.max_live_threads


def live_threads(
    con: duckdb.DuckDBPyConnection, now: datetime, limit: int, kept: KeptReads | None = None
) -> ThreadView:
    """Live threads opened up to ledger position `limit`, by tension as of `now` (`kept`: the
    reads the session's projector keeps, `projections.engine.kept_reads`)."""
    reads = ThreadReads(con) if kept is None else KeptThreadReads(con, kept)
    params = reads.settings(now)
    top, calmest, live = extremes(con, now, params, limit, params.top_k, reads=reads)
    view = ThreadView(top, calmest, live, params)
    shown = details(con, top + (calmest if view.triage_due else []), reads.fetch)
    view.top_details, view.calmest_details = shown[: len(top)], shown[len(top) :]
    return view


def thread_text(row: dict[str, Any]) -> str:
    """How a thread reads in context: the numbers first, then what it is about."""
    return (
        f"[thread {in_label(row['id'])} tension {row['tension']:.2f}, "
        f"{row['hours_unworked']:.1f} h unworked, origin {in_label(row['origin'])}, "
        f"{row['mentions_since_work'] or 0} mentions without work] "
        f"{one_line(row['label'])}: {one_line(row['content'])}"
    )


def candidates(view: ThreadView) -> list[tuple[int, str, str, str | None, str]]:
    """The top-k threads as retrieval candidates (id, kind, text, source_id, reason)."""
    return [
        (r["opened_position"], "thread", thread_text(r), r["id"], f"tension {r['tension']:.2f}")
        for r in view.top_details
    ]


def notices(view: ThreadView, refusals: list[dict[str, str]]) -> list[ContextItem]:
    """The rule, the triage demand (if any) and the last turn's refusals
    (`thread_queries.last_refusals`), as context items."""
    texts: list[tuple[str, str]] = [(RULE, "the thread rule")]
    demand = None
    if view.triage_due:
        demand = triage_demand(view.live, view.params, view.calmest_details)
    if demand:
        names = ", ".join(
            f"{one_line(c['id'])} ({c['tension']:.2f}) {one_line(c['label'])}"
            for c in demand["candidates"]
        )
        texts.append(
            (
                f"[triage] {demand['live']} live threads, cap {demand['cap']}: resolve or "
                f"merge some. Lowest tension: {names}",
                "triage demand",
            )
        )
    for refusal in refusals:
        texts.append(
            (
                f"refused: {one_line(refusal['line'])} -- {one_line(refusal['reason'])}",
                "refused in the last turn",
            )
        )
    return [ContextItem(0, "notice", "threads", why, 0.0, 0, text) for text, why in texts]
