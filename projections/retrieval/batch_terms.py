"""A batch of documents tokenised at once, in Arrow and numpy: the postings a catch-up writes.

The same terms, counts and order as `text_index.term_counts` document by document (a test
compares them), for a bulk batch: lowercasing and splitting run over the batch's texts in one
call each, and the batch's distinct words go through the stop list and the stemmer as Arrow
arrays too (`word_terms`). One document at a time, tokenising was a tenth of a catch-up.
pyarrow and numpy are imported here on first use: a turn's few documents never come here.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from mindledger.projections.retrieval.text_index import STOP

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
    if pc.any(pc.match_substring(text, _DOTTED_I)).as_py():
        text = pc.replace_substring(text, _DOTTED_I, "i\u0307")
    words = pc.ascii_split_whitespace(_spaced(pc.utf8_lower(text)))
    parents = pc.list_parent_indices(words).to_numpy()
    encoded: Any = pc.list_flatten(words).dictionary_encode()
    # Each distinct word's term, as an index into the batch's distinct terms in order of first
    # appearance (-1: none), all in Arrow: a Python step a distinct word was half of tokenising
    # a batch of mostly distinct words (numbers, names).
    terms = word_terms(encoded.dictionary)
    kept_word = pc.not_equal(terms, "")
    found: Any = pc.filter(terms, kept_word).dictionary_encode()
    of_word = np.full(len(terms), -1, dtype=np.int64)
    of_word[kept_word.to_numpy(zero_copy_only=False)] = found.indices.to_numpy()
    term = of_word[encoded.indices.to_numpy()]
    kept = term >= 0
    doc, term = parents[kept].astype(np.int64), term[kept]
    width = max(len(found.dictionary), 1)
    # One key per (document, term); sorted back into the order each pair first appears.
    pairs, first, tf = np.unique(doc * width + term, return_index=True, return_counts=True)
    order = np.argsort(first, kind="stable")
    pairs, tf = pairs[order], tf[order]
    pair_doc, pair_term = pairs // width, pairs % width
    per_term = np.bincount(pair_term, minlength=len(found.dictionary))
    # Every distinct term is posted at least once (it comes from a kept word).
    return Postings(
        pair_doc,
        found.dictionary.take(pa.array(pair_term)),
        tf.astype(np.int64),
        np.bincount(doc, minlength=len(texts)).astype(np.int64),
        dict(zip(found.dictionary.to_pylist(), per_term.tolist(), strict=True)),
    )


def _spaced(text: pa.Array) -> pa.Array:
    """`text` with every byte but a-z and 0-9 a space: splitting it at whitespace gives the words
    of `text_index._WORD` (a character outside ASCII is all bytes above 127), a quarter of the
    time of splitting at the pattern. The offsets stay; the bytes are ASCII, so valid UTF-8."""
    import numpy as np
    import pyarrow as pa

    validity, offsets, data = text.buffers()
    if data is None:  # no characters at all
        return text
    kept = _word_bytes()[np.frombuffer(data, dtype=np.uint8)]
    return pa.StringArray.from_buffers(
        len(text), offsets, pa.py_buffer(kept), validity, text.null_count, text.offset
    )


def word_terms(words: pa.Array) -> pa.Array:
    """The term each word gives ("" for a stop word or a single letter), as `text_index`'s
    stop list and `stem` give it, for words of [a-z0-9]+ (ASCII: a character is a byte)."""
    import pyarrow.compute as pc

    size = pc.binary_length(words)

    def ends(suffix: str, longer_than: int) -> pa.Array:
        return pc.and_(pc.ends_with(words, suffix), pc.greater(size, longer_than))

    def cut(n: int) -> pa.Array:
        return pc.utf8_slice_codeunits(words, 0, -n)

    # `text_index.stem`, rule by rule (a word's last letter picks at most one of them).
    ies = ends("ies", 4)
    plural = pc.and_(pc.and_(ends("s", 3), pc.invert(ies)), pc.invert(pc.ends_with(words, "ss")))
    stemmed = pc.case_when(
        pc.make_struct(ies, plural, ends("ing", 5), ends("ed", 4)),
        pc.binary_join_element_wise(cut(3), "y", ""),
        cut(1),
        cut(3),
        cut(2),
        words,
    )
    dropped = pc.or_(pc.is_in(words, value_set=_stop_words()), pc.less(size, 2))
    return pc.if_else(dropped, "", stemmed)


@functools.cache
def _word_bytes() -> npt.NDArray[np.uint8]:
    import numpy as np

    table = np.full(256, ord(" "), dtype=np.uint8)
    for byte in b"abcdefghijklmnopqrstuvwxyz0123456789":
        table[byte] = byte
    return table


@functools.cache
def _stop_words() -> pa.Array:
    import pyarrow as pa

    return pa.array(sorted(STOP), pa.string())
