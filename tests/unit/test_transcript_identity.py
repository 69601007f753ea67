"""When a transcript is a conversation: the same messages, in order, as far as the shorter goes;
a message recorded under an older id scheme counts when its speaker and text are the same."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from mindledger.domain.conversation import Conversation, Observed
from tests.conftest import T0

# Texts as an import stores them (`message_text`: stripped, never blank).
texts = st.lists(st.text("abc ", min_size=1, max_size=4).map(str.strip).filter(bool), max_size=8)


def observed(texts: list[str], scheme: str = "chat") -> list[Observed]:
    return [Observed("user", t, T0, f"{scheme}:{n}:{t}") for n, t in enumerate(texts)]


def conversation(messages: list[Observed]) -> Conversation:
    recorded = Conversation.start("chat/history.jsonl", ["user"], T0)
    for m in messages:
        recorded.observe(m.speaker, m.text, m.said_at, m.source_id, T0)
    return recorded


@given(texts, texts)
def test_a_transcript_that_begins_or_ends_where_the_conversation_does_is_it(
    first: list[str], more: list[str]
) -> None:
    recorded = conversation(observed(first))

    assert recorded.differs_at(observed(first + more)) is None
    assert recorded.differs_at(observed(first[: len(first) // 2])) is None


@given(texts.filter(bool), st.data())
def test_a_transcript_that_differs_somewhere_is_another_at_that_message(
    first: list[str], data: st.DataObject
) -> None:
    at = data.draw(st.integers(0, len(first) - 1))
    other = [*first[:at], first[at] + "!", *first[at + 1 :]]

    assert conversation(observed(first)).differs_at(observed(other)) == at + 1


@given(texts.filter(bool))
def test_messages_recorded_under_an_older_id_scheme_are_known_by_speaker_and_text(
    first: list[str],
) -> None:
    recorded = conversation(observed(first, scheme="history.jsonl"))
    changed = [*first[:-1], first[-1] + "!"]

    assert recorded.agrees(observed(first))
    assert recorded.differs_at(observed(changed)) == len(first)


def test_an_id_of_the_same_scheme_is_never_matched_by_text() -> None:
    recorded = conversation([Observed("user", "hi", T0, "chat:said-at-nine")])

    assert recorded.differs_at([Observed("user", "hi", T0, "chat:said-at-ten")]) == 1
