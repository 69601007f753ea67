"""The import rules: content ids for transcript lines, and messages recorded under the old ids."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mindledger.adapters.import_rules import chat_line_id, chat_role, message_text
from mindledger.adapters.importers import (
    Observed,
    chat_messages,
    chat_sources,
    import_chat,
    record,
)
from mindledger.domain.application import Mind
from mindledger.domain.conversation import ConversationTakenError
from mindledger.domain.errors import InvalidInputError
from tests.conftest import T0


def transcript(path: Path, lines: list[tuple[str, str]]) -> Path:
    path.write_text("".join(json.dumps({"role": r, "content": c}) + "\n" for r, c in lines))
    return path


def test_messages_imported_under_line_number_ids_are_not_imported_again(
    app: Mind, tmp_path: Path
) -> None:
    path = transcript(tmp_path / "history.jsonl", [("user", "I like tea"), ("assistant", "Noted")])
    old_scheme = [  # as imports before content ids recorded them
        Observed("user", "I like tea", T0, "history.jsonl:1"),
        Observed("assistant", "Noted", T0, "history.jsonl:2"),
    ]
    record(app, "chat/history.jsonl", ["assistant", "user"], iter(old_scheme))

    again = import_chat(app, path)

    assert (again["added"], again["skipped_reasons"]) == (0, {"already imported": 2})


def test_a_different_file_under_an_old_line_number_id_is_still_imported(
    app: Mind, tmp_path: Path
) -> None:
    record(
        app, "chat/history.jsonl", ["user"], iter([Observed("user", "a", T0, "history.jsonl:1")])
    )
    path = transcript(tmp_path / "history.jsonl", [("user", "something else")])

    done = import_chat(app, path)

    assert (done["added"], done["skipped"]) == (1, 0)


@given(
    st.sampled_from(["user", "assistant"]),
    st.none() | st.just("2025-01-01T00:00:00Z"),
    st.text(min_size=1),
    st.integers(0, 3),
)
def test_a_line_id_changes_with_every_part_of_the_message(
    role: str, time: str | None, text: str, occurrence: int
) -> None:
    same = chat_line_id(role, time, text, occurrence)

    assert same == chat_line_id(role, time, text, occurrence)
    assert same != chat_line_id(role, time, text + "!", occurrence)
    assert same != chat_line_id(role, time, text, occurrence + 1)
    assert same != chat_line_id(role, "2000-01-01T00:00:00Z", text, occurrence)


@pytest.mark.parametrize("value", ["wizard", "", None, 3, "us er"])
def test_roles_outside_the_chat_roles_are_refused(value: object) -> None:
    with pytest.raises(InvalidInputError, match=r"f\.jsonl:4 has role"):
        chat_role(value, "f.jsonl:4")


@pytest.mark.parametrize("value", [None, "", "   ", "\n\t\n"])
def test_blank_or_missing_content_is_empty_text(value: str | None) -> None:
    assert message_text(value, "f.jsonl:1") == ""


def locomo_file(path: Path, turns: list[dict[str, str]]) -> Path:
    conversation = {
        "speaker_a": "Ana",
        "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": turns,
    }
    path.write_text(json.dumps([{"sample_id": "s1", "conversation": conversation, "qa": []}]))
    return path


def test_a_locomo_turn_with_no_text_is_skipped_and_reported(app: Mind, tmp_path: Path) -> None:
    from mindledger.adapters.importers import import_locomo

    path = locomo_file(
        tmp_path / "l.json",
        [
            {"speaker": "Ana", "dia_id": "D1:1", "text": "I made a bowl"},
            {"speaker": "Ben", "dia_id": "D1:2", "text": "   "},
        ],
    )

    (done,) = import_locomo(app, path, None)

    assert done == {
        "sample": "s1",
        "added": 1,
        "skipped": 1,
        "skipped_reasons": {"empty message": 1},
    }


def test_a_locomo_turn_by_someone_outside_the_sample_is_refused_before_anything_is_written(
    app: Mind, tmp_path: Path
) -> None:
    from mindledger.adapters.importers import import_locomo

    path = locomo_file(
        tmp_path / "l.json",
        [
            {"speaker": "Ana", "dia_id": "D1:1", "text": "I made a bowl"},
            {"speaker": "wizard", "dia_id": "D1:2", "text": "abracadabra"},
        ],
    )
    before = app.recorder.max_notification_id()

    with pytest.raises(InvalidInputError, match=r"s1 D1:2 has speaker 'wizard'"):
        import_locomo(app, path, None)

    assert app.recorder.max_notification_id() == before


@pytest.mark.parametrize(
    ("content", "stored"),
    [("one\r\ntwo", "one\ntwo"), ("one\rtwo", "one\ntwo"), ("a\r\n\r\nb\r", "a\n\nb")],
)
def test_crlf_and_cr_line_ends_inside_a_message_are_line_breaks(content: str, stored: str) -> None:
    assert message_text(content, "f.jsonl:1") == stored


@pytest.mark.parametrize("content", ["bell \x07 here", "tab\vbad", "form\ffeed", "esc\x1b[31m"])
def test_other_control_characters_in_a_message_are_still_refused(content: str) -> None:
    with pytest.raises(InvalidInputError, match=r"f\.jsonl:1"):
        message_text(content, "f.jsonl:1")


def test_a_crlf_transcript_is_imported_whole(app: Mind, tmp_path: Path) -> None:
    path = transcript(tmp_path / "crlf.jsonl", [("user", "first line\r\nsecond line")])

    result = import_chat(app, path)

    assert result["added"] == 1


def test_a_transcript_whose_conversation_another_import_took_meanwhile_gets_the_next_name(
    app: Mind, tmp_path: Path
) -> None:
    ann = transcript(tmp_path / "a.jsonl", [("user", "hello"), ("assistant", "hi Ann")])
    bob = transcript(tmp_path / "b.jsonl", [("user", "hello"), ("assistant", "hi Bob")])
    bobs = list(chat_messages(bob))
    chosen = app.transcript_source(bobs, chat_sources(app, bobs))
    assert import_chat(app, ann)["source"] == chosen  # the other import wrote there first

    with pytest.raises(ConversationTakenError):
        app.import_conversation(chosen, ["user"], bobs, same_transcript=True)
    done = import_chat(app, bob)

    assert (done["source"], done["added"]) == (f"{chosen}/2", 2)
