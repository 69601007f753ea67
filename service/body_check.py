"""A request body checked against its route's model (`service.bodies`): the first problem
found is a 400 in the one error shape, `param` the request field at fault as a path
(`sampling.temperature`, `about[2]`) and a message naming it the same way, never a CLI flag."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from mindledger.service.errors import ApiError

_KINDS = {
    "string_type": "string",
    "int_type": "integer",
    "int_from_float": "integer",
    "float_type": "number",
    "bool_type": "boolean",
    "list_type": "array",
    "dict_type": "object",
    "model_type": "object",
    "model_attributes_type": "object",
}
# The checks a refusal reports first: a field the route does not take, then one it needs.
_FIRST = {"extra_forbidden": 0, "missing": 1}


def check_body(data: Any, model: type[BaseModel]) -> dict[str, Any]:
    """`data` validated by `model`, as a dict without the fields left out or null."""
    if not isinstance(data, dict):
        raise ApiError(400, "bad_request", "the body must be a JSON object")
    try:
        parsed = model.model_validate(data)
    except ValidationError as e:
        errors = sorted(e.errors(include_url=False), key=lambda d: _FIRST.get(d["type"], 2))
        raise refusal(errors[0], model) from None
    return parsed.model_dump(exclude_none=True)


def field_path(loc: tuple[int | str, ...]) -> str:
    """A location as the request names it: `sampling.stop[1]`."""
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else part)
    return path


def refusal(error: ErrorDetails, model: type[BaseModel]) -> ApiError:
    """One validation error as the 400 a client is answered with."""
    path = field_path(error["loc"])
    kind, ctx, given = error["type"], error.get("ctx") or {}, error.get("input")
    if kind == "extra_forbidden":
        allowed = ", ".join(_fields_at(model, error["loc"][:-1])) or "none"
        message = f"unknown field {path[:80]!r} (allowed: {allowed})"
        return ApiError(400, "unknown_parameter", message, path[:80])
    if kind == "missing":
        message = f"field {path!r} is required"
    elif kind == "float_type" and _is_int(given):  # an integer too large for a float
        message = f"{path!r} is {shown(given)}; it is out of range"
    elif kind in _KINDS:
        message = f"field {path!r} must be a JSON {_KINDS[kind]}"
    elif kind in ("greater_than_equal", "greater_than"):
        bound = ctx.get("ge", ctx.get("gt"))
        word = "at least" if kind == "greater_than_equal" else "more than"
        message = f"{path!r} is {shown(given)}; it must be {word} {shown(bound)}"
    elif kind in ("less_than_equal", "less_than"):
        bound = ctx.get("le", ctx.get("lt"))
        word = "at most" if kind == "less_than_equal" else "less than"
        message = f"{path!r} is {shown(given)}; it must be {word} {shown(bound)}"
    elif kind == "string_too_short" and ctx.get("min_length") == 1:
        message = f"{path!r} must not be empty"
    elif kind in ("string_too_short", "string_too_long", "too_short", "too_long"):
        unit = "characters" if kind.startswith("string") else "items"
        if kind.endswith("short"):
            message = f"{path!r} must have at least {ctx.get('min_length')} {unit}"
        else:
            message = f"{path!r} must have at most {ctx.get('max_length')} {unit}"
    elif kind == "literal_error":
        message = f"{path!r} must be one of {ctx.get('expected')}"
    elif kind == "finite_number":
        message = f"{path!r} must be a finite number"
    else:
        message = f"{path!r}: {error['msg'][:1].lower()}{error['msg'][1:]}"
    return ApiError(400, "bad_request", message, path)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def shown(value: Any) -> str:
    """A number as a message shows it (`5`, `0.5`, or the size of one too long to print)."""
    from mindledger.domain.budgets import shown_number

    return shown_number(value) if isinstance(value, int | float) else "that"


def _fields_at(model: type[BaseModel], loc: tuple[int | str, ...]) -> list[str]:
    """The fields of the model at `loc` inside `model` (a nested model's, such as sampling's)."""
    current: Any = model
    for part in loc:
        field = current.model_fields.get(part) if isinstance(part, str) else None
        if field is None:
            return []
        nested = [
            t for t in (field.annotation, *getattr(field.annotation, "__args__", ())) if _model(t)
        ]
        if not nested:
            return []
        current = nested[0]
    return list(current.model_fields)


def _model(t: Any) -> bool:
    return isinstance(t, type) and issubclass(t, BaseModel)
