"""The floor's reads, as methods `MindLedger` inherits: recall, the listings, status, the log,
a turn's prompt, verify, query and the ledger's events. Each opens its own read-only session
(no write lock), so a server may run them concurrently from worker threads."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mindledger.checked import checked_methods
from mindledger.compose import Home
from mindledger.domain.budgets import DEFAULT_BUDGET, RECALL_BUDGET_FLOOR, check_budget
from mindledger.rules import AsOf, parse_as_of

if TYPE_CHECKING:
    from mindledger.results import RecallResult
    from mindledger.results_ledger import Events, QueryRows, StatusResult, TurnPrompt, VerifyResult
    from mindledger.results_listings import Commitments, Concepts, IdentityResult, Threads


@checked_methods
class ReadCommands:
    """Recall, listings, status, log, turn prompts, verify, query, events."""

    home: Home

    def recall(
        self, query: str, budget: int = DEFAULT_BUDGET, as_of: AsOf | str | None = None
    ) -> RecallResult:
        """`mind recall --json`: what the mind would remember for `query`, and why; `as_of` a
        ledger position ("1200") or an ISO-8601 time: the mind as it stood then."""
        from mindledger.recall import recall_data
        from mindledger.results import RecallResult

        check_budget(budget, RECALL_BUDGET_FLOOR)
        return RecallResult.model_validate(recall_data(self.home, query, budget, _as_of(as_of)))

    def commitments(self, include_closed: bool = False) -> Commitments:
        """`mind commitments [--all] --json`."""
        from mindledger.compose import read_model
        from mindledger.projections.queries import listings
        from mindledger.results_listings import Commitments

        with read_model(self.home) as con:
            return Commitments.model_validate(listings.commitments(con, include_closed))

    def threads(self, include_resolved: bool = False, as_of: AsOf | str | None = None) -> Threads:
        """`mind threads [--all] --json`: threads by tension (`as_of` as for `recall`)."""
        from mindledger.results_listings import Threads
        from mindledger.threads import thread_listing

        return Threads.model_validate(thread_listing(self.home, include_resolved, _as_of(as_of))[0])

    def concepts(self) -> Concepts:
        """`mind concepts --json`."""
        from mindledger.compose import read_model
        from mindledger.projections.queries import listings
        from mindledger.results_listings import Concepts

        with read_model(self.home) as con:
            return Concepts.model_validate(listings.concepts(con))

    def identity(self) -> IdentityResult:
        """`mind identity --json`."""
        from mindledger.compose import read_model
        from mindledger.projections.queries import listings
        from mindledger.results_listings import IdentityResult

        with read_model(self.home) as con:
            return IdentityResult.model_validate(listings.identity(con))

    def status(self) -> StatusResult:
        """`mind status --json`."""
        from mindledger.ledger_reads import status_data
        from mindledger.results_ledger import StatusResult

        return StatusResult.model_validate(status_data(self.home))

    def log(self, limit: int = 20, kind: str | None = None) -> Events:
        """`mind log [--limit N] [--kind K] --json`: the latest `limit` events (1 to 100,000),
        oldest first; `kind` one aggregate kind (identity, commitment, concept, thread,
        import)."""
        from mindledger.compose import finish_forgets
        from mindledger.domain.errors import InvalidInputError
        from mindledger.ledger_reads import KINDS, log_events
        from mindledger.results_ledger import Events

        finish_forgets(self.home)  # a forget a crash interrupted, before its words are shown
        if not 1 <= limit <= 100_000:
            raise InvalidInputError(f"log: limit {limit} is not between 1 and 100,000")
        if kind is not None and kind not in KINDS:
            raise InvalidInputError(f"log: kind {kind!r} is not one of {', '.join(KINDS)}")

        return Events.model_validate(log_events(self.home, limit, kind))

    def turn_prompt(self, ref: str) -> TurnPrompt:
        """`mind log --turn REF --json`: what the model was sent in that turn."""
        from mindledger.compose import finish_forgets
        from mindledger.results_ledger import TurnPrompt
        from mindledger.turn_prompt import turn_prompt
        from mindledger.turn_refs import resolve_turn

        finish_forgets(self.home)  # a forget a crash interrupted, before its words are shown
        return TurnPrompt.model_validate(turn_prompt(self.home, resolve_turn(self.home, ref)))

    def verify(self, head: str | None = None) -> VerifyResult:
        """`mind verify --json`: the hash chain recomputed; `head` a hash kept elsewhere."""
        from mindledger.ledger_io import verify_ledger
        from mindledger.results_ledger import VerifyResult
        from mindledger.rules import checked_head

        kept = checked_head(head)
        return VerifyResult.model_validate(verify_ledger(self.home, kept, error_as_failure=True))

    def query(self, sql: str, params: dict[str, str] | None = None) -> QueryRows:
        """`mind query SQL --json`: read-only SQL in the sandbox, within the query limits."""
        from mindledger.queries import query_records
        from mindledger.results_ledger import QueryRows

        return QueryRows.model_validate(query_records(self.home, sql, params or {}))

    def events_after(self, position: int, limit: int = 500) -> Events:
        """The ledger's events after `position` (at most `limit`), as `mind log --json`."""
        from mindledger.compose import open_reader
        from mindledger.domain.errors import InvalidInputError
        from mindledger.ledger_reads import opened_events
        from mindledger.results_ledger import Events

        if position < 0 or not 1 <= limit <= 100_000:
            raise InvalidInputError(
                "events_after: give a position >= 0 and a limit of 1 to 100,000"
            )

        reader = open_reader(self.home)
        try:
            rows = []
            for row in reader.rows(after=position, batch=limit):
                rows.append(row)
                if len(rows) >= limit:
                    break
            return Events.model_validate(opened_events(reader, rows))
        finally:
            reader.close()

    def turn_events(self, notification_ids: list[int]) -> Events:
        """A turn's own events (`TurnOutcome.notification_ids`) in ledger order, as `mind log
        --json` shows them (another writer's events between them left out)."""
        from mindledger.compose import open_reader
        from mindledger.ledger_reads import opened_events
        from mindledger.results_ledger import Events

        reader = open_reader(self.home)
        try:
            positions = set(reader.positions(notification_ids))
            if not positions:
                return Events.model_validate([])
            rows = reader.rows(after=min(positions) - 1, stop=max(positions))
            return Events.model_validate(
                opened_events(reader, [r for r in rows if r.position in positions])
            )
        finally:
            reader.close()


def _as_of(value: AsOf | str | None) -> AsOf | None:
    return parse_as_of(value, "as_of") if isinstance(value, str) else value
