"""Tools and structured output a caller offers a turn's model (OpenAI's `tools`, `tool_choice`,
`parallel_tool_calls`, `response_format`), the tool calls a reply makes and the results a
caller sends back, each checked in OpenAI's shape (InvalidInputError naming the argument).

A reply's tool calls carry ids the mind gives (`call_<turn id><n>`, under OpenAI's 40
characters), not the provider's: the results that answer them name the turn that asked, so the
turn they start is linked to it without a lookup (docs/decisions/0022-tool-calls-end-a-turn.md).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple
from uuid import UUID

from mindledger.domain.errors import InvalidInputError, UnsupportedParameterError

if TYPE_CHECKING:
    from mindledger.domain.model_port import CompletionModel

MAX_TOOLS = 128  # OpenAI's limit
MAX_CALLS = 256  # tool calls one reply may make (two hex digits of the id)
MAX_RESULTS = 256
MAX_JSON_CHARS = 1_000_000  # tools and a response format together; tool results together
MAX_ID_CHARS = 200
NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # OpenAI's rule for function and schema names
CHOICES = ("none", "auto", "required")
CALL_ID = re.compile(r"^call_([0-9a-f]{32})[0-9a-f]{2}$")
PARAMS = ("tools", "tool_choice", "parallel_tool_calls", "response_format")


class ToolRequest(NamedTuple):
    """What a caller offers the model for one reply (empty: nothing; the model's own)."""

    tools: tuple[dict[str, Any], ...] = ()
    tool_choice: str | dict[str, Any] | None = None
    parallel_tool_calls: bool | None = None
    response_format: dict[str, Any] | None = None

    def chosen(self) -> dict[str, Any]:
        """The parameters given, by name, as recorded with the turn and sent (JSON values)."""
        given: dict[str, Any] = {"tools": [dict(t) for t in self.tools]} if self.tools else {}
        for name in PARAMS[1:]:
            value = getattr(self, name)
            if value is not None:
                given[name] = value
        return given

    def __bool__(self) -> bool:
        return bool(self.chosen())


def _json(value: Any, param: str) -> Any:
    """`value` as plain JSON data (a copy), or InvalidInputError naming `param`."""
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
        text.encode("utf-8")
    except (TypeError, ValueError) as e:  # UnicodeEncodeError is a ValueError
        raise InvalidInputError(f"`{param}` must be JSON data ({e})", param=param) from None
    if len(text) > MAX_JSON_CHARS:
        raise InvalidInputError(
            f"`{param}` is {len(text):,} characters of JSON; the limit is {MAX_JSON_CHARS:,}",
            param=param,
        )
    return json.loads(text)


def _object(
    value: Any, where: str, keys: Sequence[str], required: Sequence[str], param: str | None = None
) -> None:
    if isinstance(value, dict) and set(required) <= set(value) <= set(keys):
        return
    optional = [k for k in keys if k not in required]
    also = f" (optionally {', '.join(optional)})" if optional else ""
    raise InvalidInputError(
        f"`{where}` must be an object with {', '.join(required)}{also}",
        param=param or where.split(".")[0].split("[")[0],
    )


def _name(value: Any, where: str, param: str) -> str:
    if not isinstance(value, str) or not NAME.match(value):
        raise InvalidInputError(f"`{where}` must be 1 to 64 letters, digits, _ or -", param=param)
    return value


def _tool(n: int, tool: Any) -> dict[str, Any]:
    where = f"tools[{n}]"
    _object(tool, where, ("type", "function"), ("type", "function"))
    if tool["type"] != "function":
        raise InvalidInputError(f'`{where}.type` must be "function"', param="tools")
    function = tool["function"]
    keys = ("name", "description", "parameters", "strict")
    _object(function, f"{where}.function", keys, ("name",))
    _name(function["name"], f"{where}.function.name", "tools")
    kinds = {"description": str, "parameters": dict, "strict": bool}
    for key, kind in kinds.items():
        if key in function and not isinstance(function[key], kind):
            raise InvalidInputError(
                f"`{where}.function.{key}` must be a {kind.__name__}", param="tools"
            )
    return dict(tool)


def _tools(given: Any) -> tuple[dict[str, Any], ...]:
    if given is None:
        return ()
    if not isinstance(given, list):
        raise InvalidInputError("`tools` must be a list of function tools", param="tools")
    if len(given) > MAX_TOOLS:
        raise InvalidInputError(f"`tools` holds at most {MAX_TOOLS} tools", param="tools")
    tools = tuple(_tool(n, t) for n, t in enumerate(given))
    names = [t["function"]["name"] for t in tools]
    twice = next((name for name in names if names.count(name) > 1), None)
    if twice is not None:
        raise InvalidInputError(f"`tools` names {twice!r} twice", param="tools")
    return tools


def _choice(given: Any, names: list[str]) -> str | dict[str, Any] | None:
    if given is None or (given == "none" and not names):
        return None  # no tools: "none" asks nothing
    if not names:
        raise InvalidInputError("`tool_choice` needs `tools`", param="tool_choice")
    if isinstance(given, str) and given in CHOICES:
        return given
    if (
        isinstance(given, dict)
        and given.get("type") == "function"
        and set(given)
        == {
            "type",
            "function",
        }
    ):
        function = given["function"]
        if isinstance(function, dict) and set(function) == {"name"}:
            if function["name"] in names:
                return {"type": "function", "function": {"name": function["name"]}}
            raise InvalidInputError(
                f"`tool_choice` names {str(function['name'])[:64]!r}, which is not in `tools`",
                param="tool_choice",
            )
    raise InvalidInputError(
        '`tool_choice` must be "none", "auto", "required" or '
        '{"type": "function", "function": {"name": ...}}',
        param="tool_choice",
    )


def _format(given: Any) -> dict[str, Any] | None:
    if given is None or given == {"type": "text"}:
        return None  # plain text asks nothing
    if given == {"type": "json_object"}:
        return {"type": "json_object"}
    if isinstance(given, dict) and given.get("type") == "json_schema":
        _object(given, "response_format", ("type", "json_schema"), ("type", "json_schema"))
        schema = given["json_schema"]
        keys = ("name", "schema", "description", "strict")
        _object(schema, "response_format.json_schema", keys, ("name",))
        _name(schema["name"], "response_format.json_schema.name", "response_format")
        kinds = {"description": str, "schema": dict, "strict": bool}
        for key, kind in kinds.items():
            if key in schema and not isinstance(schema[key], kind):
                raise InvalidInputError(
                    f"`response_format.json_schema.{key}` must be a {kind.__name__}",
                    param="response_format",
                )
        return {"type": "json_schema", "json_schema": dict(schema)}
    raise InvalidInputError(
        '`response_format` must be {"type": "text"}, {"type": "json_object"} or '
        '{"type": "json_schema", "json_schema": {"name": ..., "schema": {...}}}',
        param="response_format",
    )


def checked_tools(
    tools: Any = None,
    tool_choice: Any = None,
    parallel_tool_calls: Any = None,
    response_format: Any = None,
) -> ToolRequest:
    """A caller's tools and response format, checked in OpenAI's shape (InvalidInputError
    naming the parameter at fault); the values that ask nothing (no tools, "none", plain
    text) read as not given."""
    checked_list = _tools(_json(tools, "tools"))
    names = [t["function"]["name"] for t in checked_list]
    choice = _choice(_json(tool_choice, "tool_choice"), names)
    if parallel_tool_calls is not None and not isinstance(parallel_tool_calls, bool):
        raise InvalidInputError(
            "`parallel_tool_calls` must be true or false", param="parallel_tool_calls"
        )
    if parallel_tool_calls is not None and not names:
        raise InvalidInputError("`parallel_tool_calls` needs `tools`", param="parallel_tool_calls")
    request = ToolRequest(
        checked_list,
        choice,
        parallel_tool_calls,
        _format(_json(response_format, "response_format")),
    )
    _json(request.chosen(), "tools")  # the whole within the limit
    return request


def _text(value: Any, where: str, param: str, empty: bool = True) -> str:
    if not isinstance(value, str) or (not empty and not value.strip()):
        raise InvalidInputError(
            f"`{where}` must be a {'' if empty else 'non-empty '}text", param=param
        )
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in value):
        raise InvalidInputError(f"`{where}` is not valid UTF-8", param=param)
    return value


