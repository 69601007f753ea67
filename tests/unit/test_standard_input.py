"""`mind turn -` reads standard input the same in-process and through a server: a UTF-8
byte-order mark is not part of the text, newlines are as in any text file."""

from __future__ import annotations

import pytest

from mindledger.cli.standard_input import decoded


@pytest.mark.parametrize("encoding", ["utf-8", "UTF-8", "utf8", None])
def test_a_utf8_byte_order_mark_is_dropped(encoding: str | None) -> None:
    assert decoded(b"\xef\xbb\xbfI like tea\r\n", encoding) == "I like tea\n"


def test_a_byte_order_mark_after_the_start_is_text() -> None:
    assert decoded("tea \ufeff".encode(), "utf-8") == "tea \ufeff"


def test_another_encoding_reads_the_bytes_as_it_says() -> None:
    assert decoded(b"\xef\xbb\xbfcaf\xe9", "latin-1") == "\xef\xbb\xbfcaf\xe9"


def test_bytes_that_are_not_utf8_fail_strictly() -> None:
    with pytest.raises(UnicodeDecodeError):
        decoded(b"caf\xe9", "utf-8")
