"""An old conversation (named after its file) is found by its content on every backend: the
look at the conversations' names reads the ledger's notifications by topic."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mindledger.adapters.importers import chat_messages, import_chat
from mindledger.compose import open_mind, open_reader
from tests.integration.backends import BACKENDS, backend_home


def transcript(path: Path, *contents: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    roles = ("user", "assistant")
    lines = [{"role": roles[i % 2], "content": c} for i, c in enumerate(contents)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.mark.parametrize("kind", BACKENDS)
def test_a_renamed_grown_copy_goes_on_in_the_conversation_named_after_its_old_file(
    kind: str, tmp_path: Path
) -> None:
    with backend_home(kind, tmp_path / "mind") as home:
        app = open_mind(home, create=True)
        try:
            app.init("Echo", open_reader(home).meta()[0])
            old = transcript(tmp_path / "old" / "history.jsonl", "I like tea", "Noted: tea")
            kept = list(chat_messages(old))  # as imports before content names recorded it
            app.import_conversation("chat/history.jsonl", ["assistant", "user"], kept)
            grown = transcript(tmp_path / "tea.jsonl", "I like tea", "Noted: tea", "And cake")

            done = import_chat(app, grown)
        finally:
            app.close()

    assert (done["source"], done["added"], done["skipped"]) == ("chat/history.jsonl", 1, 2)
