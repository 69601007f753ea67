"""`mind doctor`: the optional parts this installation has, and whether the home is sound."""

from __future__ import annotations

from typing import Any

import click

from mindledger.cli.output import echo, emit_json
from mindledger.compose import Home

MARKS = {"ok": "ok", "behind": "note", "fail": "FAIL", "skipped": "--"}


@click.command()
@click.option(
    "--fix",
    is_flag=True,
    help="Make the home's files private (0600, folders 0700) and remove a stale server.json; "
    "nothing else is changed.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def doctor(home: Home, fix: bool, as_json: bool) -> None:
    """Check the home (its ledger verifies, the read model is current, the keys are there, no
    stale server record, its files private) and list every optional part: present or not,
    its version, what it enables and how to add it.

    Exits 1 when a home check fails (one line each says which). Works on a home too broken to
    open otherwise.

    Example:

        mind doctor

        mind doctor --fix --json
    """
    from mindledger import check_home

    report = check_home(home, fix=fix).model_dump(mode="json")
    if as_json:
        emit_json(report)
    else:
        _print(report)
    if not report["ok"]:
        raise click.exceptions.Exit(1)


def _print(report: dict[str, Any]) -> None:
    echo(f"home {report['home']}")
    for check in report["checks"]:
        hint = f"; {check['fix']}" if check["fix"] and check["status"] != "ok" else ""
        echo(f"  {MARKS[check['status']]:<4} {check['name']}: {check['detail']}{hint}")
    for line in report["fixed"]:
        echo(f"  fixed {line}")
    echo("optional parts")
    for part in report["parts"]:
        if part["present"]:
            echo(f"  yes  {part['name']} {part['version'] or ''}: {part['enables']}")
        else:
            echo(f"  no   {part['name']}: {part['enables']}; add it: {part['install']}")


def register(group: click.Group) -> None:
    """Add this command to the `mind` group."""
    group.add_command(doctor)
