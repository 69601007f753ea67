"""The fast path: `mind turn` and `mind recall` sent to the home's running server.

Decided from the arguments and the environment alone, before the command tree (click commands,
pydantic, DuckDB, eventsourcing, LiteLLM) is imported. A call goes to the server only when its
arguments are ones the in-process command would accept as they are and a server may take it
(`cli.server_client.find_server`); it then prints what the in-process command would print, with
the same functions (`cli.render`). Anything else (another command, `--help`, an unusual or
invalid argument, `--as-of`, no usable server, a server that refuses) returns None and the
command runs in-process as it always did, which also prints any error in its own words. With
no server at all, one is started in the background for the calls after this one.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from mindledger.cli.standard_input import decoded
from mindledger.domain.budgets import DEFAULT_BUDGET, RECALL_BUDGET_FLOOR, TURN_BUDGET_FLOOR

# option -> takes a value; options of `turn` and `recall` the fast path understands.
TURN_OPTIONS = {
    "--model": True,
    "--mock-reply": True,
    "--api-base": True,
    "--budget": True,
    "--system": True,
    "--temperature": True,
    "--top-p": True,
    "--max-tokens": True,
    "--seed": True,
    "--stop": True,
}
REPEATABLE = {"--stop"}  # given more than once, each value counts (click's `multiple`)
# option -> (the turn's sampling setting, its kind of number): the floor checks the ranges.
SAMPLING = {
    "--temperature": ("temperature", float),
    "--top-p": ("top_p", float),
    "--max-tokens": ("max_tokens", int),
    "--seed": ("seed", int),
}
RECALL_OPTIONS = {"--budget": True}
COMMON_OPTIONS = {"--json": False, "--no-server": False, "--home": True}
MIN_BUDGET = {"turn": TURN_BUDGET_FLOOR, "recall": RECALL_BUDGET_FLOOR}  # the one rule


class Call:
    """A `turn` or `recall` call as the arguments give it (a plain class: `dataclasses` costs
    an import the fast path does not need)."""

    def __init__(
        self,
        command: str,
        argument: str,
        options: dict[str, str] | None = None,
        flags: set[str] | None = None,
        home: str | None = None,
        many: dict[str, list[str]] | None = None,
    ) -> None:
        self.command, self.argument, self.home = command, argument, home
        self.options = {} if options is None else options
        self.flags = set() if flags is None else flags
        self.many = {} if many is None else many  # the values of each REPEATABLE option

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Call) and vars(self) == vars(other)

    def __repr__(self) -> str:
        return f"Call({vars(self)!r})"


def parse(argv: list[str]) -> Call | None:
    """The call, when argv is `[--home H] turn|recall ARG [OPTIONS]` written plainly; None for
    anything else (click then parses it, and reports what is wrong)."""
    home, rest = None, list(argv)
    while rest and (rest[0] == "--home" or rest[0].startswith("--home=")):
        value, rest = _value(rest)
        if value is None:
            return None
        home = value
    if not rest or rest[0] not in ("turn", "recall"):
        return None
    command, rest = rest[0], rest[1:]
    known = {**(TURN_OPTIONS if command == "turn" else RECALL_OPTIONS), **COMMON_OPTIONS}
    call, positional = Call(command, "", home=home), []
    while rest:
        token = rest[0]
        name = token.split("=", 1)[0]
        if token == "-" or not token.startswith("-"):
            positional.append(token)
            rest = rest[1:]
        elif name not in known:
            return None  # --help, --as-of, --, a typo: click's business
        elif known[name]:
            value, rest = _value(rest)
            if value is None:
                return None
            if name == "--home":
                call.home = value
            elif name in REPEATABLE:
                call.many.setdefault(name, []).append(value)
            else:
                call.options[name] = value
        elif "=" in token:
            return None
        else:
            call.flags.add(name)
            rest = rest[1:]
    if len(positional) != 1 or any(_undecodable(a) for a in argv):
        return None
    call.argument = positional[0]
    return call


def _value(rest: list[str]) -> tuple[str | None, list[str]]:
    """The value of the option at rest[0] (`--opt=V` or `--opt V`) and what follows."""
    if "=" in rest[0]:
        return rest[0].split("=", 1)[1], rest[1:]
    if len(rest) < 2:
        return None, rest
    return rest[1], rest[2:]


def _undecodable(argument: str) -> bool:
    return any("\udc80" <= ch <= "\udcff" for ch in argument)


def home_path(call: Call, environ: Mapping[str, str]) -> Path:
    """The home the in-process command would use (`cli.compose.default_home`), absolute."""
    if call.home is not None:
        path = Path(call.home)
    elif environ.get("MIND_HOME"):
        path = Path(environ["MIND_HOME"]).expanduser()
    else:
        data = environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
        path = Path(data) / "mindledger"
    return path.absolute()


def _budget(call: Call) -> int | None:
    raw = call.options.get("--budget")
    if raw is None:
        return DEFAULT_BUDGET
    try:
        budget = int(raw)
    except ValueError:
        return None
    return budget if budget >= MIN_BUDGET[call.command] else None


def turn_body(call: Call) -> dict[str, Any] | None:
    """The request body of a turn, with `--mock-reply @FILE` read here (a relative path means
    this process's directory); None when the in-process command would refuse the arguments."""
    spec, mock = call.options.get("--model"), call.options.get("--mock-reply")
    budget = _budget(call)
    if budget is None or (spec == "mock" and mock is None):
        return None
    if mock is not None and spec not in (None, "mock"):
        return None
    if mock is not None and mock.startswith("@"):
        try:
            mock = Path(mock[1:]).read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None
    if not call.argument.strip():
        return None  # the in-process command refuses it; the API would run an autonomy cycle
    body: dict[str, Any] = {"text": call.argument, "budget": budget}
    for option, key in (("--model", "model"), ("--api-base", "api_base")):
        if option in call.options:
            body[key] = call.options[option]
    if mock is not None:
        body["mock_reply"] = mock
    if "--system" in call.options:
        body["system"] = call.options["--system"]
    sampling = _sampling(call)
    if sampling is None:
        return None
    if sampling:
        body["sampling"] = sampling
    return body


def _sampling(call: Call) -> dict[str, Any] | None:
    """The turn's sampling settings as click converts them (None when one is not a finite
    number: click or the floor refuses it in-process, in its own words)."""
    sampling: dict[str, Any] = {}
    for option, (name, kind) in SAMPLING.items():
        raw = call.options.get(option)
        if raw is None:
            continue
        try:
            value = kind(raw)
        except ValueError:
            return None
        if value != value or value in (float("inf"), float("-inf")):
            return None  # no JSON number: the in-process command refuses it
        sampling[name] = value
    if call.many.get("--stop"):
        sampling["stop"] = call.many["--stop"]
    return sampling


def _read_stdin() -> str | None:
    """`mind turn -`: stdin, decoded as the in-process command would decode it, and put back
    for it in case the call runs here after all (None when it cannot be decoded: the
    in-process command then fails on it in its own words)."""
    stdin = sys.stdin
    if not hasattr(stdin, "buffer"):
        return None
    raw = stdin.buffer.read()

    sys.stdin = io.TextIOWrapper(io.BytesIO(raw), encoding=stdin.encoding, errors=stdin.errors)
    try:
        return decoded(raw, stdin.encoding)
    except (UnicodeDecodeError, LookupError):
        return None


def run_via_server(argv: list[str], environ: Mapping[str, str] | None = None) -> int | None:
    """Run the call on the home's server and return its exit status; None to run it here."""
    env = os.environ if environ is None else environ
    call = parse(argv)
    if call is None or "--no-server" in call.flags:
        return None  # before the client is imported: most commands never need it
    from mindledger.cli import server_client as sc

    if sc.no_server(env):
        return None
    home = home_path(call, env)
    server = sc.find_server(home, env)
    if server is None:
        sc.start_server(home, env)  # for the next call; this one runs here, now
        return None
    from mindledger.cli.output import OutputFailedError

    try:
        if call.command == "recall":
            return _recall(server, call)
        return _turn(server, call)
    except sc.ServerUnavailable:
        return None
    except OutputFailedError as e:  # stdout failed; a turn says it was recorded all the same
        e.show()
        return e.exit_code
    except sc.ServerRefused as e:
        from mindledger.cli.output import error_text

        print(f"Error: {error_text(str(e), None)}", file=sys.stderr)
        return 1
    except sc.ServerLost as e:
        from mindledger.cli.output import error_text

        detail = "whether it was recorded is unknown, so it was not run again; see `mind log`"
        message = f"{e}; {detail}" if call.command == "turn" else str(e)
        print(f"Error: {error_text(message, None)}", file=sys.stderr)
        return 1


def _recall(server: Any, call: Call) -> int | None:
    from mindledger.cli.render import echo_recall

    budget = _budget(call)
    if budget is None:
        return None
    from mindledger.cli.server_client import ServerLost, ServerUnavailable

    query = urlencode({"q": call.argument, "budget": budget})
    try:
        data = server.call_mind("GET", f"recall?{query}")
    except ServerLost:
        raise ServerUnavailable("a recall changes nothing: run it here") from None
    if not (isinstance(data, dict) and {"items", "tokens", "dropped"} <= data.keys()):
        raise ServerUnavailable("the server's answer is not a recall: run it here")
    echo_recall(data, "--json" in call.flags)
    return 0


def _turn(server: Any, call: Call) -> int | None:
    from mindledger.cli.render import echo_turn

    if call.argument == "-":
        text = _read_stdin()
        if text is None:
            return None
        call.argument = text
    body = turn_body(call)
    if body is None:
        return None
    data = server.call_mind("POST", "turns", body)
    if not (isinstance(data, dict) and {"status", "reply", "failure", "events"} <= data.keys()):
        from mindledger.cli.server_client import ServerLost

        raise ServerLost("the server's answer is not a turn")  # it took the turn: not re-run
    return echo_turn(data, "--json" in call.flags)
