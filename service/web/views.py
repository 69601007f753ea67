"""The `/ui/api` reads: each parses its request's query string and path, calls one of the
floor's web reads (mindledger/web_reads.py) and returns its JSON-ready answer."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from starlette.requests import Request

from mindledger.domain.errors import InvalidInputError
from mindledger.web_reads import WebReads


def _int(request: Request, key: str, default: int | None, low: int = 1) -> int | None:
    value = request.query_params.get(key)
    if value in (None, ""):
        return default
    try:
        number = int(value)
    except ValueError:
        raise InvalidInputError(f"{key} must be a whole number, not {value!r}") from None
    if number < low:
        raise InvalidInputError(f"{key} must be at least {low}")
    return number


def _time(request: Request, key: str) -> datetime | None:
    value = request.query_params.get(key)
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInputError(f"{key} must be an ISO time, not {value!r}") from None


def turns(reads: WebReads, request: Request) -> Any:
    """The latest turns, for the chat view (`limit`, at most 200; `before` a position)."""
    limit = min(_int(request, "limit", 20) or 20, 200)
    return reads.turns(limit, _int(request, "before", None))


def turn(reads: WebReads, request: Request) -> Any:
    """One turn in detail."""
    return reads.turn(request.path_params["turn"])


def events(reads: WebReads, request: Request) -> Any:
    """The event timeline (`kind`, `aggregate`, `since`, `until`, `q`, `before`, `limit`)."""
    q = request.query_params
    return reads.events(
        kind=q.get("kind") or None,
        aggregate=q.get("aggregate") or None,
        since=_time(request, "since"),
        until=_time(request, "until"),
        search=q.get("q") or None,
        before=_int(request, "before", None),
        limit=_int(request, "limit", 100) or 100,
    )


def commitments(reads: WebReads, request: Request) -> Any:
    """Open or closed commitments (`status`, `limit` at most 1000)."""
    limit = min(_int(request, "limit", 200) or 200, 1000)
    return reads.commitments(request.query_params.get("status", "open"), limit)


def threads(reads: WebReads, request: Request) -> Any:
    """The tensest threads (`all=1` with the resolved ones, `limit` at most 1000)."""
    limit = min(_int(request, "limit", 100) or 100, 1000)
    include = request.query_params.get("all") in ("1", "true")
    return reads.threads(include, limit)


def concepts(reads: WebReads, request: Request) -> Any:
    """Concepts and their relations (`limit` at most 2000, `edges` at most 2000)."""
    limit = min(_int(request, "limit", 200) or 200, 2000)
    return reads.concepts(limit, min(_int(request, "edges", 300) or 300, 2000))


def tension(reads: WebReads, request: Request) -> Any:
    """Tension over time of the threads named by `thread` (at most 100)."""
    streams = [s for s in request.query_params.getlist("thread") if s][:100]
    return reads.tension(streams)


def concept_versions(reads: WebReads, request: Request) -> Any:
    """Every recorded change to one concept."""
    return reads.concept_versions(request.path_params["token"])


def features(reads: WebReads, request: Request) -> Any:
    """What the page may offer, and the budget rule its forms follow."""
    return reads.features()


def knowledge(reads: WebReads, request: Request) -> Any:
    """The knowledge tables."""
    return reads.knowledge()
