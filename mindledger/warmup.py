"""Warming what a long-lived process will need, before its first request needs it.

A server calls these once at start, in the background; a one-shot command never does (it pays
only for what it uses).
"""

from __future__ import annotations

from collections.abc import Iterable


def warm_model_client(models: Iterable[str]) -> bool:
    """Import LiteLLM (seconds) with its network look-ups off, so the first turn does not pay
    for it; not when every model named (the served minds' own) is the scripted mock, which
    needs no client. Whether it was imported."""
    from mindledger.models import MOCK, model_kind

    if all(model_kind(spec) is MOCK for spec in models):
        return False
    from mindledger.adapters.litellm_model import import_litellm

    import_litellm()
    return True
