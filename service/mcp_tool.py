"""An MCP tool as agents expect it: it calls one use case of the floor and answers with
one structured result (the use case's JSON, `structuredContent`, published as the tool's
`outputSchema`) and a text rendering of it (`content`: one block, never none). Arguments are
checked against a schema agents see (no unknown argument: `additionalProperties` false; the
floor's limits), and every refusal, and a turn whose model failed, is `isError` with one line
in our words. Hints tell an agent which tools only read.

The SDK's decorator would build the argument model from a function's signature and ignore
unknown arguments, so each tool is a `Tool` built here: its arguments reach the function
unchecked and are checked by our own model, which words the refusal."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from mindledger.domain.errors import MindError

if TYPE_CHECKING:
    from mcp.server.mcpserver.tools.base import Tool
    from mcp_types import CallToolResult

    from mindledger.service.minds import ServedMind

A = TypeVar("A", bound="Arguments")


class Arguments(BaseModel):
    """A tool's arguments: no unknown ones."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def refusal(tool: str, error: ValidationError, names: list[str]) -> str:
    """The first problem with a call's arguments, as one line naming the argument."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    kind, given, limits = first["type"], first.get("input"), first.get("ctx") or {}
    if kind == "extra_forbidden":
        takes = ", ".join(names) or "no arguments"
        return f"{tool}: unknown argument {where!r}; this tool takes {takes}"
    if kind == "missing":
        return f"{tool}: {where!r} is missing; give it"
    if kind == "string_too_short":
        return f"{tool}: {where} is empty; give some text"
    if kind == "greater_than_equal":
        return f"{tool}: {where} {given!r} is too small; give at least {limits['ge']}"
    shown = repr(given) if isinstance(given, str | int | float) else type(given).__name__
    return f"{tool}: {where}: {first['msg']} (got {shown[:60]})"


def said(text: str, *, error: bool = False) -> CallToolResult:
    """A result of one text block."""
    from mcp_types import CallToolResult, TextContent

    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=error)


def answered(result: BaseModel, empty: str | None = None) -> CallToolResult:
    """A read's result: its JSON as structured content (a list under `result`: structured
    content is an object) and as one text block; `empty`, the words said instead when there
    is nothing (an empty list is said so too)."""
    from mcp_types import CallToolResult, TextContent

    from mindledger.safe_text import json_text

    data: Any = result.model_dump(mode="json")
    structured = {"result": data} if isinstance(data, list) else data
    if empty is None and data == []:
        empty = "none"
    text = empty if empty is not None else json_text(data)
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=structured
    )


def output_schema(result_type: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of what `answered` gives for `result_type` (pydantic's, of the dump)."""
    from pydantic import RootModel, TypeAdapter

    schema = TypeAdapter(result_type).json_schema(mode="serialization")
    if not issubclass(result_type, RootModel):
        return schema
    defs = schema.pop("$defs", None)
    wrapped = {"type": "object", "properties": {"result": schema}, "required": ["result"]}
    return {**wrapped, "$defs": defs} if defs else wrapped


@dataclass(frozen=True)
class Hints:
    """What a tool does to the mind (MCP's tool annotations)."""

    title: str
    read_only: bool = True
    destructive: bool = False  # a turn only appends: nothing it does removes or rewrites
    idempotent: bool = True  # a second identical call does nothing more
    open_world: bool = False  # reaches outside the mind (a model provider)


def built_tool(
    mind: ServedMind,
    name: str,
    description: str,
    hints: Hints,
    arguments: type[A],
    result_type: type[BaseModel],
    run: Callable[[A], CallToolResult],
    pool: ThreadPoolExecutor | None = None,
) -> Tool:
    """A tool that checks its arguments, then runs `run` in a worker thread (in `pool` when
    given: a turn's thread finishes even when its client goes away)."""
    from mcp.server.mcpserver.tools.base import Tool
    from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
    from mcp_types import ToolAnnotations

    class Given(ArgModelBase):
        """The arguments as the client sent them (checked by `arguments`, in our words)."""

        model_config = ConfigDict(extra="allow")

        def model_dump_one_level(self) -> dict[str, Any]:
            return {"given": dict(self.__pydantic_extra__ or {})}

    async def call(given: dict[str, Any]) -> CallToolResult:
        try:
            checked = arguments.model_validate(given)
        except ValidationError as e:
            return said(refusal(name, e, list(arguments.model_fields)), error=True)
        home = mind.home.path
        try:
            if pool is not None:
                return await asyncio.wrap_future(pool.submit(run, checked))
            return await asyncio.to_thread(run, checked)
        except MindError as e:  # refused input or a refused read: what to change
            from mindledger.error_report import failure_message
            from mindledger.service.clients import shows_paths

            message = failure_message(e, home, mind.secrets, full_path=shows_paths())
            # Named by the tool, as an argument's refusal is (`refusal`): one shape of error.
            return said(f"{name}: {' '.join(message.split())}", error=True)
        except Exception as e:  # the tool's boundary: one line, the traceback in the home's log
            # (imported here: the server's error module loads the read models' errors, a
            # second of DuckDB, Arrow and NumPy that `mind mcp` need not pay before it answers)
            from mindledger.service.errors import internal_error_message

            return said(internal_error_message(e, mind.secrets, home), error=True)

    schema = arguments.model_json_schema()
    schema.pop("title", None)
    return Tool(
        fn=call,
        name=name,
        title=hints.title,
        description=" ".join(description.split()),
        parameters=schema,
        # A published schema without a model: the result is the floor's typed result already.
        fn_metadata=FuncMetadata(arg_model=Given, output_schema=output_schema(result_type)),
        is_async=True,
        annotations=ToolAnnotations(
            title=hints.title,
            read_only_hint=hints.read_only,
            destructive_hint=hints.destructive,
            idempotent_hint=hints.idempotent,
            open_world_hint=hints.open_world,
        ),
    )
