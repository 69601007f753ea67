"""Warnings inside a request (`notices.heard`) are kept for its answer as well as given: a
warning given once per process is heard once by every request, and given to the process's
own sink (a server's log) once."""

from __future__ import annotations

import threading
from contextvars import copy_context

import pytest

from mindledger import notices
from mindledger.cli.server_client import WARNINGS_HEADER, tell_warnings
from mindledger.domain.errors import CAUSE_CHARS, cause_line
from mindledger.service.endpoints import WARNINGS_HEADER as SENT_HEADER


@pytest.fixture
def given(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What the process's sink is given (its once-per-process memory fresh)."""
    lines: list[str] = []
    monkeypatch.setattr(notices, "_once", set())
    token = notices.notice_sink.set(lines.append)
    yield lines
    notices.notice_sink.reset(token)


def test_each_request_hears_a_once_per_process_warning_and_the_log_has_it_once(
    given: list[str],
) -> None:
    with notices.heard() as first:
        notices.warn_once("part", "the part is missing")
        notices.warn_once("part", "the part is missing")
    with notices.heard() as second:
        # Heard in a thread given the request's context, as the server's turn workers are.
        worker = threading.Thread(
            target=copy_context().run, args=(notices.warn_once, "part", "the part is missing")
        )
        worker.start()
        worker.join()
        notices.warn("the home is shared")
    notices.warn_once("part", "the part is missing")  # outside any request

    assert first == ["Warning: the part is missing"]
    assert second == ["Warning: the part is missing", "Warning: the home is shared"]
    assert given == ["Warning: the part is missing", "Warning: the home is shared"]


def test_the_client_prints_each_warning_the_server_sent_once(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from mindledger.cli import server_client

    monkeypatch.setattr(server_client, "_told", set())
    sent = '["Warning: the part is missing", "Warning: a \\u001b[31mred\\u001b[0m line"]'

    tell_warnings({WARNINGS_HEADER: sent})
    tell_warnings({WARNINGS_HEADER: sent})  # a second call of the same command
    tell_warnings({WARNINGS_HEADER: "not json"})

    assert capsys.readouterr().err.splitlines() == [
        "Warning: the part is missing",
        "Warning: a \\x1b[31mred\\x1b[0m line",
    ]
    assert SENT_HEADER.lower() == WARNINGS_HEADER


@pytest.mark.parametrize(
    "sent",
    [
        "[" * 100_000 + "]" * 100_000,  # deeper than the JSON parser's recursion
        '{"Warning": "not a list"}',
        '[1, null, ["nested"]]',
        "\udcff",
    ],
)
def test_a_warnings_header_that_is_no_list_of_lines_prints_nothing(
    sent: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from mindledger.cli import server_client

    monkeypatch.setattr(server_client, "_told", set())

    tell_warnings({WARNINGS_HEADER: sent})

    assert capsys.readouterr().err == ""


def test_a_warning_that_quotes_a_secret_gives_it_to_nobody(
    given: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # What a broken package's import error, or a provider's, may repeat from the environment.
    monkeypatch.setenv("EXAMPLE_API_KEY", "plain-value-4471-boiler")

    with notices.heard() as heard:
        notices.warn("the copy failed (ValueError: plain-value-4471-boiler)")
        notices.warn_once("key", "the part failed (bad key sk-proj-0123456789abcdefXYZ)")

    assert (
        given
        == heard
        == [
            "Warning: the copy failed (ValueError: [redacted])",
            "Warning: the part failed (bad key [redacted])",
        ]
    )


def test_a_warning_that_quotes_several_lines_is_printed_on_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # What a dependency's multi-line error (a traceback in its text) gives the vector thread.
    notices.warn("the vector projection failed (Error: first\nTraceback (most recent call last):)")

    assert capsys.readouterr().err == (
        "Warning: the vector projection failed (Error: first\\nTraceback (most recent call "
        "last):)\n"
    )


@pytest.mark.parametrize(
    ("error", "named", "quoted"),
    [
        (OSError("no such file"), True, "OSError: no such file"),
        (RuntimeError("\n  first\nsecond"), True, "RuntimeError: first"),
        (RuntimeError(""), True, "RuntimeError"),
        (ValueError("x" * 500), False, "x" * CAUSE_CHARS + "..."),
    ],
)
def test_a_cause_a_warning_quotes_is_its_first_line_capped(
    error: Exception, named: bool, quoted: str
) -> None:
    assert cause_line(error, named=named) == quoted
