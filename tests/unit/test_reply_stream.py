"""The visible reply as it streams: whatever way a reply is cut into tokens, the pieces add up to
exactly the visible reply a turn records, and no piece ever carries part of a control line."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mindledger.domain.control_lines import KEYWORDS, split_reply
from mindledger.domain.reply_stream import ReplyStream, could_be_control

pieces = st.sampled_from(
    [*KEYWORDS, ":", " ", "\n", "\r", "\r\n", "- ", "* ", "\t", "hello", "x", "é", "\u2028", "-"]
)
replies = st.lists(st.one_of(pieces, st.text(max_size=6)), max_size=14).map("".join)


def streamed(reply: str, cuts: list[int], limit: int = 10_000) -> list[str]:
    out: list[str] = []
    stream = ReplyStream(out.append, limit)
    start = 0
    for cut in sorted(c % (len(reply) + 1) for c in cuts):
        stream.feed(reply[start:cut])
        start = max(start, cut)
    stream.feed(reply[start:])
    stream.finish(reply)
    return out


@settings(deadline=None)  # a busy machine; the property is about text, not time
@given(replies, st.lists(st.integers(min_value=0, max_value=200), max_size=8))
def test_streamed_pieces_add_up_to_the_recorded_visible_reply(reply: str, cuts: list[int]) -> None:
    assert "".join(streamed(reply, cuts)) == split_reply(reply)[0]


@settings(deadline=None)
@given(replies, st.integers(min_value=0, max_value=30))
def test_only_the_kept_part_of_an_overlong_reply_streams(reply: str, limit: int) -> None:
    out: list[str] = []
    stream = ReplyStream(out.append, limit)
    for ch in reply:
        stream.feed(ch)
    stream.finish(reply)
    assert "".join(out) == split_reply(reply[:limit])[0]


def test_a_control_line_is_never_shown_even_in_part() -> None:
    reply = "Sure.\nCOMMIT: write the report\n- CLOSE: c1 done\nBye"
    out = streamed(reply, list(range(len(reply))))
    assert "".join(out) == "Sure.\nBye"
    assert not any("COMMIT" in piece or "CLOSE" in piece or "c1" in piece for piece in out)


def test_a_line_is_released_as_soon_as_it_cannot_be_a_control_line() -> None:
    out: list[str] = []
    stream = ReplyStream(out.append, 100)
    stream.feed("COMM")
    assert out == []
    stream.feed("A, then")
    assert out == ["COMMA, then"]


def test_a_cut_off_control_line_at_the_end_is_never_shown() -> None:
    assert "".join(streamed("Done.\nCOMMIT: wri", [3, 9])) == "Done."


def test_a_failing_listener_stops_hearing_without_stopping_the_stream() -> None:
    heard: list[str] = []

    def listener(text: str) -> None:
        heard.append(text)
        raise ConnectionResetError("client gone")

    stream = ReplyStream(listener, 100)
    stream.feed("Hello ")
    stream.feed("world")
    stream.finish("Hello world")
    assert heard == ["Hello"]
    assert stream.fed == len("Hello world")


def test_could_be_control_knows_the_prefixes() -> None:
    assert could_be_control("  - THREAD-W")
    assert could_be_control("COMMIT :")
    assert not could_be_control("COMMITTED")
    assert not could_be_control("Commit: lower case is text")
