"""A chat completion request read as a turn: every field OpenAI's API defines either becomes
an argument of the floor's turn (`MindLedger.turn`: the message, the caller's system prompt,
its earlier messages, its sampling settings, its tools and response format, the tool results
that end the conversation) or is refused with a 400 naming it (`param`); nothing is dropped
in silence, and a field OpenAI does not define is refused too.

Only the request's form is checked here; the floor checks the values (ranges, lengths) and
names the argument at fault, which `request_field` turns back into the request's field.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

from mindledger.service.errors import ApiError

PREFIX = "mind/"
MIND_OPTIONS = {"model": str, "mock_reply": str, "api_base": str, "budget": int}
# Request field -> the floor's sampling setting it fills.
SAMPLING = {
    "temperature": "temperature",
    "top_p": "top_p",
    "max_tokens": "max_tokens",
    "max_completion_tokens": "max_tokens",
    "stop": "stop",
    "seed": "seed",
    "presence_penalty": "presence_penalty",
    "frequency_penalty": "frequency_penalty",
    "user": "user",
    "safety_identifier": "user",  # OpenAI's newer name for `user`
}
# Fields the floor's turn takes as they are (it checks them, and refuses them for a model
# that cannot take them: domain/tool_use.py).
TOOLING = ("tools", "tool_choice", "parallel_tool_calls", "response_format")
# Fields a turn honours only at the value that asks nothing of it (null always does): one
# choice, no legacy functions, no log-probabilities, nothing stored elsewhere.
NEUTRAL: dict[str, tuple[Any, ...]] = {
    "n": (1,),
    "functions": ([],),
    "function_call": ("none",),
    "logprobs": (False,),
    "top_logprobs": (0,),
    "logit_bias": ({},),
    "store": (False,),
    "metadata": ({},),
    "modalities": (["text"],),
    "service_tier": ("auto",),
    "reasoning_effort": (),
    "verbosity": (),
    "audio": (),
    "prediction": (),
    "web_search_options": (),
    "prompt_cache_key": (),
}
WHY = {
    "n": "n must be 1: a turn gives one reply",
    "functions": "functions is OpenAI's older form of tools; send tools",
    "function_call": "function_call is OpenAI's older form of tool_choice; send tool_choice",
}
OWN = ("model", "messages", "stream", "stream_options", "mind_options")
KNOWN = frozenset((*OWN, *SAMPLING, *NEUTRAL, *TOOLING))
ROLES = ("system", "developer", "user", "assistant", "tool")
# Keys of a message besides role and content that a client may send empty (the SDK's own
# assistant message, passed back, carries them as null).
EMPTY_MESSAGE_KEYS = ("name", "refusal", "tool_calls", "function_call", "audio", "annotations")
# Keys a message of that role carries (given: not empty). A user's or assistant's `name` (its
# speaker, as multi-agent frameworks name each agent's messages) goes with it to the floor,
# which checks it (domain/client_chat.py); a system prompt's is refused, it has no speaker.
ROLE_KEYS = {
    "user": ("name",),
    "assistant": ("tool_calls", "name"),
    "tool": ("tool_call_id",),
}


@dataclass
class ChatRequest:
    """A chat completion request as the floor's turn takes it."""

    model: str
    text: str
    system: str | None = None
    name: str | None = None  # the turn's message's speaker, as the client named it
    history: list[dict[str, Any]] = field(default_factory=list)
    sampling: dict[str, Any] = field(default_factory=dict)
    tooling: dict[str, Any] = field(default_factory=dict)  # TOOLING fields given
    tool_results: list[dict[str, Any]] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)
    stream: bool = False
    include_usage: bool = False  # stream_options.include_usage: a last chunk with the usage
    # Where the floor's arguments came from: history index -> message index; the first
    # system message; the field each sampling setting came from.
    history_at: list[int] = field(default_factory=list)
    results_at: list[int] = field(default_factory=list)
    system_at: int | None = None
    text_at: int = 0  # the message that is the turn's text
    sampling_from: dict[str, str] = field(default_factory=dict)

    ROUTE: ClassVar[str] = "/v1/chat/completions"  # earlier messages' provenance
    ITEMS: ClassVar[str] = "messages"  # the request's list the floor's history came from

    def turn_args(self) -> dict[str, Any]:
        """The floor's `turn` keyword arguments (the message aside)."""
        args: dict[str, Any] = dict(self.options)
        if self.system is not None:
            args["system"] = self.system
        if self.name is not None:
            args["name"] = self.name
        if self.history:
            args["history"] = self.history
            args["via"] = self.ROUTE
        if self.sampling:
            args["sampling"] = self.sampling
        args.update(self.tooling)
        if self.tool_results:
            args["tool_results"] = self.tool_results
        return args

    def request_field(self, param: str | None) -> str | None:
        """The request field a floor argument (`param` of its error) came from."""
        if param is None:
            return None
        head, dot, rest = param.partition(".")
        if head in ("history", "tool_results"):  # the whole list (too long)
            return self.ITEMS
        for name, at in (("history", self.history_at), ("tool_results", self.results_at)):
            if head.startswith(f"{name}[") and head.endswith("]"):
                index = int(head[len(name) + 1 : -1])
                if 0 <= index < len(at):
                    where = f"messages[{at[index]}]"
                    return f"{where}.{rest}" if dot else f"{where}.content"
                return "messages"
        if head == "text":
            return f"messages[{self.text_at}].content"
        if head == "name":
            return f"messages[{self.text_at}].name"
        if head == "system":
            return f"messages[{self.system_at}].content" if self.system_at is not None else None
        if head in self.sampling_from:
            return self.sampling_from[head]
        if head in MIND_OPTIONS:
            return f"mind_options.{head}"
        return param

    def request_words(self, message: str) -> str:
        """A floor's message with the arguments it names in backticks (`history[1].content`)
        named as the request's fields (`messages[3].content`), and the turn's own `name` as
        its message's, as `request_field` names `param`: a client sent no `history`."""

        def item(found: re.Match[str]) -> str:
            at = self.history_at if found[1] == "history" else self.results_at
            index = int(found[2])
            return f"`{self.ITEMS}[{at[index]}]" if index < len(at) else found[0]

        message = message.replace("`name`", f"`{self.ITEMS}[{self.text_at}].name`")
        return _FLOOR_LIST.sub(f"`{self.ITEMS}`", _FLOOR_ITEM.sub(item, message))


