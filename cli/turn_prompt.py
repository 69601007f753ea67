"""What a turn's model was sent: `mind log --turn ID` and `/prompt` in `mind chat`.

The messages are read back from the turn's own events (`Turn.Replied` or
`Turn.GenerationFailed` record them as sent), never rebuilt: a rebuild would depend on how
memory is rendered today, not on what the model saw then.
"""

from __future__ import annotations

from typing import Any

from mindledger.cli.output import write_out
from mindledger.safe_text import for_terminal


def echo_prompt(data: dict[str, Any]) -> None:
    """The messages as a reader wants them: each role, then its content verbatim but for what a
    terminal would obey (`for_terminal`: a client's tool results and earlier messages are
    whatever it sent; `--json` gives them exactly)."""
    if data["messages"] is None:
        write_out(
            f"turn {data['turn']} ({data['status']}) has no recorded prompt: its model was "
            "never called, or it ran before prompts were recorded"
        )
        return
    write_out(for_terminal(f"turn {data['turn']} ({data['status']}, model {data['model']}):"))
    for message in data["messages"]:
        named = f" {message['tool_call_id']}" if message.get("tool_call_id") else ""
        named += f" ({message['name']})" if message.get("name") else ""  # its speaker
        write_out(for_terminal(f"--- {message['role']}{named} ---"))
        if message.get("content") is not None:
            write_out(for_terminal(message["content"]))
        for call in message.get("tool_calls") or ():
            write_out(_call_line(call))
    if data.get("tool_calls"):
        write_out("--- the reply's tool calls ---")
        for call in data["tool_calls"]:
            write_out(_call_line(call))


def _call_line(call: dict[str, Any]) -> str:
    function = call.get("function") or {}
    line = f"[tool call {call.get('id')}] {function.get('name')}({function.get('arguments')})"
    return for_terminal(line)
