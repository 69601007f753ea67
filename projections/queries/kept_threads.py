"""The threads block's reads kept by a session's projector (`projections.engine.kept_reads`):
settings, liveness gaps, credited work and the live threads' rows are read once and kept until
the projector writes their tables; the time of asking is applied to them per read, in Python,
as the statements apply it in SQL (`thread_queries`), so the results are the statements'.
Anything that cannot be decided so (a time without a zone, a thread opened after the time
asked about) is read by the statement itself, as before."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import _duckdb as duckdb  # the engine without its Python layer: decisions/0026

from mindledger.domain.settings import thread_params
from mindledger.domain.tension import TensionParams
from mindledger.projections.engine.kept_reads import KeptReads
from mindledger.projections.queries.thread_queries import LIVE, ThreadReads

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MICROSECOND = timedelta(microseconds=1)
DAY_US = 24 * 3600 * 1_000_000  # the liveness rule's stretch (`thread_queries.liveness_gaps`)
SETTINGS = "SELECT key, value, position, epoch_us(time) FROM config_changes"
GAPS = (
    "SELECT epoch(gap_start), epoch(gap_end), epoch_us(gap_end) FROM liveness_gaps "
    "ORDER BY position"
)
CREDITS = (
    "SELECT stream_id, list(epoch(time) ORDER BY position), list(epoch_us(time) ORDER BY "
    "position) FROM thread_work WHERE time IS NOT NULL GROUP BY 1"
)
# Live threads that a time and position bound can select: their count and the latest of each.
BOUNDS = (
    f"SELECT count(*), epoch_us(max(opened_at)), max(opened_position) FROM threads WHERE {LIVE} "
    "AND opened_at IS NOT NULL AND opened_position IS NOT NULL"
)


def micros(at: datetime | None) -> int | None:
    """`at` as DuckDB's `epoch_us` of it (None: no time, or one without a zone, which DuckDB
    would read in its session's zone)."""
    if at is None or at.utcoffset() is None:
        return None
    return (at - EPOCH) // MICROSECOND


class KeptThreadReads(ThreadReads):
    """`ThreadReads` whose results the projector keeps (`kept`)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, kept: KeptReads) -> None:
        super().__init__(con)
        self.kept = kept
        self.bounded = False  # whether `live` found every live thread within the bounds

    def _rows(self, sql: str, tables: tuple[str, ...]) -> list[tuple[Any, ...]]:
        return self.kept.get(sql, tables, lambda: self.con.execute(sql).fetchall())

    def settings(self, as_of: datetime) -> TensionParams:
        """`settings_as_of`: each key's value at the highest position by `as_of`, as
        `arg_max(value, position)` gives it (a null value never chosen; all null: null)."""
        t = micros(as_of)
        if t is None:
            return super().settings(as_of)
        chosen: dict[Any, tuple[int, Any] | None] = {}
        for key, value, position, at in self._rows(SETTINGS, ("config_changes",)):
            if at is None or at > t:
                continue
            best = chosen.get(key)
            if value is None or position is None:
                chosen.setdefault(key, None)
            elif best is None or position > best[0]:
                chosen[key] = (position, value)
        values: dict[Any, Any] = {k: None if v is None else v[1] for k, v in chosen.items()}
        return thread_params(values)

    def known(self, as_of: datetime) -> tuple[list[tuple[float, float]], dict[str, list[float]]]:
        """The liveness gaps and credited work up to `as_of`. The statement adds the stretch
        from the last event to `as_of` when it is over a day: never when the read model's last
        event is at most a day before `as_of` (the latest event by then is no earlier), else the
        statement decides."""
        t, last = micros(as_of), micros(self.kept.last_event())
        if t is None or last is None or not 0 <= t - last <= DAY_US:
            return super().known(as_of)
        gaps = [
            (float(a), float(b))
            for a, b, end in self._rows(GAPS, ("liveness_gaps",))
            if end is not None and end <= t
        ]
        every, latest, times = self.kept.get(CREDITS, ("thread_work",), self._credits)
        if latest is None or latest <= t:  # a turn's case: all of it (kept, never changed)
            return gaps, every
        credits: dict[str, list[float]] = {}
        for stream, (seconds, at) in times.items():
            done = [s for s, u in zip(seconds, at, strict=True) if u <= t]
            if done:
                credits[stream] = done
        return gaps, credits

    def _credits(
        self,
    ) -> tuple[dict[str, list[float]], int | None, dict[str, tuple[list[float], list[int]]]]:
        """Every thread's credited work (POSIX seconds), the latest credit's `epoch_us`, and
        each thread's credits in both units."""
        times = {s: (seconds, at) for s, seconds, at in self.con.execute(CREDITS).fetchall()}
        latest = max((max(at) for _, at in times.values()), default=None)
        return {s: seconds for s, (seconds, _) in times.items()}, latest, times

    def live(self, as_of: datetime, limit: int) -> tuple[int, datetime, int]:
        """When every live thread was opened by `as_of` and up to `limit` (a turn's case: the
        bounds then select the same rows), the kept count and the bounds, so that the
        statements selecting by them are kept too (`fetch`); else the statement's count."""
        t = micros(as_of)
        ((count, newest, last),) = self._rows(BOUNDS, ("threads",))
        if t is None or (count and (newest > t or last > limit)):
            return super().live(as_of, limit)
        self.bounded = True
        if not count:
            return 0, as_of, limit
        return int(count), EPOCH + newest * MICROSECOND, int(last)

    def fetch(self, sql: str, args: list[Any]) -> list[tuple[Any, ...]]:
        """The rows of `sql` with `args`, kept while the threads are unchanged when they were
        selected by the kept bounds (`live`)."""
        if not self.bounded:
            return super().fetch(sql, args)
        key = (sql, *(tuple(a) if isinstance(a, list) else a for a in args))
        return self.kept.get(key, ("threads",), lambda: ThreadReads.fetch(self, sql, args))