_FLOOR_ITEM = re.compile(r"`(history|tool_results)\[(\d+)\]")
_FLOOR_LIST = re.compile(r"`(history|tool_results)`")


def _refuse(code: str, message: str, param: str) -> ApiError:
    return ApiError(400, code, message, param)


def _neutral(name: str, value: Any) -> None:
    if value is None or any(value == ok and type(value) is type(ok) for ok in NEUTRAL[name]):
        return
    why = WHY.get(name, f"{name} is not supported by a mind's turn; leave it out")
    raise _refuse("unsupported_parameter", why, name)


def _text(content: Any, where: str) -> str:
    """A message's content as text: a string, or a list of text parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and content:
        for n, part in enumerate(content):
            if not (
                isinstance(part, dict)
                and part.get("type") == "text"
                and isinstance(part.get("text"), str)
            ):
                raise _refuse(
                    "unsupported_content",
                    f"{where}.content[{n}]: a message's parts must all be text parts",
                    f"{where}.content",
                )
        return "".join(p["text"] for p in content)
    raise _refuse("invalid_messages", f"{where}.content must be a text", f"{where}.content")


def _message(n: int, message: Any) -> dict[str, Any]:
    """A message as the floor takes it: role and text; an assistant's tool calls (its text
    None when it has none), a tool's `tool_call_id`. The floor checks their shape."""
    where = f"messages[{n}]"
    if not isinstance(message, dict):
        raise _refuse("invalid_messages", f"{where} must be an object", where)
    role = message.get("role")
    if role == "function":
        raise _refuse(
            "unsupported_parameter",
            f"{where}.role 'function' is OpenAI's older form of tool messages; send role 'tool'",
            f"{where}.role",
        )
    if role not in ROLES:
        raise _refuse(
            "invalid_messages", f"{where}.role must be one of {', '.join(ROLES)}", f"{where}.role"
        )
    read: dict[str, Any] = {"role": role}
    for key, value in message.items():
        if key in ("role", "content"):
            continue
        if key in ROLE_KEYS.get(role, ()) and value not in (None, []):
            read[key] = value
            continue
        if key not in EMPTY_MESSAGE_KEYS:
            raise _refuse("unknown_parameter", f"{where}.{key} is not a message field", where)
        if value not in (None, []):
            raise _refuse(
                "unsupported_parameter",
                f"{where}.{key} is not supported by a mind's turn; leave it out",
                f"{where}.{key}",
            )
    content = message.get("content")
    if "tool_calls" in read and content in (None, ""):
        read["content"] = None  # an assistant that only called tools
    elif role == "tool" and content == "":
        read["content"] = ""  # a tool may answer nothing
    else:
        read["content"] = _text(content, where)
    return read


