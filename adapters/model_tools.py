"""A caller's tools through LiteLLM: which providers take them, and the tool calls of a reply
(whole or streamed in pieces) in OpenAI's shape."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mindledger.domain.tool_use import MAX_CALLS

if TYPE_CHECKING:
    from mindledger.domain.tool_use import ToolRequest


def check_tooling(spec: str, request: ToolRequest) -> None:
    """Raise UnsupportedParameterError naming the model and the first of a caller's tool
    parameters that LiteLLM does not pass to `spec`'s provider (it refuses them at the call
    otherwise, or drops them with `drop_params`). Imports litellm."""
    from mindledger.adapters.litellm_model import import_litellm
    from mindledger.domain.errors import UnsupportedParameterError

    litellm = import_litellm()
    try:
        model, provider, _, _ = litellm.get_llm_provider(model=spec)
        supported = set(
            litellm.get_supported_openai_params(model=model, custom_llm_provider=provider) or ()
        )
    except Exception:  # LiteLLM cannot tell: the call itself will say what fails
        return
    for name in request.chosen():
        if name not in supported:
            raise UnsupportedParameterError(
                f"model {spec} does not take `{name}` (LiteLLM does not pass it to that "
                "provider); leave it out or choose a model that does",
                param=name,
            )


def tool_calls_of(calls: Any) -> tuple[dict[str, Any], ...]:
    """A reply's tool calls (LiteLLM's objects or dicts) in OpenAI's shape, checked."""
    found = []
    for call in calls or ():
        data = call if isinstance(call, dict) else call.model_dump()
        function = data.get("function") or {}
        name, arguments = function.get("name"), function.get("arguments")
        if not isinstance(name, str) or not name or not isinstance(arguments, str | None):
            raise ValueError("a tool call without a function name and arguments")
        found.append(
            {
                "id": str(data.get("id") or ""),
                "type": "function",
                "function": {"name": name, "arguments": arguments or ""},
            }
        )
    if len(found) > MAX_CALLS:
        raise ValueError(f"{len(found)} tool calls in one reply (at most {MAX_CALLS})")
    return tuple(found)


def add_piece(calls: dict[int, dict[str, Any]], piece: Any) -> None:
    """One streamed piece of a tool call added to the call at its index (the first piece
    names it; the others carry more of its arguments)."""
    data = piece if isinstance(piece, dict) else piece.model_dump()
    call = calls.setdefault(int(data.get("index") or 0), {"id": "", "function": {}})
    function = data.get("function") or {}
    call["id"] = call["id"] or data.get("id") or ""
    if function.get("name"):
        call["function"]["name"] = function["name"]
    arguments = call["function"].get("arguments", "") + (function.get("arguments") or "")
    call["function"]["arguments"] = arguments
