"""The control-line parser on arbitrary replies: it refuses with ValueError or parses, and the
stream filter never shows a control line, however the reply is cut into tokens."""

from __future__ import annotations

import contextlib
import re

from hypothesis import given
from hypothesis import strategies as st

from mindledger.domain.control_lines import (
    KEYWORDS,
    VisibleStream,
    parse_claim,
    parse_close,
    parse_concept,
    parse_object,
    parse_relate,
    parse_thread_ref,
    split_reply,
)
from mindledger.domain.errors import MindError
from tests.fuzz.harness import texts

# Replies built from control-line shapes, so the parsers see near-misses, not only noise.
keyword_lines = st.builds(
    lambda lead, keyword, gap, body: f"{lead}{keyword}{gap}:{body}",
    st.sampled_from(["", " ", "- ", "* ", "\t", "-"]),
    st.sampled_from([*KEYWORDS, *(k.lower() for k in KEYWORDS), "COMMITS", "THREAD-"]),
    st.sampled_from(["", " ", "\t"]),
    texts,
)
replies = st.lists(st.one_of(keyword_lines, texts), max_size=6).map("\n".join)
PARSERS = [
    parse_close,
    parse_claim,
    parse_concept,
    parse_relate,
    lambda body: parse_thread_ref(body, "THREAD-WORK"),
    lambda body: parse_object(body, "THREAD"),
]
SHOWN_CONTROL = re.compile(r"^\s*(?:[-*]\s*)?(" + "|".join(KEYWORDS) + r")\s*:", re.MULTILINE)


@given(reply=replies)
def test_every_control_line_body_parses_or_is_refused_with_a_value_error(reply: str) -> None:
    _, lines = split_reply(reply)

    for line in lines:
        for parse in PARSERS:
            with contextlib.suppress(ValueError, MindError):  # refused: recorded as rejected
                parse(line.body)


@given(reply=replies, cuts=st.lists(st.integers(min_value=0, max_value=200), max_size=8))
def test_the_stream_shows_the_same_text_however_it_is_cut_and_never_a_control_line(
    reply: str, cuts: list[int]
) -> None:
    whole = VisibleStream()
    expected = whole.feed(reply) + whole.flush()
    stream, shown, start = VisibleStream(), [], 0
    for cut in sorted(c % (len(reply) + 1) for c in cuts):
        shown.append(stream.feed(reply[start:cut]))
        start = max(start, cut)
    shown.append(stream.feed(reply[start:]) + stream.flush())

    assert "".join(shown) == expected
    assert SHOWN_CONTROL.search(expected) is None, expected
