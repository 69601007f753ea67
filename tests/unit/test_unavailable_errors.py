"""A PostgreSQL session refused or ended (a restart) is "unavailable" at the HTTP boundary:
503 with Retry-After, which clients retry, not a 500 (found: a served mind answered one request
500 while PostgreSQL was shutting down)."""

from __future__ import annotations

import json

import psycopg
from eventsourcing.persistence import OperationalError

from mindledger.error_report import was_unavailable
from mindledger.service.errors import internal_error_response


def _ended() -> psycopg.OperationalError:
    return psycopg.errors.AdminShutdown("FATAL: the database system is shutting down")


def test_a_session_postgres_ended_is_unavailable_through_the_librarys_wrapper_too() -> None:
    wrapped = OperationalError("the recorder could not insert")
    wrapped.__cause__ = _ended()

    assert was_unavailable(_ended())
    assert was_unavailable(wrapped)
    assert not was_unavailable(ValueError("a bug"))
    assert not was_unavailable(OperationalError("no such table: events"))  # SQLite's own


def test_the_server_answers_503_with_retry_after_not_500() -> None:
    response = internal_error_response(_ended(), secrets=[])
    body = json.loads(bytes(response.body))

    assert response.status_code == 503
    assert response.headers["Retry-After"] == "1"
    assert body["error"]["code"] == "unavailable"
    assert "\n" not in body["error"]["message"]
