"""`mind import chatgpt`: each conversation's current branch, speakers and times, idempotent."""

from __future__ import annotations

import json
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

from mindledger.adapters.chatgpt_import import import_chatgpt
from mindledger.domain.application import Mind
from mindledger.domain.conversation import Conversation, conversation_id
from mindledger.domain.errors import InvalidInputError
from tests.foreign_files import (
    branching_conversation,
    chatgpt_conversation,
    chatgpt_node,
    chatgpt_zip,
    write_json,
)


def observed(app: Mind) -> list[tuple[str, str, datetime]]:
    rows = []
    for n in app.recorder.select_notifications(start=1, limit=1000):
        if n.topic == "mind.conversation.message_observed":
            e = app.mapper.to_domain_event(n)  # opens the sealed text
            rows.append((e.speaker, e.text, e.said_at))
    return rows


def test_the_current_branch_is_imported_root_first_with_speakers_and_times(
    app: Mind, tmp_path: Path
) -> None:
    path = write_json(tmp_path / "conversations.json", [branching_conversation()])

    done = import_chatgpt(app, path)

    at = datetime.fromtimestamp(1.7e9, UTC)
    later = datetime.fromtimestamp(1.7e9 + 10, UTC)
    assert observed(app) == [
        ("user", "Where is the lighthouse?", at),
        ("assistant", "On the north cape.\n[image]", later),
        # No create_time: it takes the time of the message before it.
        ("assistant", "It was built in 1890.", later),
    ]
    assert done["notes"] == {
        "non-text parts kept as placeholders": 1,
        "system messages skipped": 1,
        "tool calls skipped": 1,
        "tool messages skipped": 1,
    }
    assert (done["conversations"], done["added"], done["skipped"]) == (1, 3, 0)
    conversation = app.load(Conversation, conversation_id("chatgpt/conv-1"))
    assert conversation.source_ids == {"chatgpt:q1", "chatgpt:a1", "chatgpt:a2"}


def test_a_user_written_system_message_is_kept_and_chatgpts_own_is_skipped(
    app: Mind, tmp_path: Path
) -> None:
    nodes = [
        chatgpt_node("root", None, ["own"], None),
        chatgpt_node("own", "root", ["mine"], "system", ["You are ChatGPT."]),
        chatgpt_node(
            "mine",
            "own",
            ["q"],
            "system",
            ["Answer briefly."],
            metadata={"is_user_system_message": True},
        ),
        chatgpt_node("q", "mine", [], "user", ["hello"]),
    ]
    path = write_json(tmp_path / "c.json", [chatgpt_conversation("c2", nodes, "q")])

    done = import_chatgpt(app, path)

    assert [(s, t) for s, t, _ in observed(app)] == [
        ("system", "Answer briefly."),
        ("user", "hello"),
    ]
    assert done["notes"] == {"system messages skipped": 1}


def test_the_export_zip_is_read_and_a_reimport_adds_nothing(app: Mind, tmp_path: Path) -> None:
    path = chatgpt_zip(tmp_path / "export.zip", [branching_conversation()])
    import_chatgpt(app, path)
    before = app.recorder.max_notification_id()

    again = import_chatgpt(app, path)

    assert (again["added"], again["skipped"]) == (0, 3)
    assert again["skipped_reasons"] == {"already imported": 3}
    assert app.recorder.max_notification_id() == before


def test_a_longer_export_of_the_same_conversation_adds_only_the_new_messages(
    app: Mind, tmp_path: Path
) -> None:
    first = branching_conversation()
    import_chatgpt(app, write_json(tmp_path / "a.json", [first]))
    longer = branching_conversation()
    longer["mapping"]["a2"]["children"] = ["q3"]
    longer["mapping"]["q3"] = chatgpt_node("q3", "a2", [], "user", ["Thanks!"], 1.7e9 + 60)
    longer["current_node"] = "q3"

    done = import_chatgpt(app, write_json(tmp_path / "b.json", [longer]))

    assert (done["added"], done["skipped"]) == (1, 3)


def test_a_zip_bomb_member_is_refused_before_it_is_inflated(app: Mind, tmp_path: Path) -> None:
    path = tmp_path / "bomb.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("conversations.json", b" " * 5_000_000)

    with pytest.raises(InvalidInputError, match="zip bomb"):
        import_chatgpt(app, path)


@pytest.mark.parametrize(
    "conversations",
    [
        {"not": "a list"},
        [{"mapping": {}}],
        [chatgpt_conversation("c", [chatgpt_node("a", None, [], "user", ["x"])], "missing")],
        [
            chatgpt_conversation(
                "loop",
                [
                    chatgpt_node("a", "b", [], "user", ["x"]),
                    chatgpt_node("b", "a", [], "user", ["y"]),
                ],
                "a",
            )
        ],
    ],
)
def test_a_file_not_in_export_shape_is_refused_in_one_line_before_anything_is_written(
    app: Mind, tmp_path: Path, conversations: object
) -> None:
    path = write_json(tmp_path / "conversations.json", conversations)
    before = app.recorder.max_notification_id()

    with pytest.raises(InvalidInputError) as refused:
        import_chatgpt(app, path)

    assert "\n" not in str(refused.value)
    assert app.recorder.max_notification_id() == before


