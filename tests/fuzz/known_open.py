"""Inputs the fuzzers skip because another branch is fixing exactly them (issue 12).

KNOWN_OPEN names each open defect and says which inputs show it. The lead deletes an entry (and
this whole module once empty) after merging the branch that fixes it; the fuzzers then cover
those inputs again. Nothing here hides a defect of the areas the fuzz branch owns.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence


def _undecodable(text: str) -> bool:
    """Text holding surrogates: what a non-UTF-8 command-line argument becomes in Python."""
    return any("\ud800" <= ch <= "\udfff" for ch in text)


def _malformed_locomo(text: str | None) -> bool:
    """Whether a file is JSON of LoCoMo's outer shape (a list) with a sample or turn that is not
    the objects and strings the importer indexes into."""
    try:
        data = json.loads((text or "").encode("latin-1"))
    except ValueError:
        return False
    if not isinstance(data, list):
        return False

    def sample_ok(sample: object) -> bool:
        if not isinstance(sample, dict):
            return False
        conv = sample.get("conversation")
        if not isinstance(conv, dict) or "sample_id" not in sample:
            return False
        if not all(isinstance(conv.get(k), str) for k in ("speaker_a", "speaker_b")):
            return False
        for key, turns in conv.items():
            if key.startswith("session_") and not key.endswith("date_time"):
                number = key.split("_")[1] if key.count("_") else ""
                if not number.isdigit() or not isinstance(conv.get(f"{key}_date_time"), str):
                    return False
                if not isinstance(turns, list) or not all(
                    isinstance(t, dict) and all(k in t for k in ("speaker", "dia_id"))
                    for t in turns
                ):
                    return False
        return True

    return not all(sample_ok(s) for s in data)


KNOWN_OPEN: dict[str, Callable[[Sequence[str], Mapping[str, str]], bool]] = {
    # boundary (import validation): a LoCoMo file of the wrong shape ([null], a conversation
    # that is no object, turns without speaker/dia_id) raises TypeError/KeyError/AttributeError.
    "locomo-wrong-shape": lambda args, env: (
        list(args[:2]) == ["import", "locomo"] and _malformed_locomo(env.get("file"))
    ),
}


def known_open(args: Sequence[str], env: Mapping[str, str] | None = None) -> str | None:
    """The name of the open defect these inputs would show, or None."""
    for name, shows in KNOWN_OPEN.items():
        if shows(args, env or {}):
            return name
    return None
