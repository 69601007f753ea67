"""Hidden characters: the set, how they are shown on a terminal and in JSON, and refused."""

from __future__ import annotations

import json
import sys
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mindledger.cli.output import for_terminal, json_text
from mindledger.domain.errors import InvalidInputError
from mindledger.domain.text import HIDDEN, clean_text, show_hidden

JOINERS = {"\u200c", "\u200d"}


def test_hidden_is_every_control_format_and_line_separator_but_the_joiners() -> None:
    for code in range(sys.maxunicode + 1):
        ch = chr(code)
        category = unicodedata.category(ch)
        wanted = category in ("Cc", "Zl", "Zp") or (category == "Cf" and ch not in JOINERS)
        # Characters unassigned in this Python's Unicode version may be listed ahead.
        assert bool(HIDDEN.match(ch)) == wanted or category == "Cn", f"U+{code:04X}"


@given(st.text())
def test_terminal_text_keeps_only_newlines_and_tabs_of_the_hidden(text: str) -> None:
    shown = for_terminal(text)

    assert set(HIDDEN.findall(shown)) <= {"\n", "\t"}
    assert for_terminal(shown) == shown


@given(st.recursive(st.text() | st.integers() | st.none(), lambda c: st.lists(c, max_size=3)))
def test_json_output_is_valid_exact_and_free_of_raw_controls(data: object) -> None:
    text = json_text({"value": data})

    assert json.loads(text) == {"value": data}
    assert set(HIDDEN.findall(text)) <= {"\n"}


def test_escapes_name_the_character() -> None:
    assert show_hidden("a\x1b]0;t\x07\x9b\r\b\u202e\U000e0041") == (
        "a\\x1b]0;t\\x07\\x9b\\r\\x08\\u202e\\U000e0041"
    )
    assert json_text("\x9b\U000e0041", indent=None) == '"\\u009b\\udb40\\udc41"'


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("ab\u202ec", "U+202E (RIGHT-TO-LEFT OVERRIDE) at position 3"),
        ("\u200bab", "U+200B (ZERO WIDTH SPACE) at position 1"),
        ("a\u2069", "U+2069 (POP DIRECTIONAL ISOLATE) at position 2"),
        ("a\U000e0041b", "U+E0041 (TAG LATIN CAPITAL LETTER A) at position 2"),
    ],
)
def test_visible_text_refuses_invisible_characters_saying_which_and_where(
    value: str, message: str
) -> None:
    with pytest.raises(InvalidInputError) as refused:
        clean_text(value, "name", 80, single_line=True, visible=True)

    assert message in str(refused.value)


def test_joiners_and_ordinary_text_are_accepted() -> None:
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"

    assert clean_text(f"Echo {family}", "name", 80, visible=True) == f"Echo {family}"
    assert clean_text("ab\u202ec", "name", 80) == "ab\u202ec"  # only where asked


def test_a_json_document_escapes_what_json_leaves_and_keeps_its_indentation() -> None:
    from mindledger.safe_text import json_text

    shown = json_text({"a": "x\u202ey\x1b\x85\n", "b": [1, 2]})

    assert shown == '{\n  "a": "x\\u202ey\\u001b\\u0085\\n",\n  "b": [\n    1,\n    2\n  ]\n}'
    assert json_text({"a": "plain"}, indent=None) == '{"a": "plain"}'