def test_a_zip_without_conversations_json_is_refused(app: Mind, tmp_path: Path) -> None:
    path = tmp_path / "other.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("user.json", "{}")

    with pytest.raises(InvalidInputError, match=r"no conversations\.json"):
        import_chatgpt(app, path)


def _one_message_conversation(cid: str, text: str, role: str = "user") -> dict[str, object]:
    nodes = [
        chatgpt_node("root", None, ["m1"], None),
        chatgpt_node("m1", "root", ["m2"], role, [text], 1.7e9),
        chatgpt_node("m2", "m1", [], "assistant", ["An ordinary answer."], 1.7e9 + 1),
    ]
    return chatgpt_conversation(cid, nodes, "m2")


@pytest.mark.parametrize(
    ("text", "stored"),
    [
        ("\x1b[32mPASSED\x1b[0m", "\\x1b[32mPASSED\\x1b[0m"),
        ("page one\x0cpage two", "page one\\x0cpage two"),
        ("typo\x08o and \x7f and \x00", "typo\\x08o and \\x7f and \\x00"),
    ],
    ids=["ansi", "form-feed", "backspace-del-nul"],
)
def test_a_message_with_control_characters_is_stored_escaped_and_the_rest_imported(
    app: Mind, tmp_path: Path, text: str, stored: str
) -> None:
    odd = _one_message_conversation("odd", text)
    plain = _one_message_conversation("plain", "A plain question.")
    path = write_json(tmp_path / "conversations.json", [odd, plain])

    done = import_chatgpt(app, path)

    assert done["added"] == 4
    assert stored in [t for _, t, _ in observed(app)]
    assert done["notes"] == {"messages with control characters stored as escapes (\\x1b)": 1}


def test_a_message_over_the_limit_is_stored_in_parts_and_a_reimport_adds_nothing(
    app: Mind, tmp_path: Path
) -> None:
    long = "a" * 100_000 + "b" * 50
    path = write_json(tmp_path / "c.json", [_one_message_conversation("long", long)])

    done = import_chatgpt(app, path)
    again = import_chatgpt(app, path)

    assert done["added"] == 3
    assert [t for _, t, _ in observed(app)][:2] == ["a" * 100_000, "b" * 50]
    assert done["notes"] == {"messages over 100,000 characters stored as several parts": 1}
    assert again["added"] == 0


@pytest.mark.parametrize(
    ("role", "note"),
    [
        ("weird sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789EFGH", "'weird [redacted]'"),
        (
            "weird\x1b[31msk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789EFGH",
            "a role of 58 characters",
        ),
    ],
)
def test_a_skipped_role_is_redacted_before_it_is_cut(
    app: Mind, tmp_path: Path, role: str, note: str
) -> None:
    path = write_json(tmp_path / "c.json", [_one_message_conversation("r", "hi", role=role)])

    done = import_chatgpt(app, path)

    assert "AbCd" not in json.dumps(done)
    assert done["notes"] == {f"messages by {note} skipped": 1}


def test_the_title_is_stored_once_and_again_when_it_changes(app: Mind, tmp_path: Path) -> None:
    first = branching_conversation()
    import_chatgpt(app, write_json(tmp_path / "a.json", [first]))
    import_chatgpt(app, write_json(tmp_path / "a.json", [first]))
    renamed = branching_conversation()
    renamed["title"] = "Lighthouse trip"

    import_chatgpt(app, write_json(tmp_path / "b.json", [renamed]))

    conversation = app.load(Conversation, conversation_id("chatgpt/conv-1"))
    titles = [
        app.mapper.to_domain_event(n).title
        for n in app.recorder.select_notifications(start=1, limit=1000)
        if n.topic == "mind.conversation.titled"
    ]
    assert (conversation.title, titles) == ("Lighthouse trip", ["Lighthouse", "Lighthouse trip"])


def test_a_reimport_on_another_branch_says_so_instead_of_mixing_silently(
    app: Mind, tmp_path: Path
) -> None:
    import_chatgpt(app, write_json(tmp_path / "a.json", [branching_conversation()]))
    switched = branching_conversation()
    switched["current_node"] = "a-old"

    done = import_chatgpt(app, write_json(tmp_path / "b.json", [switched]))

    assert done["added"] == 1
    # a1 and a2 were recorded from the branch the user has since left.
    assert done["notes"]["messages recorded earlier, now on another branch (kept)"] == 2
