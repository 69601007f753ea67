"""A Responses API request (`POST /v1/responses`, as the OpenAI Agents SDK sends it) read as a
turn: `input` (a text, or items: messages of role user, system, developer or assistant, content
a text or text parts; the model's earlier `function_call`s and their `function_call_output`s)
becomes the turn's text, the caller's system prompt (`instructions` first, then its system and
developer messages) and its earlier messages; `function_call_output` items that end the input
are the turn's message (tool results, as chat's trailing tool messages are). `temperature`,
`top_p`, `max_output_tokens` and `user` are chat's sampling settings; function `tools`,
`tool_choice`, `parallel_tool_calls` and `text.format` are chat's tools and response format
(service/responses_tools.py). A field a turn cannot honour (`previous_response_id`, `store`,
reasoning, a hosted tool, ...) or one the API does not define is a 400 naming it, never
ignored; the floor names a value at fault, `request_field` gives its field.

`previous_response_id` is refused rather than mapped: responses are not kept for lookup (the
turn is in the mind's ledger); a client sends the conversation in `input`, as the Agents SDK
does by default."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from mindledger.service.chat_request import ChatRequest, _options, _sampling
from mindledger.service.errors import ApiError
from mindledger.service.openai_fields import known_fields, mind_model, neutral_only
from mindledger.service.responses_tools import call_item, output_item, tooling

SAMPLING = ("temperature", "top_p", "user", "safety_identifier")
# Fields a turn honours only at the value that asks nothing of it (null always does).
NEUTRAL: dict[str, tuple[Any, ...]] = {
    "max_tool_calls": (),
    "include": ([],),
    "store": (False,),
    "metadata": ({},),
    "truncation": ("disabled",),
    "background": (False,),
    "service_tier": ("auto",),
    "top_logprobs": (0,),
    "previous_response_id": (),
    "conversation": (),
    "prompt": (),
    "reasoning": (),
    "prompt_cache_key": (),
    "prompt_cache_retention": (),
    "context_management": (),
}
WHY = {
    "max_tool_calls": "max_tool_calls is not supported: a reply makes the calls its model "
    "makes; leave it out",
    "store": "store must be false (or absent): a response is not kept for lookup (the turn "
    "is in the mind's ledger)",
    "previous_response_id": "previous_response_id is not supported: responses are not kept "
    "for lookup; send the conversation in input",
    "conversation": "conversation is not supported: send the conversation in input",
    "background": "background must be false: a turn is answered while the request waits",
}
OWN = ("model", "input", "instructions", "max_output_tokens", "stream", "stream_options")
TOOLING = ("tools", "tool_choice", "parallel_tool_calls", "text")
KNOWN = frozenset((*OWN, "mind_options", *SAMPLING, *NEUTRAL, *TOOLING))
ROLES = ("system", "developer", "user", "assistant")
# The part type each role's content may hold (an assistant's is its earlier output).
PART = {"user": "input_text", "system": "input_text", "developer": "input_text"}
PART["assistant"] = "output_text"
# Keys of a message item besides role and content (the SDK's own output item passed back).
ITEM_KEYS = ("type", "id", "status", "phase")
PART_KEYS = ("type", "text", "annotations", "logprobs")


@dataclass
class ResponsesRequest(ChatRequest):
    """A Responses API request as the floor's turn takes it."""

    ROUTE: ClassVar[str] = "/v1/responses"
    ITEMS: ClassVar[str] = "input"

    instructions: str | None = None
    input_is_text: bool = False
    text_at: int = 0  # the input item of the turn's text
    calls_at: list[int] = field(default_factory=list)  # function_call items joined to a message

    def request_field(self, param: str | None) -> str | None:
        """The request field a floor argument (`param` of its error) came from."""
        if param is None:
            return None
        head = param.partition(".")[0]
        if head == "text":
            return "input" if self.input_is_text else f"input[{self.text_at}].content"
        for name, at in (("history", self.history_at), ("tool_results", self.results_at)):
            if head.startswith(f"{name}[") and head.endswith("]"):
                index = int(head[len(name) + 1 : -1])
                if 0 <= index < len(at):
                    return f"input[{at[index]}]"
                return "input"
        if head == "response_format":
            return "text.format"
        if head == "system":
            if self.instructions is not None or self.system_at is None:
                return "instructions"
            return f"input[{self.system_at}].content"
        return super().request_field(param)


def _refuse(code: str, message: str, param: str) -> ApiError:
    return ApiError(400, code, message, param)


def _content(role: str, content: Any, where: str) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list) or not content:
        raise _refuse("invalid_input", f"{where}.content must be a text", f"{where}.content")
    texts = []
    for n, part in enumerate(content):
        at = f"{where}.content[{n}]"
        kind = part.get("type") if isinstance(part, dict) else None
        if kind != PART[role] or not isinstance(part.get("text"), str):
            raise _refuse(
                "unsupported_content",
                f"{at}: a {role} message's parts must be {PART[role]} parts with a text",
                f"{where}.content",
            )
        extra = sorted(k for k, v in part.items() if k not in PART_KEYS and v is not None)
        if extra or part.get("annotations") or part.get("logprobs"):
            name = extra[0] if extra else "annotations" if part.get("annotations") else "logprobs"
            raise _refuse("unsupported_content", f"{at}.{name} is not supported", at)
        texts.append(part["text"])
    return "".join(texts)


