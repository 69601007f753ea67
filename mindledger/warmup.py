"""Warming what a long-lived process will need, before its first request needs it.

A server calls these once at start, in the background; a one-shot command never does (it pays
only for what it uses).
"""

from __future__ import annotations


def warm_model_client() -> None:
    """Import LiteLLM (seconds) with its network look-ups off, so the first turn does not pay
    for it."""
    from mindledger.adapters.litellm_model import import_litellm

    import_litellm()
