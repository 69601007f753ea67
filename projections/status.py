"""What `mind status` says about the read models."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from projections.readmodel import published_position


def projection_status(published: Path, head: int) -> list[dict[str, Any]]:
    """Each projection's position and lag behind the ledger head (as readers see it)."""
    position = published_position(published)
    return [{"name": "main", "position": position, "lag": max(head - position, 0)}]
