"""Tools on the Responses API (`POST /v1/responses`), read into and written from the shapes the
floor's turn takes (chat's: `MindLedger.turn`'s `tools`, `tool_choice`, `parallel_tool_calls`,
`response_format`, `tool_results`).

In: the Responses API's flat function tools (`{"type": "function", "name", "description",
"parameters", "strict"}`), its `tool_choice` (`{"type": "function", "name"}` for one tool), its
`text.format` (`json_schema` or `json_object`), and the input's `function_call` items (the
model's earlier calls, passed back) and `function_call_output` items (their results). Out: the
reply's tool calls as `function_call` output items. Only function tools: a hosted tool
(`web_search`, `file_search`, ...) is OpenAI's own service, which a mind does not run; it is a
400 naming it, never ignored."""

from __future__ import annotations

from typing import Any

from mindledger.service.errors import ApiError

TOOL_KEYS = ("type", "name", "description", "parameters", "strict")
CALL_KEYS = ("type", "call_id", "name", "arguments", "id", "status")
OUTPUT_KEYS = ("type", "call_id", "output", "id", "status")
FORMAT_KEYS = ("type", "name", "schema", "description", "strict")


def _refuse(code: str, message: str, param: str) -> ApiError:
    return ApiError(400, code, message, param)


def _only(item: dict[str, Any], keys: tuple[str, ...], where: str) -> None:
    for key in item:
        if key not in keys:
            raise _refuse("unknown_parameter", f"{where}.{key[:40]} is not a field here", where)


def _tool(n: int, tool: Any) -> dict[str, Any]:
    where = f"tools[{n}]"
    if not isinstance(tool, dict):
        raise _refuse("invalid_request", f"{where} must be an object", where)
    kind = tool.get("type")
    if kind != "function":
        raise _refuse(
            "unsupported_parameter",
            f"{where}.type {str(kind)[:40]!r}: only function tools are taken (a hosted tool is "
            "OpenAI's own service)",
            f"{where}.type",
        )
    _only(tool, TOOL_KEYS, where)
    function = {k: v for k, v in tool.items() if k != "type" and v is not None}
    return {"type": "function", "function": function}


def _choice(given: Any) -> Any:
    """`tool_choice` in chat's shape (one named function: `{"type", "function": {"name"}}`)."""
    if not isinstance(given, dict):
        return given  # "none", "auto", "required"; the floor checks the word
    if given.get("type") != "function" or set(given) != {"type", "name"}:
        raise _refuse(
            "unsupported_parameter",
            'tool_choice must be "none", "auto", "required" or {"type": "function", "name"}',
            "tool_choice",
        )
    return {"type": "function", "function": {"name": given["name"]}}


def _format(text: Any) -> dict[str, Any] | None:
    """`text.format` as chat's `response_format` (None: plain text)."""
    if text is None:
        return None
    if not isinstance(text, dict) or not set(text) <= {"format", "verbosity"}:
        raise _refuse("unsupported_parameter", "text takes only format", "text")
    if text.get("verbosity") is not None:
        raise _refuse("unsupported_parameter", "text.verbosity is not supported", "text.verbosity")
    given = text.get("format")
    if given is None or given == {"type": "text"}:
        return None
    if not isinstance(given, dict) or given.get("type") not in ("json_schema", "json_object"):
        raise _refuse(
            "unsupported_parameter",
            "text.format.type must be text, json_schema or json_object",
            "text.format",
        )
    _only(given, FORMAT_KEYS, "text.format")
    if given["type"] == "json_object":
        return {"type": "json_object"}
    schema = {k: v for k, v in given.items() if k != "type" and v is not None}
    return {"type": "json_schema", "json_schema": schema}


def tooling(body: dict[str, Any]) -> dict[str, Any]:
    """The body's tools, tool choice, parallel calls and text format as the floor's turn takes
    them (absent, null or an empty list: not given)."""
    tools = body.get("tools")
    read: dict[str, Any] = {}
    if tools not in (None, []):
        if not isinstance(tools, list):
            raise _refuse("invalid_request", "tools must be a list of function tools", "tools")
        read["tools"] = [_tool(n, t) for n, t in enumerate(tools)]
    choice = body.get("tool_choice")
    if choice is not None and (tools or choice not in ("none", "auto")):
        read["tool_choice"] = _choice(choice)  # with no tools, none and auto ask nothing
    parallel = body.get("parallel_tool_calls")
    if parallel is not None and tools:
        read["parallel_tool_calls"] = parallel
    response_format = _format(body.get("text"))
    if response_format is not None:
        read["response_format"] = response_format
    return read


def call_item(n: int, item: dict[str, Any]) -> dict[str, Any]:
    """A `function_call` input item as a tool call of an assistant message (chat's shape)."""
    where = f"input[{n}]"
    _only(item, CALL_KEYS, where)
    for key in ("call_id", "name", "arguments"):
        if not isinstance(item.get(key), str):
            raise _refuse("invalid_input", f"{where}.{key} must be a text", f"{where}.{key}")
    function = {"name": item["name"], "arguments": item["arguments"]}
    return {"id": item["call_id"], "type": "function", "function": function}


def output_item(n: int, item: dict[str, Any]) -> dict[str, Any]:
    """A `function_call_output` input item as a tool message (chat's shape)."""
    where = f"input[{n}]"
    _only(item, OUTPUT_KEYS, where)
    if not isinstance(item.get("call_id"), str):
        raise _refuse("invalid_input", f"{where}.call_id must be a text", f"{where}.call_id")
    output = item.get("output")
    if isinstance(output, list):  # text parts
        if not all(
            isinstance(p, dict) and p.get("type") == "input_text" and isinstance(p.get("text"), str)
            for p in output
        ):
            raise _refuse(
                "unsupported_content",
                f"{where}.output's parts must be input_text parts with a text",
                f"{where}.output",
            )
        output = "".join(p["text"] for p in output)
    if not isinstance(output, str):
        raise _refuse("invalid_input", f"{where}.output must be a text", f"{where}.output")
    return {"role": "tool", "tool_call_id": item["call_id"], "content": output}


def call_items(calls: list[dict[str, Any]], status: str = "completed") -> list[dict[str, Any]]:
    """The reply's tool calls as `function_call` output items (the call's id is the mind's)."""
    return [
        {
            "type": "function_call",
            "id": f"fc_{call['id']}",
            "call_id": call["id"],
            "name": call["function"]["name"],
            "arguments": call["function"]["arguments"],
            "status": status,
        }
        for call in calls
    ]


def echoed(request_tooling: dict[str, Any]) -> dict[str, Any]:
    """The `response` object's `tools`, `tool_choice`, `parallel_tool_calls` and `text` as the
    request gave them (in the Responses API's shape)."""
    tools = [
        {"type": "function", **{"parameters": None, "strict": None}, **t["function"]}
        for t in request_tooling.get("tools", ())
    ]
    choice = request_tooling.get("tool_choice", "auto" if tools else "none")
    if isinstance(choice, dict):
        choice = {"type": "function", "name": choice["function"]["name"]}
    response_format = request_tooling.get("response_format")
    if response_format is None:
        text_format: dict[str, Any] = {"type": "text"}
    elif response_format["type"] == "json_object":
        text_format = {"type": "json_object"}
    else:
        text_format = {"type": "json_schema", **response_format["json_schema"]}
    return {
        "tools": tools,
        "tool_choice": choice,
        "parallel_tool_calls": request_tooling.get("parallel_tool_calls", True),
        "text": {"format": text_format},
    }
