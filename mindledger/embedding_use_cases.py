"""The floor's embeddings: texts -> vectors by the mind's configured embedding model
(`embedding.model`: the offline all-MiniLM-L6-v2 by default, or a hosted model through
LiteLLM), as `POST /v1/embeddings` serves them.

Nothing is recorded and nothing is cached: a caller's texts are not the mind's memory. (The
embeddings cache keeps vectors of what the ledger holds, which `forget` can find and delete; a
caller's texts it could not.) A text the offline model would cut (over its 256 tokens) is
refused, never embedded in part."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mindledger.checked import checked_methods
from mindledger.compose import Home
from mindledger.domain.errors import InvalidInputError, UnavailableError

if TYPE_CHECKING:
    from mindledger.results import EmbeddingsResult

MAX_TEXTS = 2048  # texts per call, as OpenAI's embeddings endpoint takes at most


@checked_methods
class EmbeddingCommands:
    """Embed texts."""

    home: Home

    def embed(self, texts: list[str], dimensions: int | None = None) -> EmbeddingsResult:
        """The vectors of `texts` (one per text, in order) by the mind's embedding model;
        `dimensions`, when given, must be the model's (a vector is never cut to fit).
        InvalidInputError naming `texts[i]` for an empty text or one the model would cut;
        UnavailableError when the model is off or its weights are not installed."""
        from mindledger.domain.settings import (
            DEFAULT_EMBEDDING_MODEL,
            EMBEDDING_API_BASE,
            EMBEDDING_MODEL,
        )
        from mindledger.identity_view import identity_view
        from mindledger.results import EmbeddingsResult

        _check_texts(texts)
        config = identity_view(self.home).config
        model = config.get(EMBEDDING_MODEL, DEFAULT_EMBEDDING_MODEL)
        if model == "off":
            raise UnavailableError(
                "this mind's embedding model is off (embedding.model off); to turn it on: "
                f"mind config set embedding.model {DEFAULT_EMBEDDING_MODEL}"
            )
        if model.startswith("local/"):
            vectors, tokens = _offline(model, texts, dimensions)
        else:
            from mindledger.adapters.embeddings import provider_vectors

            base = config.get(EMBEDDING_API_BASE, "off")
            vectors, tokens = provider_vectors(model, texts, None if base == "off" else base)
        size = len(vectors[0])
        _check_dimensions(dimensions, size)
        return EmbeddingsResult(model=model, dimensions=size, vectors=vectors, tokens=tokens)


def _check_texts(texts: list[str]) -> None:
    if not texts:
        raise InvalidInputError("give at least one text to embed", param="texts")
    if len(texts) > MAX_TEXTS:
        raise InvalidInputError(
            f"{len(texts)} texts: at most {MAX_TEXTS} per call; send them in parts",
            param="texts",
        )
    for n, text in enumerate(texts):
        if not text.strip():
            raise InvalidInputError(f"texts[{n}] is empty; give some text", param=f"texts[{n}]")


def _check_dimensions(dimensions: int | None, size: int) -> None:
    if dimensions is not None and dimensions != size:
        raise InvalidInputError(
            f"dimensions {dimensions}: this mind's embedding model gives {size}-dimensional "
            "vectors (leave dimensions out, or give that)",
            param="dimensions",
        )


def _offline(model: str, texts: list[str], dimensions: int | None) -> tuple[list[list[float]], int]:
    """The offline model's vectors and tokens; refused before any work when it is not
    installed, a text is too long, or `dimensions` is not its own."""
    from mindledger.adapters.embeddings import local_token_counts, local_vectors
    from mindledger.adapters.minilm import (
        DIMENSIONS,
        MAX_TOKENS,
        EmbeddingModelMissingError,
        offline_model_present,
    )
    from mindledger.adapters.minilm_package import INSTALL, NOT_INSTALLED, package_state

    if not offline_model_present():
        why = package_state()[1]
        said = "is not installed" if why in ("", NOT_INSTALLED) else f"cannot be loaded ({why})"
        raise EmbeddingModelMissingError(
            f"the offline embedding model ({model}) {said}: {INSTALL} "
            "(or a hosted model: mind config set embedding.model PROVIDER/MODEL)"
        )
    _check_dimensions(dimensions, DIMENSIONS)
    counts = local_token_counts(texts)
    for n, count in enumerate(counts):
        if count is None:
            raise InvalidInputError(
                f"texts[{n}] is longer than the {MAX_TOKENS} tokens {model} reads; split it "
                "into shorter texts",
                param=f"texts[{n}]",
            )
    return local_vectors(model, texts), sum(c or 0 for c in counts)
