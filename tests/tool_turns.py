"""Two turns with tools recorded on a mind, for the tests of what shows them (the web page):
one whose reply calls get_weather, one whose message is the result (`content`), which follows
it. The fake model that takes tools is the floor test's (tests/unit/test_turn_tools.py)."""

from __future__ import annotations

from pathlib import Path

import mindledger
from tests.unit.test_turn_tools import NOW, QUESTION, WEATHER, ToolModel

__all__ = ["NOW", "record_tool_turns"]


def record_tool_turns(home: Path, content: str) -> tuple[str, str]:
    """The asking turn's id and the results turn's, both recorded on `home` at `NOW` (a
    mind made before it must be made at `NOW` or earlier)."""
    with mindledger.open(home, now=NOW) as mind:
        mind._models[("fake/tools", None)] = ToolModel()
        asked = mind.turn(QUESTION, model="fake/tools", tools=[WEATHER], tool_choice="auto")
        assert asked.tool_calls is not None
        call = asked.tool_calls[0].model_dump()
        history = [
            {"role": "user", "content": QUESTION},
            {"role": "assistant", "content": None, "tool_calls": [call]},
        ]
        results = [{"tool_call_id": call["id"], "content": content}]
        answered = mind.turn("", model="fake/tools", history=history, tool_results=results)
    return asked.turn, answered.turn
