"""What the vector projection's tests share: a mind whose turns say given lines (mock replies),
and a spy on every text the offline model is asked to embed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import mindledger
from mindledger.adapters import minilm

NOW = "2026-05-01T09:00:00Z"


def mind_saying(
    tmp_path: Path, lines: list[str], turns: list[str]
) -> Iterator[mindledger.MindLedger]:
    """A new mind at `tmp_path/mind` with one turn per line (their ids appended to `turns`)."""
    home = tmp_path / "mind"
    mindledger.init(home, name="Echo", now=NOW)
    with mindledger.open(home, now=NOW) as opened:
        for line in lines:
            turns.append(opened.turn(line, model="mock", mock_reply="Noted.").turn)
        yield opened


def spy_on_encode(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every text the offline model is asked to embed from now on in this test."""
    seen: list[str] = []
    real = minilm.MiniLM.encode

    def spy(self: minilm.MiniLM, texts: list[str], normalise: bool = True) -> Any:
        seen.extend(texts)
        return real(self, texts, normalise)

    monkeypatch.setattr(minilm.MiniLM, "encode", spy)
    return seen
