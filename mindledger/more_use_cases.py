"""The floor's other use cases, as methods `MindLedger` inherits: the direct commands
(concepts, threads, identity), the owner's knowledge decisions, autonomy, a chat import,
reports, the graph and the model (files and long work: `file_use_cases`). Each delegates to
the floor module that holds the use case and returns its typed result (the JSON the command's
`--json` prints, validated); writes hold the mind's write lock."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from mindledger.checked import checked_methods
from mindledger.compose import Home
from mindledger.domain.budgets import DEFAULT_BUDGET

if TYPE_CHECKING:
    from mindledger.autonomy import TickDone  # a return type: not checked, not imported
    from mindledger.results import KnowledgeChange, KnowledgeList, KnowledgeShown
    from mindledger.results_ledger import (
        ChatImported,
        GraphNeighbors,
        GraphStats,
        ModelShown,
        ReportRows,
        TickResult,
    )
    from mindledger.results_listings import (
        ConceptAliased,
        ConceptDefined,
        ConceptsRelated,
        ModelSet,
        NameAdopted,
        ThreadOpened,
        ThreadResolved,
    )


@checked_methods
class DirectCommands:
    """Concepts, threads, identity, autonomy, a chat import, reports, graph, model."""

    home: Home
    write_lock: threading.RLock
    _name: str | None

    def define_concept(self, token: str, definition: str) -> ConceptDefined:
        """`mind concept define TOKEN DEFINITION --json`."""
        from mindledger.listings import define_concept
        from mindledger.results_listings import ConceptDefined

        with self.write_lock:
            return ConceptDefined.model_validate(define_concept(self.home, token, definition))

    def alias_concept(self, token: str, alias: str) -> ConceptAliased:
        """`mind concept alias TOKEN ALIAS --json`."""
        from mindledger.listings import alias_concept
        from mindledger.results_listings import ConceptAliased

        with self.write_lock:
            return ConceptAliased.model_validate(alias_concept(self.home, token, alias))

    def relate_concepts(self, source: str, target: str, relation: str) -> ConceptsRelated:
        """`mind concept relate SOURCE TARGET --as RELATION --json`."""
        from mindledger.listings import relate_concepts
        from mindledger.results_listings import ConceptsRelated

        with self.write_lock:
            related = relate_concepts(self.home, source, target, relation)
        return ConceptsRelated.model_validate(related)

    def adopt_name(self, name: str, reason: str | None = None) -> NameAdopted:
        """`mind identity adopt NAME --json`: the owner renames the mind."""
        from mindledger.listings import adopt_name
        from mindledger.results_listings import NameAdopted

        with self.write_lock:
            adopted = NameAdopted.model_validate(adopt_name(self.home, name, reason))
            self._name = adopted.name  # what `name` says from now on
            return adopted

    def open_thread(self, label: str, content: str) -> ThreadOpened:
        """`mind thread open LABEL --content TEXT --json`."""
        from mindledger.results_listings import ThreadOpened
        from mindledger.threads import open_thread

        with self.write_lock:
            return ThreadOpened.model_validate(open_thread(self.home, label, content))

    def resolve_thread(
        self,
        thread: str,
        verdict: str,
        *,
        reason: str | None = None,
        artifact: str | None = None,
        by: str | None = None,
    ) -> ThreadResolved:
        """`mind thread resolve ID --as VERDICT --json` (a short id, a prefix or a full id)."""
        from mindledger.results_listings import ThreadResolved
        from mindledger.threads import resolve_thread

        with self.write_lock:
            resolved = resolve_thread(self.home, thread, verdict, reason, artifact, by)
        return ThreadResolved.model_validate(resolved)

    def tick(
        self,
        *,
        model: str | None = None,
        mock_reply: str | None = None,
        budget: int = DEFAULT_BUDGET,
        now: str | None = None,
    ) -> TickResult:
        """`mind tick --json`: one autonomy cycle (a fired one runs a turn on `model`);
        `now`: an ISO-8601 time every clock of this cycle reads."""
        from mindledger.results_ledger import TickResult

        ticked = self.run_tick(model=model, mock_reply=mock_reply, budget=budget, now=now)
        return TickResult.model_validate(ticked.data)

    def run_tick(
        self,
        *,
        model: str | None = None,
        mock_reply: str | None = None,
        budget: int = DEFAULT_BUDGET,
        now: str | None = None,
    ) -> TickDone:
        """`tick`, with the cycle's outcome beside its JSON (for front-ends that render the
        fired turn's effects)."""
        from mindledger.autonomy import tick
        from mindledger.domain.budgets import TURN_BUDGET_FLOOR, check_budget

        check_budget(budget, TURN_BUDGET_FLOOR)  # before the cycle's decision is recorded

        with self.write_lock:
            return tick(self.home, now, model, mock_reply, budget)

    def import_chat(self, path: str | Path, conversation: str | None = None) -> ChatImported:
        """`mind import chat FILE [--conversation NAME] --json`: a JSONL transcript."""
        from mindledger.imports import import_chat
        from mindledger.results_ledger import ChatImported

        with self.write_lock:
            imported = import_chat(self.home, Path(path).expanduser(), conversation)
        return ChatImported.model_validate(imported)

    def report(self, name: str) -> ReportRows:
        """`mind report NAME --json` (commitments, activity)."""
        from mindledger.reports import report_records
        from mindledger.results_ledger import ReportRows

        return ReportRows.model_validate(report_records(self.home, name))

    def graph_stats(self) -> GraphStats:
        """`mind graph stats --json`: the mind as a graph of concepts, commitments, threads."""
        from mindledger.graph import graph_stats
        from mindledger.results_ledger import GraphStats

        return GraphStats.model_validate(graph_stats(self.home))

    def graph_neighbors(self, node: str, depth: int = 1) -> GraphNeighbors:
        """`mind graph neighbors NODE --json` (`depth` 1 to 10)."""
        from mindledger.domain.errors import InvalidInputError
        from mindledger.graph import graph_neighbors
        from mindledger.results_ledger import GraphNeighbors

        if not 1 <= depth <= 10:
            raise InvalidInputError(f"graph_neighbors: depth {depth} is not between 1 and 10")

        return GraphNeighbors.model_validate(graph_neighbors(self.home, node, depth))

    def model(self) -> ModelShown:
        """`mind model show --json`: the mind's model and the settings it runs with."""
        from mindledger.models import model_details
        from mindledger.results_ledger import ModelShown

        return ModelShown.model_validate(model_details(self.home))

    def set_model(self, spec: str) -> ModelSet:
        """`mind model set SPEC --json`: the model later turns run on (recorded)."""
        from mindledger.models import set_model
        from mindledger.results_listings import ModelSet

        with self.write_lock:
            return ModelSet.model_validate(set_model(self.home, spec))


