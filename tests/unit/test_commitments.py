"""Commitments: CIDs, episodes, no-op reopen, typed rejections that change nothing."""

from __future__ import annotations

import pytest

from mindledger.adapters.memory_ledger import MEMORY_ENV
from mindledger.domain.application import Mind
from mindledger.domain.commitment import Commitment, commitment_cid, legacy_cid
from mindledger.domain.errors import (
    CommitmentAlreadyClosedError,
    InvalidInputError,
    UnknownCommitmentError,
)
from mindledger.domain.text_keys import TextKeys
from tests.conftest import T0


def ledger_size(app: Mind) -> int:
    return app.recorder.max_notification_id() or 0


def test_the_cid_is_derived_from_the_normalised_text(app: Mind) -> None:
    keys = app.text_keys

    assert commitment_cid("Send the report.", keys) == commitment_cid("  send   THE report ", keys)
    assert commitment_cid("Send the report", keys) != commitment_cid("Send the invoice", keys)
    assert commitment_cid("x", keys).startswith("c") and len(commitment_cid("x", keys)) == 11


def test_the_same_promise_has_one_cid_in_a_mind_and_another_in_another_mind(app: Mind) -> None:
    other = Mind(env=dict(MEMORY_ENV))
    other.init("Other", "another-ledger")

    here = app.open_commitment("Water the ficus on Friday").cid
    again = app.open_commitment("water the ficus on friday.").cid
    there = other.open_commitment("Water the ficus on Friday").cid

    assert here == again == commitment_cid("Water the ficus on Friday", app.text_keys)
    assert there != here
    # Keyed: neither is the sha256 CID a guess of the text would confirm.
    assert legacy_cid("Water the ficus on Friday") not in (here, there)


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


class OneHash(TextKeys):
    """Keyed hashes that are all the same: every text gets one CID."""

    def __init__(self) -> None:
        super().__init__(None)

    def keyed(self, purpose: str, text: str) -> str:
        return "0" * 64


def test_two_promises_that_share_a_cid_are_refused_not_merged(app: Mind) -> None:
    app.text_keys = OneHash()
    cid = app.open_commitment("Call the bank").cid
    before = ledger_size(app)

    with pytest.raises(InvalidInputError, match=f"CID {cid} already names a different"):
        app.open_commitment("Feed the cat")

    assert ledger_size(app) == before


def test_a_promise_opened_before_cids_were_keyed_keeps_its_cid(app: Mind) -> None:
    old = legacy_cid("Renew the passport")
    app.record(Commitment.open(old, "Renew the passport", "owner", 1, T0))

    again = app.open_commitment("renew the passport.")
    app.close_commitment(old, "renewed")
    reopened = app.open_commitment("Renew the passport")

    assert (again.cid, again.opened) == (old, False)
    assert (reopened.cid, reopened.episode, reopened.opened) == (old, 2, True)


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
