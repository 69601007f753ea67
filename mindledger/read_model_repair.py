"""A damaged read model is rebuilt, not reported as a crash.

The read models are derived from the ledger, so flipped bytes, a file cut short or an empty
file in `readmodel.duckdb` (or its published copy) lose nothing: the floor rebuilds them from
the ledger (`mind replay --swap`'s use case, which first checks that the ledger verifies), says
so in one warning line, and then runs a read again. A command that writes is not run twice (a
turn would be a second turn): it stops with one line saying the read model was rebuilt and how
to see what, if anything, it recorded.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from mindledger.domain.errors import ReadModelCorruptError, cause_line
from mindledger.notices import warn

if TYPE_CHECKING:
    from mindledger.compose import Home

T = TypeVar("T")

# The floor's methods that write nothing to the ledger: run again once the read model is
# rebuilt (an export writes only its own files, replaced whole).
READS = frozenset(
    {
        "recall",
        "commitments",
        "threads",
        "concepts",
        "identity",
        "status",
        "log",
        "turn_prompt",
        "query",
        "events_after",
        "report",
        "graph_stats",
        "graph_neighbors",
        "model",
        "export",
        "knowledge",
        "knowledge_item",
        "verify",
        "export_tables",
        "report_table",
        "report_png",
        "report_file",
        "query_table",
        "graph_text",
        "export_graph",
        "thread_metrics",
        "thread_triage",
        "turn_events",
    }
)


# Methods that are not use cases over the read model, or that rebuild it themselves.
UNGUARDED = frozenset(
    {
        "close",
        "warm",
        "model_for",
        "owner_write",
        "replay",
        "project",
        "follow",
        "forget",
        "interrupt_own_turns",  # a stopping server's last write: no time for a repair
    }
)

C = TypeVar("C", bound=type)


def repaired_methods(cls: C) -> C:
    """Guard every public method of `cls` (its own and inherited) with `repairing`."""
    for name in dir(cls):
        member = inspect.getattr_static(cls, name)
        if name.startswith("_") or name in UNGUARDED or not inspect.isfunction(member):
            continue
        setattr(cls, name, _guarded(name, member))
    return cls


def _guarded(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        return repairing(self.home, name, lambda: fn(self, *args, **kwargs))

    return call


def _cause(e: BaseException) -> str:
    if isinstance(e, ReadModelCorruptError):  # its own words already say what to run
        return "not a DuckDB database file"
    return cause_line(e, named=False)


def repairing(home: Home, name: str, call: Callable[[], T]) -> T:
    """`call()`; if it meets a damaged read model, rebuild it and run a read again once."""
    try:
        return call()
    except Exception as e:
        # Imported only on a failure: DuckDB must not load for a use case that never reads.
        from mindledger.projections.engine.duckdb_files import damaged

        if not damaged(e):
            raise
        cause = _cause(e)
    applied = rebuild(home, cause)
    if name in READS:
        return call()
    raise ReadModelCorruptError(
        f"the read model was damaged ({cause}) and is rebuilt from the ledger ({applied} "
        f"events); {name} did not finish: `mind log` shows what it recorded, then run it again"
    )


def rebuild(home: Home, cause: str) -> int:
    """Replace the read model by one rebuilt from the ledger; the events applied.
    ReadModelCorruptError, before any warning, when this process cannot write the home."""
    from mindledger.compose import read_model_paths
    from mindledger.projection import replay
    from mindledger.projections.engine.read_only_home import writable

    if not writable(home.path, read_model_paths(home).working):
        # Warning "rebuilding it", then failing, said two contrary things: say the one true.
        raise ReadModelCorruptError(
            f"the read model is damaged ({cause}) and this process cannot write {home.path} "
            "to rebuild it (a read-only home): run `mind replay --swap` where it can be written"
        )
    warn(
        f"the read model is damaged ({cause}); rebuilding it from the ledger (it is derived "
        "from it: nothing is lost)"
    )
    applied: int = replay(home, swap=True)["applied"]
    return applied
