"""A batch of documents tokenised at once, in Arrow and numpy: the postings a catch-up writes.

The same terms, counts and order as `text_index.term_counts` document by document (a test
compares them), for a bulk batch: lowercasing and splitting run over the batch's texts in one
call each, and only the batch's distinct words go through the stop list and the stemmer (the
word cache of `text_index`). One document at a time, tokenising was a tenth of a catch-up.
pyarrow and numpy are imported here on first use: a turn's few documents never come here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mindledger.projections.retrieval.text_index import word_terms

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import pyarrow as pa

# Python's str.lower() turns U+0130 (I with a dot) into "i" and a combining dot, Arrow's into
# "i" alone: spelled Python's way first, every code point gives the words it gives in Python.
_DOTTED_I = "\u0130"


class Postings:
    """A batch's postings as columns: for each (document, term) in order of first appearance,
    the document's index in the batch, the term and its count; and each document's length
    (its terms counted with repeats)."""

    def __init__(
        self,
        doc: npt.NDArray[np.int64],
        terms: pa.Array,
        tf: npt.NDArray[np.int64],
        lengths: npt.NDArray[np.int64],
        counts: dict[str, int],
    ) -> None:
        self.doc, self.terms, self.tf, self.lengths = doc, terms, tf, lengths
        self.counts = counts  # documents per term (a term is posted once per document)


def postings(texts: list[str]) -> Postings:
    """The postings of `texts` (as `term_counts` of each, in order)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    text = pa.array(texts, pa.string())
    if any(_DOTTED_I in t for t in texts):
        text = pc.replace_substring(text, _DOTTED_I, "i\u0307")
    words = pc.split_pattern_regex(pc.utf8_lower(text), "[^a-z0-9]+")
    parents = pc.list_parent_indices(words).to_numpy()
    encoded: Any = pc.list_flatten(words).dictionary_encode()
    distinct: list[str] = encoded.dictionary.to_pylist()
    # Each distinct word's term, as an index into the batch's distinct terms (-1: none).
    term_ids: dict[str, int] = {}
    of_word = np.fromiter(
        (term_ids.setdefault(t, len(term_ids)) if t else -1 for t in word_terms(distinct)),
        dtype=np.int64,
        count=len(distinct),
    )
    term = of_word[encoded.indices.to_numpy()]
    kept = term >= 0
    doc, term = parents[kept].astype(np.int64), term[kept]
    width = max(len(term_ids), 1)
    # One key per (document, term); sorted back into the order each pair first appears.
    pairs, first, tf = np.unique(doc * width + term, return_index=True, return_counts=True)
    order = np.argsort(first, kind="stable")
    pairs, tf = pairs[order], tf[order]
    pair_doc, pair_term = pairs // width, pairs % width
    per_term = np.bincount(pair_term, minlength=len(term_ids))
    names = list(term_ids)
    return Postings(
        pair_doc,
        pa.array(names, pa.string()).take(pa.array(pair_term)),
        tf.astype(np.int64),
        np.bincount(doc, minlength=len(texts)).astype(np.int64),
        {names[i]: int(n) for i, n in enumerate(per_term.tolist()) if n},
    )
