"""`mind config`: per-mind settings, recorded as events (so a change replays like any other)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from mindledger.cli.output import echo, emit_json
from mindledger.compose import Home, open_mind
from mindledger.domain.settings import KEYS, WORKSPACE, check_setting, defaults, meaning


@click.group()
def config() -> None:
    """Show every setting with its source; change this mind's (the tension law, the gate, the
    workspace).

    Example:

        mind config set threads.floor_interval 12
    """


@config.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def show(home: Home, as_json: bool) -> None:
    """Every setting with its value, where the value came from, and what it means.

    Process settings come from a flag, else the environment (MIND_*), else MIND_HOME/.env,
    else config.json, else the default; this mind's settings come from its ledger (`config set`).
    Secrets are masked.

    Example:

        mind config show --json
    """
    rows = process_rows(home) + mind_rows(home)
    if as_json:
        emit_json(rows)
        return
    for row in rows:
        value = "(unset)" if row["value"] is None else row["value"]
        echo(f"{row['key']:<26} {value if value != '' else '(empty)'}  ({row['source']})")
        takes = f" (takes {row['accepts']})" if row["accepts"] else ""
        echo(f"    {row['meaning']}{takes}")


def process_rows(home: Home) -> list[dict[str, Any]]:
    """The process settings (mindledger/settings.py), named by their environment variable."""
    from mindledger.settings import FIELDS, accepts, env_name, shown_value

    loaded = home.loaded
    rows = []
    for name, declared in FIELDS.items():
        origin = loaded.origins[name]
        value = shown_value(name, getattr(loaded.values, name))
        rows.append(
            {
                "key": env_name(name),
                "value": value,
                "default": origin.source == "default",
                "meaning": declared.description,
                "accepts": accepts(name),
                "source": origin.source,
                "origin": origin.describe() if origin.source != "default" else None,
            }
        )
    return rows


def mind_rows(home: Home) -> list[dict[str, Any]]:
    """This mind's settings: from its ledger when set, else their defaults."""
    current = open_mind(home).identity().config if home.exists() else {}
    return [
        {
            "key": key,
            "value": current.get(key, value),
            "default": key not in current,
            "meaning": meaning(key),
            "accepts": None,
            "source": "default" if key not in current else "ledger",
            "origin": None if key not in current else "mind.identity.configured",
        }
        for key, value in defaults().items()
    ]


@config.command(name="set", context_settings={"ignore_unknown_options": True})
@click.argument("key", type=click.Choice(KEYS))
@click.argument("value")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def set_(home: Home, key: str, value: str, as_json: bool) -> None:
    """Set KEY to VALUE (recorded as an event; the old value stays in the history).

    Example:

        mind config set threads.cycle_threshold 3.5

        mind config set workspace ~/notes

    A number is refused unless finite and in its range (`mind config show` lists them); the
    workspace cannot be / or a system folder; a VALUE starting with - needs no `--`.
    """
    if key == WORKSPACE:
        check_setting(key, value)  # an empty path would resolve to the current folder
        value = str(_workspace_folder(value))
    changed = open_mind(home).configure(key, value)
    if as_json:
        emit_json({"key": key, "value": value, "changed": changed})
        return
    echo(f"{key} = {value}" if changed else f"{key} is already {value}")


# The kernel's and devices' folders: never a workspace (nor, with the root, a parent of one).
SYSTEM_FOLDERS = (Path("/proc"), Path("/sys"), Path("/dev"))


def _workspace_folder(value: str) -> Path:
    """`value` as an absolute folder, or InvalidInputError saying why it cannot be one."""
    from mindledger.domain.errors import InvalidInputError

    try:
        folder = Path(value).expanduser().resolve()
        is_file = folder.exists() and not folder.is_dir()
    except (OSError, RuntimeError) as e:  # a name too long, a symlink loop, no such user (~x)
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise InvalidInputError(
            f"the workspace path {value[:80]!r}{'...' if len(value) > 80 else ''} cannot be "
            f"used ({reason}); give a folder path the filesystem accepts"
        ) from None
    if is_file:
        raise InvalidInputError(f"{folder} is a file; the workspace must be a directory")
    if folder == Path(folder.anchor) or any(folder.is_relative_to(p) for p in SYSTEM_FOLDERS):
        raise InvalidInputError(
            f"the workspace cannot be {folder}: any file on the system (or the kernel's) would "
            "count as evidence of work; give the folder you work in, e.g. ~/notes"
        )
    return folder


def register(group: click.Group) -> None:
    """Add these commands to the `mind` group."""
    group.add_command(config)
