"""The check of the library's settings: every setting the installed eventsourcing reads is
classified (refused, the mind's own, or allowed), and any environment is refused exactly when it
holds one that would bypass the chain, in one line naming it."""

from __future__ import annotations

import pytest
from eventsourcing.application import Application
from eventsourcing.cipher import AESCipher
from eventsourcing.postgres import PostgresFactory
from eventsourcing.sqlite import SQLiteFactory
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mindledger.adapters.library_settings import (
    ALLOWED,
    OWN,
    PREFIX,
    REFUSED,
    refuse_library_settings,
)
from mindledger.domain.errors import InvalidInputError


def library_setting_names() -> set[str]:
    """The names the installed library reads settings under (its upper-case constants)."""
    names = set()
    for cls in (SQLiteFactory, PostgresFactory, Application, AESCipher):
        for attribute in dir(cls):
            value = getattr(cls, attribute)
            if attribute.isupper() and isinstance(value, str):
                names.add(value)
    return names


def test_every_setting_the_library_reads_is_classified() -> None:
    classified = {*REFUSED, *OWN, *ALLOWED}

    assert library_setting_names() - classified == set()
    assert not set(REFUSED) & {*OWN, *ALLOWED}


def is_refused(name: str) -> bool:
    bare = name.removeprefix(PREFIX)
    return bare in REFUSED or (name != bare and bare in OWN)


NAMES = st.one_of(
    st.sampled_from(sorted({*REFUSED, *OWN, *ALLOWED})),
    st.sampled_from(sorted({*REFUSED, *OWN, *ALLOWED})).map(lambda n: PREFIX + n),
    st.sampled_from(["MIND_HOME", "MIND_BACKEND", "MIND_POSTGRES_DSN", "PATH", "HOME"]),
    st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=30),
)


@given(st.dictionaries(NAMES, st.text(max_size=20), max_size=8))
@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])  # a busy machine
def test_an_environment_is_refused_exactly_when_it_holds_a_refused_name(
    environ: dict[str, str],
) -> None:
    refused = sorted(n for n in environ if is_refused(n))

    if not refused:
        refuse_library_settings(environ)
        return
    with pytest.raises(InvalidInputError) as caught:
        refuse_library_settings(environ)
    message = str(caught.value)
    assert message.startswith(f"{refused[0]} is set: ")
    assert "\n" not in message


def test_the_minds_own_settings_and_unprefixed_own_names_pass() -> None:
    environ = {
        "MIND_POSTGRES_SCHEMA": "minds",
        "MIND_MASTER_KEY": "k",
        "PERSISTENCE_MODULE": "eventsourcing.popo",  # the mind's own value wins over it
        "SQLITE_DBNAME": ":memory:",
    }

    refuse_library_settings(environ)
