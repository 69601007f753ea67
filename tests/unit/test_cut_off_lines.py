"""Which control line a cut-off reply stops in the middle of."""

from __future__ import annotations

import pytest

from mindledger.domain.control_lines import split_reply
from mindledger.domain.turn_effects import unfinished_line


@pytest.mark.parametrize(
    ("reply", "unfinished"),
    [
        ("Sure.\nCOMMIT: call Ad", "COMMIT: call Ad"),
        ("COMMIT: call Ada\n", None),  # the newline shows the line was finished
        ("COMMIT: call Ada\nand then I will wr", None),  # plain text was cut, not the line
        ("Just text, cut mid-wor", None),
        ("", None),
        ("REFLECT: the user likes te", "REFLECT: the user likes te"),
    ],
)
def test_only_a_control_line_without_its_newline_at_the_end_is_unfinished(
    reply: str, unfinished: str | None
) -> None:
    _, lines = split_reply(reply)

    line = unfinished_line(reply, lines)

    assert (line.raw if line else None) == unfinished
