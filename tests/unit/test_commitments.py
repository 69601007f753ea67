"""Commitments: CIDs, episodes, no-op reopen, typed rejections that change nothing."""

from __future__ import annotations

import pytest

from domain.application import Mind
from domain.commitment import commitment_cid
from domain.errors import CommitmentAlreadyClosedError, InvalidInputError, UnknownCommitmentError


def ledger_size(app: Mind) -> int:
    return app.recorder.max_notification_id() or 0


def test_the_cid_is_derived_from_the_normalised_text() -> None:
    assert commitment_cid("Send the report.") == commitment_cid("  send   THE report ")
    assert commitment_cid("Send the report") != commitment_cid("Send the invoice")
    assert commitment_cid("x").startswith("c") and len(commitment_cid("x")) == 11


def test_opening_a_commitment_records_its_text_and_origin(app: Mind) -> None:
    outcome = app.open_commitment("Send the weekly report", origin="user")

    commitment = app.commitment(outcome.cid)
    assert outcome.opened and outcome.episode == 1
    assert (commitment.text, commitment.origin, commitment.closed) == (
        "Send the weekly report",
        "user",
        False,
    )


def test_opening_the_same_text_while_open_is_a_no_op_that_says_so(app: Mind) -> None:
    first = app.open_commitment("Send the weekly report")
    before = ledger_size(app)

    again = app.open_commitment("send the weekly REPORT.")

    assert (again.cid, again.opened, again.episode) == (first.cid, False, 1)
    assert ledger_size(app) == before


def test_after_closing_the_same_text_opens_a_new_episode(app: Mind) -> None:
    cid = app.open_commitment("Call the bank").cid
    app.close_commitment(cid, "called")

    reopened = app.open_commitment("Call the bank")

    assert (reopened.cid, reopened.episode, reopened.opened) == (cid, 2, True)
    assert app.commitment(cid).closed is False


def test_closing_an_unknown_commitment_is_rejected_and_changes_nothing(app: Mind) -> None:
    before = ledger_size(app)

    with pytest.raises(UnknownCommitmentError, match="c0000000000"):
        app.close_commitment("c0000000000")

    assert ledger_size(app) == before


def test_closing_a_closed_commitment_is_rejected_and_changes_nothing(app: Mind) -> None:
    cid = app.open_commitment("Water the plants").cid
    app.close_commitment(cid, "done", evidence=(3,))
    before = ledger_size(app)

    with pytest.raises(CommitmentAlreadyClosedError):
        app.close_commitment(cid)

    assert ledger_size(app) == before
    assert app.commitment(cid).evidence == [3]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("   \n ", "empty"),
        ("x" * 4001, "limit is 4,000"),
        ("bell\x07", r"control character U\+0007"),
        ("bad \udcff bytes", "not valid UTF-8"),
    ],
)
def test_bad_commitment_text_gets_a_clear_error(app: Mind, text: str, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        app.open_commitment(text)


def test_multiline_unicode_text_is_stored_faithfully(app: Mind) -> None:
    text = "Réviser le chapitre 3 📚\n\tthen send it to Zoë"

    cid = app.open_commitment(text).cid

    assert app.commitment(cid).text == text
