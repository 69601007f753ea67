"""The read model's two declarations agree, and every event type has exactly one handler."""

from __future__ import annotations

import importlib
import pkgutil

import duckdb
import pytest

from mindledger import domain
from mindledger.domain.events import EVENT_TYPES
from mindledger.projections.engine.registry import HANDLERS
from mindledger.projections.engine.schema import ARROW, TABLES

# Tables written only by SQL statements of the projector (one row of totals, kept counts),
# never from Arrow batches: they have no Arrow schema on purpose.
SQL_ONLY = {"tracking", "term_counts"}


def every_event_type() -> set[str]:
    """Import every domain module, so that every event class has registered its topic."""
    for module in pkgutil.iter_modules(domain.__path__):
        importlib.import_module(f"mindledger.domain.{module.name}")
    return set(EVENT_TYPES)


@pytest.mark.parametrize("table", sorted(set(TABLES) - SQL_ONLY))
def test_the_arrow_schema_of_a_table_is_what_its_ddl_creates(table: str) -> None:
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute(f"CREATE TABLE {table} ({TABLES[table]})")

    created = con.sql(f"SELECT * FROM {table} LIMIT 0").to_arrow_table().schema

    declared = ARROW[table]
    assert created.names == declared.names
    # A list's element field is named "l" by DuckDB and "item" by pyarrow: equals() compares
    # what matters (the value types), not that name.
    differing = [
        (name, str(a), str(b))
        for name, a, b in zip(created.names, created.types, declared.types, strict=True)
        if not a.equals(b)
    ]
    assert differing == []


def test_every_arrow_schema_names_a_declared_table() -> None:
    assert set(ARROW) == set(TABLES) - SQL_ONLY


def test_every_event_type_has_a_handler_and_every_handler_an_event_type() -> None:
    topics = every_event_type()

    assert sorted(topics - set(HANDLERS)) == []
    assert sorted(set(HANDLERS) - topics) == []