def _call_id(value: Any, where: str, param: str) -> str:
    text = _text(value, where, param, empty=False)
    if len(text) > MAX_ID_CHARS:
        raise InvalidInputError(f"`{where}` is longer than {MAX_ID_CHARS} characters", param=param)
    return text


def checked_call(call: Any, where: str, param: str) -> dict[str, Any]:
    """One tool call as a caller sends it back in an assistant message (OpenAI's shape)."""
    _object(call, where, ("id", "type", "function"), ("id", "type", "function"), param)
    if call["type"] != "function":
        raise InvalidInputError(f'`{where}.type` must be "function"', param=param)
    function = call["function"]
    _object(function, f"{where}.function", ("name", "arguments"), ("name", "arguments"), param)
    return {
        "id": _call_id(call["id"], f"{where}.id", param),
        "type": "function",
        "function": {
            "name": _text(function["name"], f"{where}.function.name", param, empty=False),
            "arguments": _text(function["arguments"], f"{where}.function.arguments", param),
        },
    }


def checked_result(result: Any, where: str, param: str) -> dict[str, str]:
    """One tool result (`{"tool_call_id", "content"}`)."""
    _object(result, where, ("tool_call_id", "content"), ("tool_call_id", "content"), param)
    return {
        "tool_call_id": _call_id(result["tool_call_id"], f"{where}.tool_call_id", param),
        "content": _text(result["content"], f"{where}.content", param),
    }


