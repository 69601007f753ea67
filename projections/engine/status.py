"""What `mind status` says about the read models."""

from __future__ import annotations

from typing import Any

from projections.engine.readmodel import ReadModelPaths, read_position


def projection_status(paths: ReadModelPaths, head: int) -> list[dict[str, Any]]:
    """Each projection's position and lag behind the ledger head (as readers see it)."""
    position = read_position(paths)
    return [{"name": "main", "position": position, "lag": max(head - position, 0)}]