def _messages(messages: Any, request: ChatRequest) -> None:
    if not isinstance(messages, list) or not messages:
        raise _refuse("invalid_messages", "messages must be a non-empty array", "messages")
    read = [_message(n, m) for n, m in enumerate(messages)]
    last = len(read) - 1
    # Tool results that end the conversation are the turn's message.
    first_result = last + 1
    while first_result > 0 and read[first_result - 1]["role"] == "tool":
        first_result -= 1
    if first_result <= last:
        request.tool_results = [
            {"tool_call_id": m.get("tool_call_id"), "content": m["content"]}
            for m in read[first_result:]
        ]
        request.results_at = list(range(first_result, last + 1))
        _earlier(read[:first_result], request)
        return
    if read[last]["role"] != "user":
        code = "invalid_messages"
        if not any(m["role"] == "user" for m in read):
            raise _refuse(code, "messages hold no user message", "messages")
        raise _refuse(
            code, f"messages[{last}]: the last message must be the user's or a tool's", "messages"
        )
    if not read[last]["content"].strip():
        where = f"messages[{last}].content"
        raise _refuse("invalid_messages", f"{where} is empty; give some text", where)
    _earlier(read[:last], request)
    request.text, request.text_at = read[last]["content"], last
    request.name = read[last].get("name")


def _earlier(read: list[dict[str, Any]], request: ChatRequest) -> None:
    """The messages before the turn's own: system prompts, and the conversation."""
    systems = []
    for n, message in enumerate(read):
        if message["role"] in ("system", "developer"):
            systems.append(message["content"])
            request.system_at = n if request.system_at is None else request.system_at
        else:
            request.history.append(message)
            request.history_at.append(n)
    if systems:
        request.system = "\n\n".join(systems)


def _sampling(body: dict[str, Any], request: ChatRequest) -> None:
    for name, setting in SAMPLING.items():
        value = body.get(name)
        if value is None:
            continue
        earlier = request.sampling_from.get(setting)
        if earlier is not None and request.sampling[setting] != value:
            raise _refuse(
                "invalid_request",
                f"{earlier} and {name} say different things; give one of them",
                name,
            )
        request.sampling[setting] = value
        request.sampling_from[setting] = name


def _options(given: Any) -> dict[str, Any]:
    """`mind_options` checked: the turn's model choice, as the floor's turn takes it."""
    if given is None:
        return {}
    if not isinstance(given, dict):
        raise _refuse("invalid_mind_options", "mind_options must be an object", "mind_options")
    options: dict[str, Any] = {}
    for key, value in given.items():
        kind = MIND_OPTIONS.get(key)
        where = f"mind_options.{key}"
        if kind is None:
            allowed = ", ".join(MIND_OPTIONS)
            raise _refuse("invalid_mind_options", f"unknown {where} ({allowed})", where)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise _refuse("invalid_mind_options", f"{where} must be a {kind.__name__}", where)
        options[key] = value
    return options


def _stream(body: dict[str, Any], request: ChatRequest) -> None:
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
    if not isinstance(options, dict) or not set(options) <= {"include_usage"}:
        raise _refuse(
            "unsupported_parameter", "stream_options takes only include_usage", "stream_options"
        )
    usage = options.get("include_usage", False)
    if not isinstance(usage, bool):
        raise _refuse(
            "invalid_request",
            "stream_options.include_usage must be true or false",
            "stream_options.include_usage",
        )
    request.include_usage = usage


def chat_request(body: Any) -> ChatRequest:
    """A chat completion request's body read as a turn (ApiError 400 naming the field at
    fault: an unknown field, one a turn cannot honour, a malformed message)."""
    if not isinstance(body, dict):
        raise ApiError(400, "bad_request", "the body must be a JSON object")
    for name in body:
        if name not in KNOWN:
            raise _refuse(
                "unknown_parameter",
                f"unknown field {name[:80]!r}: not a chat completion field this server takes "
                "(a mind's own options go in mind_options)",
                name[:80],
            )
    model = body.get("model")
    if not isinstance(model, str) or not model.startswith(PREFIX):
        raise ApiError(
            400, "model_not_found", f"model must be {PREFIX}<name> (GET /v1/models)", "model"
        )
    for name in NEUTRAL:
        _neutral(name, body.get(name))
    request_tooling = {name: body[name] for name in TOOLING if body.get(name) is not None}
    request = ChatRequest(model=model, text="", tooling=request_tooling)
    _messages(body.get("messages"), request)
    _sampling(body, request)
    request.options = _options(body.get("mind_options"))
    _stream(body, request)
    return request