def checked_results(results: Sequence[Any] | None) -> tuple[dict[str, str], ...]:
    """The results of tool calls a caller sends back (the message of the turn they start)."""
    given = list(results or ())
    if len(given) > MAX_RESULTS:
        raise InvalidInputError(
            f"`tool_results` holds at most {MAX_RESULTS} results", param="tool_results"
        )
    checked = tuple(
        checked_result(r, f"tool_results[{n}]", f"tool_results[{n}]") for n, r in enumerate(given)
    )
    if sum(len(r["content"]) for r in checked) > MAX_JSON_CHARS:
        raise InvalidInputError(
            f"`tool_results` hold more than {MAX_JSON_CHARS:,} characters", param="tool_results"
        )
    return checked


def call_id(turn_id: UUID, n: int) -> str:
    """The id of the `n`th tool call of turn `turn_id`'s reply."""
    return f"call_{turn_id.hex}{n:02x}"


def asking_turn(tool_call_id: str) -> UUID | None:
    """The turn whose reply made the call `tool_call_id`, when the mind gave that id."""
    found = CALL_ID.match(tool_call_id)
    return UUID(found[1]) if found else None


def tool_message(result: Mapping[str, str]) -> dict[str, str]:
    """A tool result as the message a model is sent."""
    return {"role": "tool", "tool_call_id": result["tool_call_id"], "content": result["content"]}


def tooled(model: CompletionModel, request: ToolRequest) -> CompletionModel:
    """`model` calling with a caller's tools and response format; a model that cannot take
    them refuses (UnsupportedParameterError naming the model and the first parameter)."""
    if not request:
        return model
    apply = getattr(model, "with_tools", None)
    if apply is None:
        name = next(iter(request.chosen()))
        raise UnsupportedParameterError(
            f"model {model.name} takes no `{name}`; leave it out or choose a model that does",
            param=name,
        )
    result: CompletionModel = apply(request)
    return result
