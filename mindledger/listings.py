"""Concepts and identity: their listings, and the owner's direct commands on them (define,
alias, relate, bind, adopt a name)."""

from __future__ import annotations

from typing import Any

from mindledger.compose import Home, open_mind, read_model
from mindledger.domain.errors import InvalidInputError


def concept_listing(home: Home) -> list[dict[str, Any]]:
    """Concepts with their current definition (what `mind concepts --json` prints)."""
    from mindledger.projections.queries import listings

    with read_model(home) as con:
        rows: list[dict[str, Any]] = listings.concepts(con)
    return rows


def identity_data(home: Home) -> dict[str, Any]:
    """The mind's name, model and identity history (what `mind identity --json` prints)."""
    from mindledger.projections.queries import listings

    with read_model(home) as con:
        data: dict[str, Any] = listings.identity(con)
    return data


def define_concept(home: Home, token: str, definition: str) -> dict[str, Any]:
    """Define `token` or version its definition (what `mind concept define --json` prints)."""
    app = open_mind(home)
    try:
        version = app.define_concept(token, definition)
    finally:
        app.close()
    return {"token": token.strip().lower(), "version": version}


def alias_concept(home: Home, token: str, alias: str) -> dict[str, Any]:
    """Give `token` another name (what `mind concept alias --json` prints)."""
    app = open_mind(home)
    try:
        added = app.alias_concept(token, alias)
    finally:
        app.close()
    return {"token": token.strip().lower(), "alias": alias, "added": added}


def relate_concepts(home: Home, source: str, target: str, relation: str) -> dict[str, Any]:
    """Relate two concepts with a typed edge (what `mind concept relate --json` prints)."""
    app = open_mind(home)
    try:
        added = app.relate_concepts(source, target, relation)
    finally:
        app.close()
    return {"source": source, "target": target, "relation": relation, "added": added}


def bind_concept(
    home: Home,
    token: str,
    commitment: str | None = None,
    thread: str | None = None,
    position: int | None = None,
) -> dict[str, Any]:
    """Bind `token` to exactly one of a commitment CID, a thread id (or prefix) or a ledger
    position (what `mind concept bind --json` prints)."""
    from mindledger.domain.concept import BindingKind
    from mindledger.domain.thread import short_id
    from mindledger.threads import resolve_thread_id

    kind: BindingKind
    given = [x for x in (commitment, thread, position) if x is not None]
    if len(given) != 1:
        raise InvalidInputError(
            "give exactly one of `commitment`, `thread` or `position`", param="commitment"
        )
    app = open_mind(home)
    try:
        if commitment is not None:
            kind, target = "commitment", app.commitment(commitment).cid
        elif thread is not None:
            kind, target = "thread", short_id(resolve_thread_id(home, thread))
        else:
            if position is None or position < 1 or position > _head(home):
                raise InvalidInputError(f"there is no event at position {position}")
            kind, target = "event", str(position)
        app.bind_concept(token, kind, target)
    finally:
        app.close()
    return {"token": token, "kind": kind, "target": target}


def _head(home: Home) -> int:
    """The ledger's last position."""
    from mindledger.compose import open_reader

    reader = open_reader(home)
    try:
        head: int = reader.head()[0]
    finally:
        reader.close()
    return head


def adopt_name(home: Home, name: str, reason: str | None = None) -> dict[str, Any]:
    """Adopt `name` directly, as the owner (what `mind identity adopt --json` prints)."""
    app = open_mind(home)
    try:
        app.adopt_name(name, reason)
    finally:
        app.close()
    return {"name": name.strip(), "reason": reason}
