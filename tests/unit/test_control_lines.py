"""The control-line parser and the stream filter that hides control lines."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mindledger.domain.control_lines import (
    VisibleStream,
    json_value,
    parse_claim,
    parse_close,
    parse_concept,
    parse_relate,
    split_reply,
)

REPLY = (
    "Sure, I'll remember that.\n"
    "COMMIT: buy milk on Friday\n"
    "  - CLOSE: c1234567890 bought it\n"
    'CLAIM:event_exists={"id": 3}\n'
    "CONCEPT: user.groceries = what the user buys\n"
    "RELATE: user.groceries -> part-of -> user.home\n"
    "REFLECT: the user shops on Fridays\n"
    "Committed people remember."
)


def test_control_lines_are_split_from_the_visible_reply() -> None:
    visible, lines = split_reply(REPLY)

    assert visible == "Sure, I'll remember that.\nCommitted people remember."
    assert [(c.keyword, c.body) for c in lines] == [
        ("COMMIT", "buy milk on Friday"),
        ("CLOSE", "c1234567890 bought it"),
        ("CLAIM", 'event_exists={"id": 3}'),
        ("CONCEPT", "user.groceries = what the user buys"),
        ("RELATE", "user.groceries -> part-of -> user.home"),
        ("REFLECT", "the user shops on Fridays"),
    ]


@pytest.mark.parametrize(
    ("parser", "body", "expected"),
    [
        (parse_close, "C123 done and dusted", ("c123", "done and dusted", [])),
        (parse_close, "c123", ("c123", None, [])),
        (
            parse_close,
            "c123 shipped, see #12 and #40",
            ("c123", "shipped, see #12 and #40", [12, 40]),
        ),
        (parse_claim, 'event_exists={"id": 1}', ("event_exists", '{"id": 1}')),
        (parse_concept, "a.b = x = y", ("a.b", "x = y")),
        (parse_relate, "a -> rel -> b", ("a", "rel", "b")),
    ],
)
def test_parsers(parser: object, body: str, expected: object) -> None:
    assert parser(body) == expected  # type: ignore[operator]


@pytest.mark.parametrize(
    ("parser", "body"),
    [(parse_claim, "no equals sign"), (parse_concept, "no equals"), (parse_relate, "a -> b")],
)
def test_malformed_bodies_raise_value_error(parser: object, body: str) -> None:
    with pytest.raises(ValueError):
        parser(body)  # type: ignore[operator]


@given(
    text=st.text(alphabet=st.sampled_from(list("COMITLSEAR:-* abc\n")), max_size=200),
    sizes=st.lists(st.integers(1, 9), min_size=1, max_size=50),
)
def test_streaming_shows_exactly_the_visible_reply(text: str, sizes: list[int]) -> None:
    stream, out, i = VisibleStream(), [], 0
    for size in sizes * 50:
        if i >= len(text):
            break
        out.append(stream.feed(text[i : i + size]))
        i += size
    out.append(stream.feed(text[i:]))
    out.append(stream.flush())

    shown = "".join(out)
    visible, _ = split_reply(text)
    assert [ln.strip() for ln in shown.splitlines() if ln.strip()] == [
        ln.strip() for ln in visible.splitlines() if ln.strip()
    ]


# Breaks str.splitlines knows but a terminal (or a reader) does not show as a new line.
NOT_LINE_BREAKS = ["\u2028", "\u2029", "\u0085", "\x1c", "\x1d", "\x1e", "\v", "\f", "\r"]


@given(
    before=st.text(
        alphabet=st.characters(blacklist_characters="\n\r"), min_size=1, max_size=20
    ).filter(lambda t: t.strip() != ""),
    separator=st.sampled_from(NOT_LINE_BREAKS),
    keyword=st.sampled_from(["COMMIT", "CLOSE", "REFLECT", "THREAD"]),
)
def test_a_control_line_starts_only_after_a_real_line_break(
    before: str, separator: str, keyword: str
) -> None:
    reply = f"{before}{separator}{keyword}: sneaky"

    visible, lines = split_reply(reply)

    assert lines == []
    assert keyword in visible


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_newline_and_crlf_both_end_a_line(newline: str) -> None:
    visible, lines = split_reply(f"hello{newline}COMMIT: call Ada{newline}bye")

    assert [(c.keyword, c.body) for c in lines] == [("COMMIT", "call Ada")]
    assert visible == "hello\nbye"


def test_a_lines_json_is_json_without_nan_or_infinity() -> None:
    """Python's json reads NaN, Infinity and 1e999 (infinity); JSON has none of them, and a
    reply's line holding one was recorded and printed (`mind turn --json` wrote `NaN`)."""
    assert json_value('{"a": [1, 2.5, -0.0, 1e300, 12345678901234567890123]}') == {
        "a": [1, 2.5, -0.0, 1e300, 12345678901234567890123]
    }
    for text in ("NaN", "[Infinity]", '{"a": -Infinity}', "1e999", "-1E400"):
        with pytest.raises(ValueError, match="malformed JSON"):
            json_value(text)
