"""Ledger backends for contract tests: SQLite always, PostgreSQL with MIND_TEST_POSTGRES_DSN."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from mindledger.compose import Home

POSTGRES_DSN = os.environ.get("MIND_TEST_POSTGRES_DSN", "")

needs_postgres = pytest.mark.skipif(
    not POSTGRES_DSN, reason="set MIND_TEST_POSTGRES_DSN (`.ci/run` starts a server)"
)


@contextmanager
def postgres_schema() -> Iterator[str]:
    """A fresh schema for one test, dropped afterwards."""
    import psycopg

    schema = "t_" + uuid.uuid4().hex[:12]
    with psycopg.connect(POSTGRES_DSN, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield schema
    finally:
        with psycopg.connect(POSTGRES_DSN, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


@contextmanager
def backend_home(kind: str, folder: Path) -> Iterator[Home]:
    """A home whose ledger lives in SQLite or in a fresh PostgreSQL schema."""
    if kind == "sqlite":
        yield Home(folder)
        return
    with postgres_schema() as schema:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.json").write_text(
            json.dumps(
                {"backend": "postgres", "postgres_dsn": POSTGRES_DSN, "postgres_schema": schema}
            )
        )
        yield Home(folder)


BACKENDS = [pytest.param("sqlite"), pytest.param("postgres", marks=needs_postgres)]


@contextmanager
def mind_with_a_commitment(kind: str, folder: Path) -> Iterator[Home]:
    """A home on backend `kind` with an initialised mind and one open commitment."""
    from contextlib import closing

    from mindledger.compose import open_mind, open_reader

    with backend_home(kind, folder) as h:
        app = open_mind(h, create=True)
        with closing(open_reader(h)) as reader:
            app.init("Echo", reader.meta()[0])
        app.open_commitment("Water the plants")
        app.close()
        yield h
