"""The identity read from its rows (`mindledger.identity_view`, for status and recall) is the
identity the application rebuilds."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from mindledger.compose import Home, identity_of
from mindledger.domain.errors import NotInitialisedError
from mindledger.domain.identity import DEFAULT_MODEL, IDENTITY_ID
from mindledger.identity_view import DEFAULT_MODEL as VIEW_DEFAULT_MODEL
from mindledger.identity_view import IDENTITY_STREAM, identity_view
from tests.conftest import Result


def test_the_view_names_the_identitys_stream_and_default_model() -> None:
    assert IDENTITY_ID.hex == IDENTITY_STREAM
    assert VIEW_DEFAULT_MODEL == DEFAULT_MODEL


def test_a_renamed_reconfigured_mind_reads_the_same_as_the_application_rebuilds_it(
    cli: Callable[..., Result], mind_home: Path
) -> None:
    for args in (
        ("identity", "adopt", "Juniper", "--reason", "a quieter name"),
        ("model", "set", "mock"),
        ("config", "set", "embedding.recall", "on"),
        ("config", "set", "embedding.recall", "off"),
        ("config", "set", "threads.top_k", "3"),
    ):
        assert cli(*args).exit_code == 0, args
    home = Home.from_option(mind_home, "--home")

    view, rebuilt = identity_view(home), identity_of(home)

    assert (view.name, view.model, view.config) == (rebuilt.name, rebuilt.model, rebuilt.config)
    assert (view.name, view.model) == ("Juniper", "mock")
    assert view.config["embedding.recall"] == "off"


def test_an_empty_home_is_not_initialised(tmp_path: Path) -> None:
    with pytest.raises(NotInitialisedError):
        identity_view(Home.from_option(tmp_path / "nothing", "--home"))
