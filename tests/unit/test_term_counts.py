"""The indexer's term counts, with its cache of seen words, count as the plain tokenizer does."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from mindledger.projections.retrieval import text_index
from mindledger.projections.retrieval.batch_terms import postings
from mindledger.projections.retrieval.text_index import term_counts, terms

# The stemmer's edges too: each rule's suffix alone, a letter too short for it, just long enough.
EDGES = ["s", "ss", "ies", "ties", "bies", "bus", "is", "ing", "sing", "kings", "bing", "ed"]
WORDS = st.sampled_from(
    [
        *["The", "painting", "paints", "cities", "a", "I", "x", "2024", "glass", "walked", "ok"],
        *["é", *EDGES, "red", "seed", "bled", "ded", "doing", "kiss", "dies"],
    ]
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


@settings(max_examples=100)
@given(texts=st.lists(st.one_of(TEXTS, st.text(max_size=40)), min_size=1, max_size=12))
def test_a_batch_tokenised_at_once_posts_what_each_document_counts(texts: list[str]) -> None:
    """Arrow's lowercasing and splitting (a catch-up's bulk batches) give each document the
    terms, counts, order and length `term_counts` gives it (any code point, U+0130 included)."""
    texts = [*texts, "\u0130stanbul ISTANBUL \u0130x \u212akelvin"]
    found = postings(texts)
    got: dict[int, dict[str, int]] = {}
    columns = (found.doc.tolist(), found.terms.to_pylist(), found.tf.tolist())
    for doc, term, tf in zip(*columns, strict=True):
        got.setdefault(doc, {})[term] = tf
    for i, text in enumerate(texts):
        expected = term_counts(text)
        assert list(got.get(i, {}).items()) == list(expected.items())
        assert found.lengths[i] == sum(expected.values())
    assert found.counts == Counter(term for counts in got.values() for term in counts)
