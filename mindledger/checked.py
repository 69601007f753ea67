"""Every argument a program gives the floor is checked against the method's annotations before
anything is read or written (pydantic's `validate_call`, strict: a number is not a text, a
bool is not a budget), and text must be encodable (no lone surrogate). A wrong argument is one
`InvalidInputError` line naming the method and the argument, never a TypeError from deep inside
and never a changed ledger."""

from __future__ import annotations

import functools
import types
from collections.abc import Callable
from typing import Any, TypeVar

from mindledger.domain.errors import InvalidInputError

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


def _refusal(method: str, names: list[str], error: Any) -> InvalidInputError:
    """The first problem of a pydantic ValidationError as one line, the argument named (also
    as the error's `param`, as every other refusal of the floor names its argument)."""
    first = error.errors()[0]
    loc = first.get("loc", ())
    where = names[loc[0]] if loc and isinstance(loc[0], int) and loc[0] < len(names) else ""
    where = where or (str(loc[0]) if loc else "")
    given = first.get("input")
    shown = type(given).__name__ if not isinstance(given, str | int | float) else repr(given)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return InvalidInputError(
        f"{method}: {where or 'an argument'}: {first.get('msg', 'is not valid')} (got {shown})",
        param=where or None,
    )


def _refuse_unencodable(name: str, value: Any) -> None:
    """A text argument that cannot be written as UTF-8, refused naming the argument in the
    floor's request words (a CLI flag, an HTTP body's field), as the floor's other refusals."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as e:
            raise InvalidInputError(
                f"`{name}` holds a lone surrogate at {e.start} (not valid Unicode); "
                "give valid UTF-8 text",
                param=name,
            ) from None


def _arguments_only(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A twin of `fn` without its return annotation: only the arguments are checked, and the
    result types stay unimported until a use case returns one (the floor names them for type
    checkers only: importing every result model cost each command ~40 ms of CPU)."""
    twin = types.FunctionType(
        fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__
    )
    twin.__kwdefaults__ = fn.__kwdefaults__
    twin.__module__, twin.__qualname__, twin.__doc__ = fn.__module__, fn.__qualname__, fn.__doc__
    twin.__annotations__ = {k: v for k, v in fn.__annotations__.items() if k != "return"}
    return twin


def checked(fn: F) -> F:
    """`fn` with its arguments checked first (see the module). The checker is built on the
    method's first call: building one for each of the floor's methods up front cost a command
    more than its own work (a process calls one or two)."""
    name = fn.__name__
    positional = fn.__code__.co_varnames[: fn.__code__.co_argcount]

    @functools.cache
    def checker() -> tuple[Callable[..., Any], list[str]]:
        import inspect

        from pydantic import ConfigDict, validate_call

        config = ConfigDict(strict=True, arbitrary_types_allowed=True)
        return validate_call(config=config)(_arguments_only(fn)), list(
            inspect.signature(fn).parameters
        )

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        from pydantic import ValidationError

        for argument, value in (*zip(positional, args, strict=False), *kwargs.items()):
            _refuse_unencodable(argument, value)
        validated, names = checker()
        try:
            return validated(*args, **kwargs)
        except ValidationError as e:
            raise _refusal(name, names, e) from None

    return call  # type: ignore[return-value]


def checked_methods(cls: type[T]) -> type[T]:
    """Check the arguments of every public method `cls` defines itself."""
    for name, member in list(vars(cls).items()):
        if not name.startswith("_") and callable(member) and not isinstance(member, type):
            setattr(cls, name, checked(member))
    return cls
