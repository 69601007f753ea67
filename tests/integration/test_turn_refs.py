"""The one turn-reference rule (mindledger/turn_refs.py) on a real home: `last`, a number
(`12`, `#12`), a full id with or without dashes, a unique prefix of 4+ hex digits; all digits is
a number first, then a prefix; none, several and malformed are each their own one-line error."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from uuid import UUID

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mindledger
from mindledger.compose import Home
from mindledger.domain.errors import InvalidInputError, UnknownTurnError
from mindledger.turn_refs import AmbiguousTurnError, resolve_turn
from tests.integration.backends import BACKENDS, backend_home

# Ids chosen so prefixes collide on purpose: the first two share `abcd`, the third is all
# digits for its first 8 (a prefix that looks like a number).
ABCD_1 = UUID("abcd1111-0000-4000-8000-000000000001")
ABCD_2 = UUID("abcd2222-0000-4000-8000-000000000002")
DIGITS = UUID("12345678-0000-4000-8000-000000000003")


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Home]:
    """A mind with three turns, numbered 1 to 3, whose ids are ABCD_1, ABCD_2 and DIGITS."""
    path = tmp_path_factory.mktemp("refs") / "mind"
    mindledger.init(path, name="Refs")
    ids = iter([ABCD_1, ABCD_2, DIGITS])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("mindledger.domain.turns.uuid4", lambda: next(ids))
        with mindledger.open(path) as mind:
            for text in ("first", "second", "third"):
                mind.turn(text, model="mock", mock_reply="Noted.")
    yield Home(path)


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        ("last", DIGITS),
        (" LAST ", DIGITS),
        ("1", ABCD_1),
        ("#2", ABCD_2),
        ("3", DIGITS),
        (ABCD_2.hex, ABCD_2),
        (str(ABCD_2), ABCD_2),
        (str(ABCD_2).upper(), ABCD_2),
        ("abcd1", ABCD_1),
        ("ABCD-2", ABCD_2),
        ("12345678", DIGITS),  # no turn is number 12345678: the prefix of DIGITS
        ("1234", DIGITS),
    ],
)
def test_each_form_of_reference_names_its_turn(home: Home, ref: str, expected: UUID) -> None:
    assert resolve_turn(home, ref) == expected


def test_a_prefix_of_several_turns_is_ambiguous_and_lists_them(home: Home) -> None:
    with pytest.raises(AmbiguousTurnError) as raised:
        resolve_turn(home, "abcd")

    assert str(raised.value) == (
        "'abcd' names several turns: #1 abcd11110000, #2 abcd22220000; nothing changed, "
        "give the turn's number or more of its id"
    )
    assert raised.value.candidates == [ABCD_1.hex, ABCD_2.hex]


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("9", "no turn is number 9"),
        ("#4000", "no turn is number 4000"),
        ("abcdef12", "no turn has an id starting with abcdef12"),
        ("4000", "no turn is number 4000 and no turn has an id starting with 4000"),
        (f"{'f' * 32}", f"there is no turn {'f' * 32}"),
    ],
)
def test_a_reference_that_names_no_turn_says_so(home: Home, ref: str, message: str) -> None:
    with pytest.raises(UnknownTurnError) as raised:
        resolve_turn(home, ref)

    assert str(raised.value) == message


@pytest.mark.parametrize(
    "ref", ["", "  ", "abc", "#", "#x1", "last1", "zzzz", "a" * 33, "1 2", "#" + "9" * 19, "9" * 40]
)
def test_a_malformed_reference_is_refused_with_what_to_give(home: Home, ref: str) -> None:
    with pytest.raises(InvalidInputError) as raised:
        resolve_turn(home, ref)

    assert "; give 'last', a turn number (12 or #12), a turn id" in str(raised.value)
    assert "\n" not in str(raised.value)


def test_last_on_a_mind_without_turns_names_none(tmp_path: Path) -> None:
    mindledger.init(tmp_path / "empty", name="Empty")

    with pytest.raises(UnknownTurnError) as raised:
        resolve_turn(Home(tmp_path / "empty"), "last")

    assert str(raised.value) == "this mind has had no turn yet, so 'last' names none"


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.text(max_size=60) | st.from_regex(r"#?[0-9a-fA-F-]{1,40}", fullmatch=True))
def test_any_text_resolves_or_fails_in_one_line(home: Home, ref: str) -> None:
    try:
        found = resolve_turn(home, ref)
    except (InvalidInputError, UnknownTurnError, AmbiguousTurnError) as e:
        assert "\n" not in str(e) and len(str(e)) < 300
    else:
        assert found in (ABCD_1, ABCD_2, DIGITS)


@pytest.mark.parametrize("kind", BACKENDS)
def test_every_form_resolves_on_each_ledger_backend(kind: str, tmp_path: Path) -> None:
    with backend_home(kind, tmp_path / "mind") as home:
        mindledger.init(home.path, name="Backends")
        with mindledger.open(home.path) as mind:
            made = UUID(mind.turn("hello", model="mock", mock_reply="Hi.")["turn"])

        found = {ref: resolve_turn(home, ref) for ref in ("last", "#1", made.hex, made.hex[:8])}

        assert set(found.values()) == {made}
