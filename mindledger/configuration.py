"""The settings as `mind config` shows and changes them: every process setting with its value
and where it came from (mindledger/settings.py), then this mind's own (recorded in its ledger,
so a change replays like any other); the workspace folder checked before it is recorded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mindledger.compose import Home, open_mind
from mindledger.domain.errors import InvalidInputError
from mindledger.domain.settings import WORKSPACE, check_setting, defaults, meaning


def config_rows(home: Home) -> list[dict[str, Any]]:
    """What `mind config show --json` prints: the process settings, then the mind's."""
    return process_rows(home) + mind_rows(home)


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
    current: dict[str, Any] = {}
    if home.exists():
        app = open_mind(home)
        try:
            current = app.identity().config
        finally:
            app.close()
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


def configure(home: Home, key: str, value: str) -> dict[str, Any]:
    """Set this mind's `key` to `value` (recorded; the workspace made an absolute folder
    first); what `mind config set --json` prints."""
    if key == WORKSPACE:
        check_setting(key, value)  # an empty path would resolve to the current folder
        value = str(workspace_folder(value, home.path))
    app = open_mind(home)
    try:
        changed = app.configure(key, value)
    finally:
        app.close()
    return {"key": key, "value": value, "changed": changed}


# The kernel's and devices' folders: never a workspace (nor, with the root, a parent of one).
SYSTEM_FOLDERS = (Path("/proc"), Path("/sys"), Path("/dev"))


def workspace_folder(value: str, mind_home: Path | None = None) -> Path:
    """`value` as an absolute folder, or InvalidInputError saying why it cannot be one: not the
    root or a system folder, not the user's home folder or one above it (every file the user
    has would count as work), and not a folder holding `mind_home` (the mind's own writes
    would count as its work)."""
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
    user_home = _user_home()
    if user_home is not None and user_home.is_relative_to(folder):
        raise InvalidInputError(
            f"the workspace cannot be {folder}: it holds your whole home folder, so every file "
            "you have would count as evidence of work; give the folder you work in, e.g. ~/notes"
        )
    if mind_home is not None and mind_home.resolve().is_relative_to(folder):
        raise InvalidInputError(
            f"the workspace cannot be {folder}: it holds this mind's own files, whose every "
            "write would count as evidence of work; give the folder you work in, e.g. ~/notes"
        )
    return folder


def _user_home() -> Path | None:
    try:
        return Path.home().resolve()
    except (OSError, RuntimeError):  # no HOME and no password entry: nothing to compare
        return None