@checked_methods
class KnowledgeCommands:
    """What the mind knows: list, show, and the owner's decisions on items and answers."""

    home: Home
    write_lock: threading.RLock

    def knowledge(self, include_deleted: bool = False) -> KnowledgeList:
        """`mind knowledge list --json`."""
        from mindledger.knowledge import knowledge_listing
        from mindledger.results import KnowledgeList

        return KnowledgeList.model_validate(knowledge_listing(self.home, include_deleted))

    def knowledge_item(self, ref: str, *, history: bool = False) -> KnowledgeShown:
        """`mind knowledge show REF --json` (an id, an id prefix or the question)."""
        from mindledger.knowledge import knowledge_shown
        from mindledger.results import KnowledgeShown

        return KnowledgeShown.model_validate(knowledge_shown(self.home, ref, history))

    def judge(
        self, ref: str, judgement: Literal["verify", "dispute", "retract"], note: str | None = None
    ) -> KnowledgeChange:
        """`mind knowledge verify|dispute|retract REF --json`: the owner's decision."""
        from mindledger.knowledge import change_json, judge_item
        from mindledger.results import KnowledgeChange

        with self.write_lock:
            change = judge_item(self.home, ref, judgement, note)
        return KnowledgeChange.model_validate(change_json(change))

    def edit_knowledge(self, ref: str, answer: str) -> KnowledgeChange:
        """`mind knowledge edit REF ANSWER --json`: a new revision."""
        from mindledger.knowledge import change_json, edit_item
        from mindledger.results import KnowledgeChange

        with self.write_lock:
            change = edit_item(self.home, ref, answer)
        return KnowledgeChange.model_validate(change_json(change))

    def delete_knowledge(self, ref: str, reason: str | None = None) -> KnowledgeChange:
        """`mind knowledge delete REF --json`: a tombstone revision."""
        from mindledger.knowledge import change_json, delete_item
        from mindledger.results import KnowledgeChange

        with self.write_lock:
            change = delete_item(self.home, ref, reason)
        return KnowledgeChange.model_validate(change_json(change))

    def approve(self, turn: str) -> KnowledgeChange:
        """`mind approve TURN --json`: the turn's answer becomes verified knowledge."""
        from mindledger.knowledge import change_json, decide_turn
        from mindledger.results import KnowledgeChange

        with self.write_lock:
            change = decide_turn(self.home, turn, "approve")
        return KnowledgeChange.model_validate(change_json(change))

    def discard(self, turn: str) -> KnowledgeChange:
        """`mind discard TURN --json`: the turn's knowledge is retracted."""
        from mindledger.knowledge import change_json, decide_turn
        from mindledger.results import KnowledgeChange

        with self.write_lock:
            change = decide_turn(self.home, turn, "discard")
        return KnowledgeChange.model_validate(change_json(change))