def _item(n: int, item: Any) -> tuple[str, Any]:
    """An input item: ("message", (role, text)), ("call", a tool call) or ("output", a tool
    message), in chat's shapes."""
    where = f"input[{n}]"
    if not isinstance(item, dict):
        raise _refuse("invalid_input", f"{where} must be an object", where)
    kind = item.get("type", "message")
    if kind == "function_call":
        return "call", call_item(n, item)
    if kind == "function_call_output":
        return "output", output_item(n, item)
    if kind != "message":
        raise _refuse(
            "unsupported_parameter",
            f"{where}.type {str(kind)[:40]!r}: only message, function_call and "
            "function_call_output items are taken",
            f"{where}.type",
        )
    role = item.get("role")
    if role not in ROLES:
        raise _refuse(
            "invalid_input", f"{where}.role must be one of {', '.join(ROLES)}", f"{where}.role"
        )
    for key in item:
        if key not in ("role", "content", *ITEM_KEYS):
            raise _refuse("unknown_parameter", f"{where}.{key[:40]} is not a message field", where)
    return "message", (role, _content(role, item.get("content"), where))


def _input(given: Any, request: ResponsesRequest) -> None:
    if isinstance(given, str):
        if not given.strip():
            raise _refuse("invalid_input", "input is empty; give some text", "input")
        request.text, request.input_is_text = given, True
        request.system = request.instructions
        return
    if not isinstance(given, list) or not given:
        raise _refuse("invalid_input", "input must be a text or a non-empty list", "input")
    read = [_item(n, item) for n, item in enumerate(given)]
    last = len(read) - 1
    # Function call outputs that end the input are the turn's message (tool results).
    first_result = last + 1
    while first_result > 0 and read[first_result - 1][0] == "output":
        first_result -= 1
    if first_result <= last:
        request.tool_results = [
            {"tool_call_id": m["tool_call_id"], "content": m["content"]}
            for _, m in read[first_result:]
        ]
        request.results_at = list(range(first_result, last + 1))
        _earlier(read[:first_result], request)
        return
    kind, said = read[last]
    if kind != "message" or said[0] != "user":
        raise _refuse(
            "invalid_input",
            f"input[{last}]: the last item must be the user's or a function_call_output",
            "input",
        )
    if not said[1].strip():
        where = f"input[{last}].content"
        raise _refuse("invalid_input", f"{where} is empty; give some text", where)
    _earlier(read[:last], request)
    request.text, request.text_at = said[1], last


def _earlier(read: list[tuple[str, Any]], request: ResponsesRequest) -> None:
    """The items before the turn's own: system prompts, and the conversation (a call joins the
    assistant message just before it, as one chat message holds its text and its calls)."""
    systems = [request.instructions] if request.instructions is not None else []
    for n, (kind, said) in enumerate(read):
        if kind == "message" and said[0] in ("system", "developer"):
            systems.append(said[1])
            request.system_at = n if request.system_at is None else request.system_at
            continue
        if kind == "call":
            previous = request.history[-1] if request.history else None
            if (
                previous is not None
                and previous["role"] == "assistant"
                and n - 1
                in (
                    request.history_at[-1],
                    *request.calls_at,
                )
            ):
                previous.setdefault("tool_calls", []).append(said)
                request.calls_at.append(n)
                continue
            message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [said]}
            request.calls_at.append(n)
        elif kind == "output":
            message = said
        else:
            message = {"role": said[0], "content": said[1]}
        request.history.append(message)
        request.history_at.append(n)
    if systems:
        request.system = "\n\n".join(systems)


def _stream(body: dict[str, Any], request: ResponsesRequest) -> None:
    stream = body.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise _refuse("invalid_request", "stream must be true or false", "stream")
    request.stream = bool(stream)
    options = body.get("stream_options")
    if options is None:
        return
    if not stream:
        raise _refuse(
            "invalid_request", "stream_options is only for stream: true", "stream_options"
        )
    if not isinstance(options, dict) or any(
        k != "include_obfuscation" or v not in (None, False) for k, v in options.items()
    ):
        raise _refuse(
            "unsupported_parameter",
            "stream_options takes only include_obfuscation: false (nothing is obfuscated)",
            "stream_options",
        )


def responses_request(body: Any) -> ResponsesRequest:
    """A Responses API request's body read as a turn (ApiError 400 naming the field at fault)."""
    body = known_fields(body, KNOWN, "a Responses")
    model = mind_model(body)
    neutral_only(body, NEUTRAL, WHY)
    instructions = body.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        raise _refuse("invalid_request", "instructions must be a text", "instructions")
    request = ResponsesRequest(model=model, text="", instructions=instructions)
    request.tooling = tooling(body)
    _input(body.get("input"), request)
    _sampling({k: body.get(k) for k in SAMPLING}, request)
    limit = body.get("max_output_tokens")
    if limit is not None:
        request.sampling["max_tokens"] = limit
        request.sampling_from["max_tokens"] = "max_output_tokens"
    request.options = _options(body.get("mind_options"))
    _stream(body, request)
    return request
