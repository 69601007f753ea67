"""Small foreign files in their real formats, written by the tests: PMM ledger exports and
ChatGPT data exports."""

from __future__ import annotations

import hashlib
import json
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.conftest import REPO

PMM_DATA = REPO.parent / "shared" / "data" / "pmm"
# The four real PMM ledgers (../shared/data/pmm/SOURCE.md): events and forks; no hash breaks.
PMM_FILES = {
    "GPT-5.1-ledger.json": (1199, 3),
    "gemma3-4b-ledger.json": (1461, 1),
    "chat_session_2025-11-10_22-36-04_ledger.json": (1251, 0),
    "chat_session_2025-11-15_03-05-26_ledger.json": (1625, 1),
}


def pmm_hash(kind: str, content: str, meta: dict[str, Any], prev: str | None) -> str:
    """PMM's rule, written out again here so the importer is checked against the text of
    SOURCE.md, not against itself."""
    body = json.dumps(
        {"kind": kind, "content": content, "meta": meta, "prev_hash": prev},
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def pmm_ledger(events: Sequence[tuple[str, str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """A linear PMM chain of (kind, content, meta), ids from 1, a second apart."""
    out: list[dict[str, Any]] = []
    prev = None
    for n, (kind, content, meta) in enumerate(events, 1):
        own = pmm_hash(kind, content, meta, prev)
        out.append(
            {
                "id": n,
                "ts": f"2025-11-10T22:{n // 60:02d}:{n % 60:02d}.000000Z",
                "kind": kind,
                "content": content,
                "meta": json.dumps(meta, separators=(",", ":")),
                "prev_hash": prev,
                "hash": own,
            }
        )
        prev = own
    return out


def write_json(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


SMALL_PMM = [
    ("config", '{"type":"policy"}', {"source": "autonomy_kernel"}),
    ("user_message", "My name is Scott. Please remember the lighthouse.", {"role": "user"}),
    ("assistant_message", "Noted: the lighthouse on the north cape.", {}),
    (
        "commitment_open",
        "Commitment opened: keep a lighthouse log",
        {"cid": "aa11", "origin": "assistant", "text": "keep a lighthouse log"},
    ),
    (
        "commitment_open",
        "Commitment opened: summarise the tests",
        {"cid": "bb22", "origin": "assistant", "text": "summarise the tests"},
    ),
    ("commitment_close", "Commitment closed: bb22", {"cid": "bb22", "reason": "done"}),
    (
        "concept_define",
        json.dumps({"token": "topic.lighthouse", "definition": "The light on the cape"}),
        {},
    ),
    (
        "concept_define",
        json.dumps({"token": "topic.cape", "definition": "The north cape"}),
        {},
    ),
    ("concept_alias", json.dumps({"from": "topic.beacon", "to": "topic.lighthouse"}), {}),
    (
        "concept_relate",
        json.dumps({"from": "topic.lighthouse", "to": "topic.cape", "relation": "located_at"}),
        {},
    ),
    (
        "concept_bind_event",
        json.dumps({"event_id": 2, "relation": "evidence", "tokens": ["topic.lighthouse"]}),
        {},
    ),
    ("identity_adoption", json.dumps({"token": "identity.Nova", "reason": "ratified"}), {}),
    ("claim", 'CLAIM:state={"keeps_log":true}', {"claim_type": "state", "validated": True}),
    ("validation_failure", "identity_adoption rejected", {"reason_code": "INVALID"}),
    ("reflection", '{"intent":"reflect on the quasar of meaning"}', {"synth": "pmm"}),
    ("autonomy_tick", '{"decision":"idle","reasoning":"zebra crossing idle"}', {}),
]


def chatgpt_node(
    node_id: str,
    parent: str | None,
    children: list[str],
    role: str | None,
    parts: list[Any] | None = None,
    at: float | None = 1_700_000_000.0,
    **extra: Any,
) -> dict[str, Any]:
    """One node of a conversation's `mapping`, as ChatGPT exports it."""
    message = None
    if role is not None:
        message = {
            "id": node_id,
            "author": {"role": role, "name": None, "metadata": {}},
            "create_time": at,
            "update_time": None,
            "content": {
                "content_type": "multimodal_text"
                if any(not isinstance(p, str) for p in parts or [])
                else "text",
                "parts": parts or [],
            },
            "status": "finished_successfully",
            "end_turn": True,
            "weight": 1.0,
            "metadata": extra.pop("metadata", {}),
            "recipient": extra.pop("recipient", "all"),
            **extra,
        }
    return {"id": node_id, "message": message, "parent": parent, "children": children}


def chatgpt_conversation(
    cid: str, nodes: list[dict[str, Any]], current: str, title: str = "Chat"
) -> dict[str, Any]:
    """A conversation of a conversations.json."""
    return {
        "title": title,
        "create_time": 1_700_000_000.0,
        "update_time": 1_700_000_100.0,
        "mapping": {n["id"]: n for n in nodes},
        "moderation_results": [],
        "current_node": current,
        "plugin_ids": None,
        "conversation_id": cid,
        "conversation_template_id": None,
        "gizmo_id": None,
        "is_archived": False,
        "safe_urls": [],
        "default_model_slug": "gpt-4o",
        "id": cid,
    }


def branching_conversation(cid: str = "conv-1") -> dict[str, Any]:
    """Root, ChatGPT's hidden system prompt, a question, an edited branch left behind, the
    current branch with an image, a tool call and its output, and the answer."""
    hidden = {"is_visually_hidden_from_conversation": True}
    nodes = [
        chatgpt_node("root", None, ["sys"], None),
        chatgpt_node("sys", "root", ["q1"], "system", [""], None, metadata=hidden),
        chatgpt_node("q1", "sys", ["a-old", "a1"], "user", ["Where is the lighthouse?"], 1.7e9),
        chatgpt_node("a-old", "q1", [], "assistant", ["An abandoned answer."], 1.7e9 + 5),
        chatgpt_node(
            "a1",
            "q1",
            ["call"],
            "assistant",
            ["On the north cape.", {"content_type": "image_asset_pointer", "asset_pointer": "x"}],
            1.7e9 + 10,
        ),
        chatgpt_node(
            "call", "a1", ["out"], "assistant", ["search('cape')"], 1.7e9 + 11, recipient="browser"
        ),
        chatgpt_node("out", "call", ["a2"], "tool", ["results..."], 1.7e9 + 12),
        chatgpt_node("a2", "out", [], "assistant", ["It was built in 1890."], None),
    ]
    return chatgpt_conversation(cid, nodes, "a2", title="Lighthouse")


def chatgpt_zip(path: Path, conversations: list[dict[str, Any]]) -> Path:
    """An export's zip: conversations.json with the other files an export holds."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("user.json", "{}")
        archive.writestr("chat.html", "<html></html>")
        archive.writestr("conversations.json", json.dumps(conversations))
    return path
