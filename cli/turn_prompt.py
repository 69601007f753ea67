"""What a turn's model was sent: `mind log --turn ID` and `/prompt` in `mind chat`.

The messages are read back from the turn's own events (`Turn.Replied` or
`Turn.GenerationFailed` record them as sent), never rebuilt: a rebuild would depend on how
memory is rendered today, not on what the model saw then.
"""

from __future__ import annotations

from typing import Any

import click


def echo_prompt(data: dict[str, Any]) -> None:
    """The messages as a reader wants them: each role, then its content verbatim."""
    if data["messages"] is None:
        click.echo(
            f"turn {data['turn']} ({data['status']}) has no recorded prompt: its model was "
            "never called, or it ran before prompts were recorded"
        )
        return
    click.echo(f"turn {data['turn']} ({data['status']}, model {data['model']}):")
    for message in data["messages"]:
        click.echo(f"--- {message['role']} ---")
        click.echo(message["content"])
