"""The answer bench's scoring: SQuAD-style token F1, "contains the answer", loop detection."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench.answer_scoring import contains_answer, normalise, repeats_itself, token_f1


@pytest.mark.parametrize(
    ("reply", "gold", "f1"),
    [
        ("The budget report.", "budget report", 1.0),
        ("She sent the budget report on Friday", "the budget report", 0.5),  # 2 of 6 words
        ("Paris", "London", 0.0),
        ("", "Ada", 0.0),
        ("7 May 2023", "7 May, 2023", 1.0),
    ],
)
def test_token_f1_follows_squad_normalisation(reply: str, gold: str, f1: float) -> None:
    assert token_f1(reply, gold) == pytest.approx(f1)


def test_normalisation_drops_case_punctuation_and_articles() -> None:
    assert normalise("The  Cat's, an Apple!") == "cats apple"


@pytest.mark.parametrize(
    ("reply", "gold", "found"),
    [
        ("Your sister is called Ada.", "Ada", True),
        ("Your sister is called Adam.", "Ada", False),  # whole words only
        ("It is on 14 March.", "14 March", True),
        ("Anything", "", False),
    ],
)
def test_contains_answer_matches_whole_normalised_words(reply: str, gold: str, found: bool) -> None:
    assert contains_answer(reply, gold) is found


@pytest.mark.parametrize(
    ("text", "loops"),
    [
        ("You promised to send the weekly report on Friday.", False),
        ("I am here to help you. " * 3, True),
        ("- Send the report to the team\n- Call Ada\n- Send the report to the team", True),
        ("1. Wake up early\n2. Drink water\n3. Plan the day", False),
    ],
)
def test_a_reply_that_says_the_same_thing_again_repeats_itself(text: str, loops: bool) -> None:
    assert repeats_itself(text) is loops


@given(st.text(max_size=200), st.text(max_size=50))
def test_f1_is_between_0_and_1_and_an_answer_scores_1_against_itself(reply: str, gold: str) -> None:
    assert 0.0 <= token_f1(reply, gold) <= 1.0
    assert token_f1(gold, gold) == 1.0
