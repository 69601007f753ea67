"""The floor's error messages (mindledger/error_report.py): a cause cut to its first line, the
rest kept in the home's private, bounded errors log under the id the message names; no home,
no log and no id."""

from __future__ import annotations

import re
import stat
from pathlib import Path

import pytest

from mindledger import error_report
from mindledger.domain.errors import UnavailableError
from mindledger.error_report import clean_text, failure_message

CAUSE = (
    "the vectors could not be read\n"
    "Traceback (most recent call last):\n"
    '  File "/opt/venv/lib/python3.11/site-packages/dep/core.py", line 9, in read\n'
    "See https://docs.example-dependency.org/errors#io (key sk-live0123456789abcdef)"
)


def wrapped() -> UnavailableError:
    try:
        raise RuntimeError(CAUSE)
    except RuntimeError as e:
        return UnavailableError(f"recall failed: {e}")


def a_home(tmp_path: Path) -> Path:
    home = tmp_path / "mind"
    home.mkdir()
    (home / "ledger.sqlite").write_bytes(b"")
    return home


def test_a_quoted_cause_is_cut_to_its_first_line_and_kept_whole_in_the_log(
    tmp_path: Path,
) -> None:
    home = a_home(tmp_path)

    message = failure_message(wrapped(), home)

    found = re.fullmatch(
        r"recall failed: the vectors could not be read \(error id ([0-9a-f]{6}); details in "
        + re.escape(str(home / "logs" / "errors.log"))
        + r"\)",
        message,
    )
    assert found is not None, message
    log = home / "logs" / "errors.log"
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    kept = log.read_text()
    assert f"error {found.group(1)}\n" in kept and "docs.example-dependency.org" in kept
    assert "sk-live0123456789abcdef" not in kept


def test_without_a_home_nothing_is_logged_and_no_id_is_named(tmp_path: Path) -> None:
    not_yet = tmp_path / "to-be-made"

    message = failure_message(wrapped(), not_yet)

    assert message == "recall failed: the vectors could not be read"
    assert not not_yet.exists()


def test_our_own_words_alone_log_nothing(tmp_path: Path) -> None:
    home = a_home(tmp_path)

    message = failure_message(UnavailableError("the model server is not running"), home)

    assert message == "the model server is not running"
    assert not (home / "logs").exists()


def test_an_unforeseen_failure_is_named_with_its_first_line(tmp_path: Path) -> None:
    home = a_home(tmp_path)

    message = failure_message(RuntimeError("no vector\nmore"), home)

    assert message.startswith("unexpected failure: no vector (error id ")


def test_the_log_stays_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = a_home(tmp_path)
    monkeypatch.setattr(error_report, "MAX_LOG", 4_000)

    for _ in range(40):
        failure_message(wrapped(), home)

    logs = home / "logs"
    assert sorted(p.name for p in logs.iterdir()) == ["errors.log", "errors.log.1"]
    assert all(p.stat().st_size <= 4_000 for p in logs.iterdir())


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("see https://github.com/BerriAI/litellm/issues/new?x=1 now", "see  now"),
        ("cannot reach http://127.0.0.1:8080/v1", "cannot reach http://127.0.0.1:8080/v1"),
        (
            "a server (pid 7, http://127.0.0.1:8421) serves m",
            "a server (pid 7, http://127.0.0.1:8421) serves m",
        ),
        ("cannot write /tmp/out/export.jsonl", "cannot write /tmp/out/export.jsonl"),
        ("litellm.APIConnectionError: refused", "refused"),
        ("Authorization: Bearer abcdefgh12345678", "Authorization: [redacted]"),
    ],
)
def test_clean_text_keeps_our_words_and_the_users_own_places(text: str, shown: str) -> None:
    assert clean_text(text) == shown
