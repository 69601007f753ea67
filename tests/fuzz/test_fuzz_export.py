"""A ledger export with any byte or line tampered: `mind verify --export` (but for a carried key's
characters, which are not in the chain), `mind verify --export --deep` and `mind import ledger`
refuse it naming the line, never with a traceback, and the import leaves no home behind."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz.harness import invoke

BROKEN = re.compile(r"BROKEN at line (\d+): ")
KEY_TEXT = re.compile(rb'"[0-9a-f]{32}":"[A-Za-z0-9+/]{43}="')  # a carried key in its line
BASE64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
REFUSED = re.compile(r"Error: line (\d+): ")


@pytest.fixture(scope="module")
def export_file(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """An export of a small mind with turns, commitments, concepts and a thread."""
    root = tmp_path_factory.mktemp("export-fuzz")
    home = str(root / "mind")
    reply = "Sure.\nCOMMIT: stretch hourly\nCONCEPT: user.stretch = moving é"
    for args in (
        ["init", "--name", "Echo"],
        ["commit", "Send the report"],
        ["turn", "hi", "--model", "mock", "--mock-reply", reply],
        ["thread", "open", "Launch date", "--content", "Ask about May"],
        ["export", str(root / "out"), "--format", "jsonl"],
    ):
        assert invoke(["--home", home, *args]).exit_code == 0
    return (root / "out" / "ledger.jsonl").read_bytes()


def _check(data: bytes, tampered_line: int, in_a_key: bool = False) -> None:
    """The three refuse `data` at `tampered_line` (a header edit may show at the end); the
    integrity check passes an edit `in_a_key` (a carried key's characters)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ledger.jsonl"
        path.write_bytes(data)
        intact = invoke(["verify", "--export", str(path)])
        checked = invoke(["verify", "--export", str(path), "--deep"])
        imported = invoke(["--home", str(Path(tmp) / "new"), "import", "ledger", str(path)])
        assert None is intact.crash is checked.crash is imported.crash, (
            intact.crash or checked.crash or imported.crash
        )
        assert (intact.exit_code, checked.exit_code) == (int(not in_a_key), 1), checked.stderr
        assert imported.exit_code == 1, imported.stdout
        found = BROKEN.search(checked.stderr)
        refused = REFUSED.search(imported.stderr)
        assert found and refused, (checked.stderr, imported.stderr)
        assert found.group(1) == refused.group(1)
        if tampered_line > 1:
            assert int(found.group(1)) == tampered_line
        if not in_a_key:
            first = BROKEN.search(intact.stderr)
            assert first and (tampered_line == 1 or int(first.group(1)) == tampered_line)
        assert not (Path(tmp) / "new").exists()


def _line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(where=st.floats(0, 1, exclude_max=True), value=st.integers(0, 255))
def test_any_changed_byte_is_refused_at_its_line(
    export_file: bytes, where: float, value: int
) -> None:
    offset = int(where * len(export_file))
    if export_file[offset] == value:
        value = (value + 1) % 256
    data = export_file[:offset] + bytes([value]) + export_file[offset + 1 :]
    keys = [m.span() for m in KEY_TEXT.finditer(export_file)]
    in_a_key = value in BASE64 and any(s < offset < e - 2 and offset != s + 33 for s, e in keys)
    in_a_key = in_a_key and export_file[offset] not in b'":'

    _check(data, _line_of(export_file, offset), in_a_key)


@settings(
    max_examples=20,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    edit=st.sampled_from(["delete", "duplicate", "swap", "cut", "insert"]),
    where=st.floats(0, 1, exclude_max=True),
)
def test_any_changed_line_is_refused_at_its_line(
    export_file: bytes, edit: str, where: float
) -> None:
    lines = export_file.splitlines(keepends=True)
    k = 1 + int(where * (len(lines) - 1))  # 0-based index of an event line, never the header
    if edit == "delete":
        changed, line = lines[:k] + lines[k + 1 :], k + 1
    elif edit == "duplicate":
        changed, line = lines[: k + 1] + lines[k:], k + 2
    elif edit == "swap" and k + 1 < len(lines):
        changed, line = [*lines[:k], lines[k + 1], lines[k], *lines[k + 2 :]], k + 1
    elif edit == "cut":
        changed, line = [*lines[:k], lines[k][: len(lines[k]) // 2]], k + 1
    else:
        changed, line = [*lines[:k], b'{"a":1}\n', *lines[k:]], k + 1

    _check(b"".join(changed), line)
