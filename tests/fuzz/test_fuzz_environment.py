"""Arbitrary environment values, config.json contents, .env bytes and chat input lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz.harness import env_values, fuzz_step, json_values, texts

VARIABLES = [
    "MIND_NOW",
    "MIND_BACKEND",
    "MIND_LOCK_TIMEOUT",
    "MIND_MODEL_TIMEOUT",
    "MIND_MODEL_RETRIES",
    "MIND_MAX_TOKENS",
    "MIND_API_BASE",
    "MIND_QUERY_TIMEOUT",
    "MIND_QUERY_MAX_ROWS",
    "MIND_QUERY_MAX_BYTES",
]
READERS = [
    ["status"],
    ["commitments", "--json"],
    ["query", "SELECT count(*) AS n FROM events"],
    ["recall", "weekly report"],
    ["verify"],
]
WRITERS = [
    ["commit", "Send the weekly report"],
    ["turn", "What did I promise?", "--model", "mock", "--mock-reply", "The report."],
]
COMMANDS = READERS + WRITERS
FUZZ = settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@FUZZ
@given(
    environment=st.dictionaries(st.sampled_from(VARIABLES), env_values, min_size=1, max_size=3),
    args=st.sampled_from(COMMANDS),
)
def test_any_environment_value_ends_in_success_or_one_line(
    environment: dict[str, str], args: list[str], mind_home: Path
) -> None:

    fuzz_step(mind_home, args, environment)


@FUZZ
@given(
    content=st.one_of(
        json_values.map(json.dumps),
        st.fixed_dictionaries(
            {}, optional={"backend": json_values, "model_settings": json_values}
        ).map(json.dumps),
        st.binary(max_size=60).map(lambda b: b.decode("latin-1")),
    ),
    args=st.sampled_from(COMMANDS),
)
def test_any_config_file_ends_in_success_or_one_line(
    content: str, args: list[str], mind_home: Path
) -> None:
    config = mind_home / "config.json"
    config.write_text(content, encoding="latin-1")

    fuzz_step(mind_home, args, undo=config.unlink)


@FUZZ
@given(content=st.binary(max_size=80), args=st.sampled_from(WRITERS))
def test_any_dotenv_file_ends_in_success_or_one_line(
    content: bytes, args: list[str], mind_home: Path
) -> None:
    dotenv = mind_home / ".env"
    dotenv.write_bytes(content)

    fuzz_step(mind_home, args, undo=dotenv.unlink)


@FUZZ
@given(lines=st.lists(texts.filter(lambda t: "\n" not in t and "\r" not in t), max_size=4))
def test_any_chat_input_ends_in_success_or_one_line(lines: list[str], mind_home: Path) -> None:
    stdin = "".join(f"{line}\n" for line in [*lines, "/verify", "/quit"])
    args = ["chat", "--model", "mock", "--mock-reply", "Noted."]

    fuzz_step(mind_home, args, stdin=stdin)


pytestmark = pytest.mark.usefixtures("mind_home")
