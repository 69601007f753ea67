"""Every JSON value a model or a turn may hand us, and a value's leaves with their types (for
the tests that hold orjson's spelling to the json module's: test_plain_json.py,
test_json_columns.py)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT
)
VALUES = st.recursive(
    LEAVES,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=25,
)


def typed(value: Any) -> Any:
    """`value` with each leaf's type beside it (1 and 1.0, and True and 1, compare unequal)."""
    if isinstance(value, dict):
        return {k: typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [typed(v) for v in value]
    return (type(value).__name__, value)
