"""A served mind embeds its stored items in the background (the vector projection, a thread of
`mind serve`), never in a turn: turns answer while the vectors lag, `status` shows the lag
shrink to nothing, recall's vector channel then finds a paraphrase, and a stop is clean."""

from __future__ import annotations

from pathlib import Path

from tests.service.serving import init_home, start_server

M = "/v1/minds/Echo"
DOG = "My sister adopted a golden retriever puppy last spring."


def test_a_served_mind_embeds_its_messages_beside_its_turns(tmp_path: Path) -> None:
    server = start_server([init_home(tmp_path / "echo", "Echo")])
    try:
        for text in (DOG, "The boiler broke on Tuesday."):
            turn = server.request(
                "POST", f"{M}/turns", {"text": text, "model": "mock", "mock_reply": "Noted."}
            )
            assert turn.status == 200, turn.body
        server.vectors_caught_up()
        recalled = server.request("GET", f"{M}/recall?q=Which+dog+did+her+sibling+get").json()
        assert recalled["vectors"]["state"] == "on" and recalled["vectors"]["lag"] == 0
        assert any(DOG in i["text"] for i in recalled["items"] if i["channel"] == "vector")
    finally:
        code = server.stop()
    assert code == 0, "".join(server.stderr)
    assert not any("vector projection failed" in line for line in server.stderr)
