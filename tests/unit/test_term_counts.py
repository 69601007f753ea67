"""The indexer's term counts, with its cache of seen words, count as the plain tokenizer does."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from mindledger.projections.retrieval import text_index
from mindledger.projections.retrieval.text_index import term_counts, terms

WORDS = st.sampled_from(
    ["The", "painting", "paints", "cities", "a", "I", "x", "2024", "glass", "walked", "ok", "é"]
)
TEXTS = st.lists(st.one_of(WORDS, st.text(max_size=12)), max_size=30).map(" ".join)


@settings(max_examples=200)
@given(texts=st.lists(TEXTS, min_size=1, max_size=5))
def test_term_counts_are_the_terms_counted_in_order_of_first_appearance(texts: list[str]) -> None:
    for text in texts:
        counts = term_counts(text)
        assert counts == Counter(terms(text))
        assert list(counts) == list(Counter(terms(text)))  # the order postings are written in


def test_a_full_cache_starts_again_and_still_counts_alike(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(text_index, "SEEN_WORDS", 3)
    text = "painting paints the cities walked glass glass 2024 a x"
    for _ in range(3):
        assert term_counts(text) == Counter(terms(text))
    assert len(text_index._SEEN) <= 3 + len(text.split())
