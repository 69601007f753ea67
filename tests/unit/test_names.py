"""Concepts named in a text: whole-word runs, not substrings."""

from __future__ import annotations

import pytest

from mindledger.projections.retrieval.names import keys_in, name_key


@pytest.mark.parametrize(
    ("name", "text", "named"),
    [
        ("billing rewrite", "How is the Billing Rewrite going?", True),
        ("project.alpha", "status of project.alpha, please", True),
        ("project.alpha", "what is project.alpha's deadline", True),
        ("Mr. Smith", "Did mr smith call?", True),
        ("cat", "concatenate these files", False),
        ("topic.n5", "topic.n55 is different", False),
        ("billing rewrite", "the billing team will rewrite it", False),
    ],
)
def test_a_name_is_named_by_a_run_of_whole_words(name: str, text: str, named: bool) -> None:
    assert (name_key(name) in keys_in(text)) is named


def test_runs_are_bounded_in_length() -> None:
    text = " ".join(f"w{i}" for i in range(20))

    assert "w0 w1 w2 w3 w4 w5 w6 w7" in keys_in(text)
    assert "w0 w1 w2 w3 w4 w5 w6 w7 w8" not in keys_in(text)


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("topic.n5", "topic.n5"),
        ("Project.Alpha", "project.alpha"),
        ('"Quoted."', "quoted"),
        ("  padded\t", "padded"),
        ("(...)", ""),
        ("", ""),
        ("Mr. Smith", "mr smith"),
        ("a ... b", "a b"),
        ("\u0130stanbul", "\u0130stanbul".lower()),
    ],
)
def test_a_name_key_is_its_words_lowercased_without_edge_punctuation(name: str, key: str) -> None:
    assert name_key(name) == key
