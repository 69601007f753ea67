"""The tools of one mind over MCP: `turn` (the one that writes), and the reads `recall`,
`commitments`, `threads`, `concepts`, `identity` and `query`. Each calls one use case of the
floor; its structured content is the use case's JSON (the same data `--json` and the HTTP API
give), and its text is that same JSON (one dump, so a text-only client reads the same names);
a turn whose model failed is recorded failed and answered as an error."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from pydantic import Field

from mindledger.domain.budgets import DEFAULT_BUDGET, RECALL_BUDGET_FLOOR, TURN_BUDGET_FLOOR
from mindledger.domain.errors import InvalidInputError
from mindledger.service.mcp_tool import Arguments, Hints, answered, built_tool
from mindledger.service.sampling_fields import SAMPLING_HELP, SYSTEM_HELP, Sampling

if TYPE_CHECKING:
    from mcp.server.mcpserver.tools.base import Tool
    from mcp_types import CallToolResult

    from mindledger.service.minds import ServedMind


class TurnArguments(Arguments):
    """What `turn` takes."""

    text: str = Field(min_length=1, description="What to say to the mind.")
    model: str | None = Field(
        None,
        min_length=1,
        description="A model for this turn (a LiteLLM model string or local/...); "
        "default: the mind's own.",
    )
    budget: int = Field(
        DEFAULT_BUDGET, ge=TURN_BUDGET_FLOOR, description="Tokens of memory put before the model."
    )
    include_events: bool = Field(False, description="Add the turn's ledger events to the text.")
    system: str | None = Field(None, description=SYSTEM_HELP)
    sampling: Sampling | None = Field(None, description=SAMPLING_HELP)


class RecallArguments(Arguments):
    """What `recall` takes."""

    query: str = Field(description="What to remember.")
    budget: int = Field(
        DEFAULT_BUDGET, ge=RECALL_BUDGET_FLOOR, description="Tokens of memory to recall at most."
    )


class CommitmentsArguments(Arguments):
    """What `commitments` takes."""

    include_closed: bool = Field(False, description="List the closed commitments too.")


class ThreadsArguments(Arguments):
    """What `threads` takes."""

    include_resolved: bool = Field(False, description="List the resolved threads too.")


class QueryArguments(Arguments):
    """What `query` takes."""

    sql: str = Field(min_length=1, description="One read-only SQL statement.")


class NoArguments(Arguments):
    """What a tool that takes nothing takes."""


# The floor names `mock_reply`, which agents are not offered: the server's setting scripts it.
UNSCRIPTED_MOCK = (
    'the model "mock" needs a scripted reply, and this server has none (its setting '
    "MIND_MOCK_REPLY gives one); name another model in `model`"
)


def failed_turn_line(data: dict[str, Any]) -> str:
    """What an agent is told of a turn whose model failed (the turn is recorded, failed)."""
    failure = data.get("failure") or {}
    why = failure.get("message") or "no reply"
    kind = failure.get("kind", data["status"])
    return f"turn {data['turn']} failed ({kind}): {why}; it is recorded failed, the message kept"


def mind_tools(mind: ServedMind, turn_pool: ThreadPoolExecutor) -> list[Tool]:
    """The tools of `mind`; turns run in `turn_pool`."""
    from mindledger.results import RecallResult, TurnResult
    from mindledger.results_ledger import QueryRows
    from mindledger.results_listings import Commitments, Concepts, IdentityResult, Threads

    def turn(a: TurnArguments) -> CallToolResult:
        from mcp_types import CallToolResult, TextContent

        from mindledger.safe_text import json_text

        try:
            done = mind.run_turn(
                a.text,
                model=a.model,
                budget=a.budget,
                system=a.system,
                sampling=a.sampling.chosen() if a.sampling is not None else None,
            )
        except InvalidInputError as e:
            if e.param != "mock_reply":
                raise
            raise InvalidInputError(UNSCRIPTED_MOCK, param="model") from None
        data = done.data  # the result's JSON dump, as every front-end gives it
        # The text is the structured content itself (one dump, the same names `--json` prints).
        content = [TextContent(type="text", text=json_text(data, indent=None))]
        if a.include_events:  # a block of its own: the structured content keeps its schema
            events = mind.turn_events(done.outcome.notification_ids).model_dump(mode="json")
            content.append(TextContent(type="text", text=json_text(events, indent=None)))
        failed = data["status"] != "complete"
        if failed:
            content.insert(0, TextContent(type="text", text=failed_turn_line(data)))
        return CallToolResult(content=content, structured_content=data, is_error=failed)

    def recall(a: RecallArguments) -> CallToolResult:
        found = mind.recall(a.query, a.budget)
        return answered(found, None if found.items else f"nothing recalled for {a.query!r}")

    def commitments(a: CommitmentsArguments) -> CallToolResult:
        rows = mind.commitments(a.include_closed)
        return answered(
            rows,
            None if len(rows) else "no commitments" if a.include_closed else "no open commitments",
        )

    def threads(a: ThreadsArguments) -> CallToolResult:
        rows = mind.threads(a.include_resolved)
        return answered(
            rows, None if len(rows) else "no threads" if a.include_resolved else "no live threads"
        )

    def concepts(_: NoArguments) -> CallToolResult:
        rows = mind.concepts()
        return answered(rows, None if len(rows) else "no concepts")

    def identity(_: NoArguments) -> CallToolResult:
        return answered(mind.identity())

    def query(a: QueryArguments) -> CallToolResult:
        from mindledger.results_ledger import QueryRows
        from mindledger.service.clients import data_for_client

        rows = mind.query(a.sql)
        # DuckDB names its file in its catalog and settings (MCP over HTTP: a remote client).
        shown = QueryRows.model_validate(
            data_for_client(rows.model_dump(mode="json"), [mind.home.path])
        )
        return answered(shown, None if len(rows) else "no rows")

    return [
        built_tool(
            mind,
            "turn",
            """Say `text` to the mind: one recorded turn. Structured content: the turn as `mind
            turn --json` prints it (`reply`, `status`, `failure`, `opened`/`closed`, `claims`,
            `rejections`, `context`, `events`, ...). Text content: the same JSON object, and
            with `include_events` a second block, the turn's ledger events (a JSON list). A
            turn whose model failed is an error result (recorded failed, the message kept),
            a line saying so before the JSON.""",
            Hints("Talk to the mind", read_only=False, idempotent=False, open_world=True),
            TurnArguments,
            TurnResult,
            turn,
            turn_pool,
        ),
        built_tool(
            mind,
            "recall",
            "Search the mind's memory for `query`: the items a turn would see (`mind recall`).",
            Hints("Recall from memory"),
            RecallArguments,
            RecallResult,
            recall,
        ),
        built_tool(
            mind,
            "commitments",
            "The mind's open commitments (with `include_closed`, the closed ones too).",
            Hints("List commitments"),
            CommitmentsArguments,
            Commitments,
            commitments,
        ),
        built_tool(
            mind,
            "threads",
            "The mind's live threads by tension (with `include_resolved`, resolved ones too).",
            Hints("List threads"),
            ThreadsArguments,
            Threads,
            threads,
        ),
        built_tool(
            mind,
            "concepts",
            "The concepts the mind has defined, with their aliases and relations.",
            Hints("List concepts"),
            NoArguments,
            Concepts,
            concepts,
        ),
        built_tool(
            mind,
            "identity",
            "The mind's identity: name, model, settings and its history (`mind identity`).",
            Hints("Show identity"),
            NoArguments,
            IdentityResult,
            identity,
        ),
        built_tool(
            mind,
            "query",
            """Read-only SQL over the mind's read models (the sandbox and limits of `mind
            query`): one object per row.""",
            Hints("Query the read models"),
            QueryArguments,
            QueryRows,
            query,
        ),
    ]
