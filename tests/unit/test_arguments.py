"""The one check of command-line text: undecodable bytes are found and named, nothing else is."""

from __future__ import annotations

import click
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mindledger.cli.arguments import check_arguments, undecodable_part
from mindledger.domain.errors import InvalidInputError

valid_text = st.text(st.characters(blacklist_categories=["Cs"]))


@given(valid_text)
def test_text_that_is_all_utf8_passes(text: str) -> None:
    assert undecodable_part(text) is None


@given(valid_text, st.integers(0x80, 0xFF), valid_text)
def test_a_surrogate_escaped_byte_is_named(before: str, byte: int, after: str) -> None:
    text = before + chr(0xDC00 + byte) + after

    assert undecodable_part(text) == f"byte 0x{byte:02X}"


def test_paths_are_left_to_the_filesystem_and_texts_are_checked() -> None:
    command = click.Command(
        "probe",
        params=[
            click.Argument(["target"], type=click.Path()),
            click.Option(["--label"], multiple=True),
        ],
    )

    check_arguments(command, {"target": "caf\udce9.txt", "label": ("fine",)})
    with pytest.raises(InvalidInputError, match=r"option --label .*byte 0xE9"):
        check_arguments(command, {"target": "x", "label": ("fine", "caf\udce9")})
