"""Settings and the clock as units: any value from any source is either accepted or refused with
one SettingError line; a fixed clock refuses to go before the ledger's head, and only when asked.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mindledger.domain.clock import no_earlier_than_head, parse_fixed_time
from mindledger.domain.errors import InvalidInputError
from mindledger.settings import FIELDS, SettingError, env_name
from mindledger.settings_sources import Origin, load_settings

HOME_ORIGIN = Origin("flag", "--home")
ENV_TEXT = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=30
)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=6,
)


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(sorted(set(FIELDS) - {"home"})), value=ENV_TEXT)
def test_any_environment_value_is_accepted_or_refused_in_one_line(
    tmp_path_factory: pytest.TempPathFactory, name: str, value: str
) -> None:
    home = tmp_path_factory.mktemp("home")
    os.environ[env_name(name)] = value
    try:
        load_settings(home, HOME_ORIGIN, {})
    except SettingError as e:
        assert "\n" not in str(e) and env_name(name) in str(e)
    finally:
        del os.environ[env_name(name)]


@settings(max_examples=150, deadline=None)
@given(config=JSON_VALUES)
def test_any_config_json_is_accepted_or_refused_in_one_line(
    tmp_path_factory: pytest.TempPathFactory, config: object
) -> None:
    home = tmp_path_factory.mktemp("home")
    (home / "config.json").write_text(json.dumps(config))

    try:
        load_settings(home, HOME_ORIGIN, {})
    except SettingError as e:
        assert "\n" not in str(e)


@given(at=st.datetimes(timezones=st.just(UTC)))
def test_a_fixed_time_is_accepted_only_in_sensible_years(at: datetime) -> None:
    text = at.isoformat()

    if 1970 <= at.year <= 2999:
        assert parse_fixed_time(text) == at
    else:
        with pytest.raises(InvalidInputError, match="outside the years 1970 to 2999"):
            parse_fixed_time(text)


def test_a_time_zone_that_overflows_the_calendar_is_refused_not_raised() -> None:
    with pytest.raises(InvalidInputError, match="not ISO-8601"):
        parse_fixed_time("0001-01-01T00:00:00+05:00")


def test_a_clock_before_the_head_refuses_when_first_asked_and_reads_the_head_once() -> None:
    head = datetime(2026, 5, 1, 9, tzinfo=UTC)
    reads: list[int] = []

    def head_time() -> datetime:
        reads.append(1)
        return head

    late = no_earlier_than_head(head, head_time, "MIND_NOW", "allow it")
    early = no_earlier_than_head(datetime(2026, 4, 1, tzinfo=UTC), head_time, "MIND_NOW", "x")

    assert reads == []  # nothing asked yet: nothing read
    assert late() == late() == head and len(reads) == 1
    with pytest.raises(InvalidInputError, match="before the ledger's latest event"):
        early()


def test_a_home_that_is_a_file_is_refused_naming_where_it_came_from(tmp_path: Path) -> None:
    path = tmp_path / "home"
    path.write_text("")

    with pytest.raises(SettingError, match=r"--home \(flag\) = .* \(it is a file\)"):
        load_settings(path, HOME_ORIGIN, {})


@settings(max_examples=100, deadline=None)
@given(content=st.binary(max_size=60))
def test_any_dotenv_bytes_are_accepted_or_refused_in_one_line(
    tmp_path_factory: pytest.TempPathFactory, content: bytes
) -> None:
    home = tmp_path_factory.mktemp("home")
    (home / ".env").write_bytes(b"MIND_MODEL_RETRIES=" + content)

    try:
        load_settings(home, HOME_ORIGIN, {})
    except SettingError as e:
        assert "\n" not in str(e)


def _config_error(tmp_path: Path, config: dict[str, object]) -> str:
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(SettingError) as refused:
        load_settings(tmp_path, HOME_ORIGIN, {})
    return str(refused.value)


def test_an_unknown_config_key_is_refused_listing_only_the_keys_config_json_takes(
    tmp_path: Path,
) -> None:
    message = _config_error(tmp_path, {"colour": "blue"})

    assert "'colour'" in message and "config.json takes backend, " in message
    assert "lock_timeout" in message and "model_settings" in message
    assert "MIND_" not in message.replace(str(tmp_path), "")
    assert "'now'" not in message and " now," not in message  # the clock is not a file setting


@pytest.mark.parametrize("name", ["backend", "lock_timeout", "max_tokens"])
def test_an_environment_variable_name_in_config_json_names_the_key_to_use(
    tmp_path: Path, name: str
) -> None:
    message = _config_error(tmp_path, {env_name(name): "x"})

    assert f"config.json calls it {name!r}" in message
    assert "settings:" not in message


def test_a_mind_setting_in_config_json_points_to_config_set(tmp_path: Path) -> None:
    message = _config_error(tmp_path, {"threads.floor_interval": 12})

    assert "mind config set threads.floor_interval VALUE" in message


def test_an_unknown_dotenv_setting_lists_only_what_dotenv_may_set(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("MIND_COLOUR=blue\n")

    with pytest.raises(SettingError) as refused:
        load_settings(tmp_path, HOME_ORIGIN, {})

    assert "MIND_BACKEND" in str(refused.value)
    assert "MIND_NOW" not in str(refused.value) and "MIND_HOME" not in str(refused.value)


def test_the_quick_reads_know_every_setting() -> None:
    """`mind status` and `commitments` take their quick path only with no setting given but the
    home: a setting they did not know of would go unchecked there."""
    from mindledger.quick_reads import SETTING_NAMES
    from mindledger.settings import Settings

    assert set(Settings.model_fields) == SETTING_NAMES


def test_a_home_that_sets_nothing_has_the_settings_validation_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing given but the home: the defaults are taken without validating them again."""
    from mindledger.settings import Settings

    for name in list(os.environ):
        if name.upper().startswith("MIND_"):
            monkeypatch.delenv(name)

    loaded = load_settings(tmp_path, HOME_ORIGIN, {}).values

    validated = Settings(home=tmp_path)
    assert loaded == validated and loaded.model_fields_set == validated.model_fields_set
    assert loaded.model_dump() == validated.model_dump()
    assert {n: type(v) for n, v in loaded} == {n: type(v) for n, v in validated}
    assert loaded.model_fallbacks is not Settings.model_fields["model_fallbacks"].default
