"""`mind [--home DIR] status [--json]` and `mind [--home DIR] commitments [--json]` printed from
the read model's summary (`mindledger.quick_reads`) before click, pydantic or DuckDB is
imported, and `mind recall QUERY [--no-server] [--json]` run without click, pydantic or the
floor's application; None (any other call, or a home that needs the floor) runs the command
tree.

The printing is the commands' own (`print_status`, `print_commitments`): both paths print the
same bytes for the same data (a test compares them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mindledger.cli.output import OutputFailedError, echo, emit_json, table


def run_quick(argv: list[str]) -> int | None:
    """The call's exit status when printed here, else None (nothing printed)."""
    call = _parse(argv)
    if call is None:
        return None
    option, command, query, as_json = call
    from mindledger.quick_reads import quick_commitments, quick_recall, quick_status

    home = _home(option)
    try:
        if command == "recall":
            data: Any = quick_recall(home, query)
        else:
            data = quick_status(home) if command == "status" else quick_commitments(home)
    except Exception:  # the floor's path reads the home again and says what is wrong
        return None
    if data is None:
        return None
    try:
        if command == "status":
            print_status(data, home, as_json)
        elif command == "recall":
            from mindledger.cli.render import echo_recall

            echo_recall(data, as_json)
        else:
            print_commitments(data, as_json)
    except OutputFailedError as e:  # as the command group shows it (a read recorded nothing)
        e.show()
        return e.exit_code
    return 0


def _parse(argv: list[str]) -> tuple[str | None, str, str, bool] | None:
    """(--home's value, the command, recall's QUERY, --json) for exactly the calls printed
    here: `status` and `commitments` with at most --json, `recall QUERY` with at most
    --no-server and --json after it (its default budget, no --as-of)."""
    rest, option = list(argv), None
    if rest and rest[0] == "--home" and len(rest) > 1:
        option, rest = rest[1], rest[2:]
    elif rest and rest[0].startswith("--home="):
        option, rest = rest[0].removeprefix("--home="), rest[1:]
    if option is not None and (option == "" or option.startswith("-")):
        return None  # click's to refuse or read as it does
    if not rest:
        return None
    if rest[0] in ("status", "commitments") and rest[1:] in ([], ["--json"]):
        return option, rest[0], "", rest[1:] == ["--json"]
    if rest[0] == "recall" and len(rest) > 1 and not rest[1].startswith("-"):
        flags = rest[2:]
        if len(set(flags)) == len(flags) and set(flags) <= {"--no-server", "--json"}:
            return option, "recall", rest[1], "--json" in flags
    return None


def _home(option: str | None) -> Path:
    """The home as the command group takes it (`compose.Home.from_option`)."""
    from mindledger.compose import default_home

    return Path(option) if option is not None else default_home()


def print_status(data: dict[str, Any], home: Path, as_json: bool) -> None:
    """`mind status`'s output of `status`'s JSON."""
    if as_json:
        emit_json(data)
        return
    head = data["head"]
    echo(f"{data['name']} ({data['backend']} ledger at {home})")
    echo(f"  model      {data['model']}")
    echo(f"  ledger     {data['ledger_id']} created {data['created_at']}")
    echo(f"  head       position {head['position']}, hash {(head['hash'] or '-')[:16]}")
    for p in data["projections"]:
        echo(f"  projection {p['name']}: position {p['position']}, lag {p['lag']}")


def print_commitments(rows: list[dict[str, Any]], as_json: bool) -> None:
    """`mind commitments`'s output of `commitments`'s JSON."""
    if as_json:
        emit_json(rows)
    else:
        table(rows, ["cid", "status", "origin", "opened_at", "text"], "No commitments.")
