"""Typed settings end to end: every setting refuses a bad value in one line from every source,
sources apply in their documented order, secrets stay masked, and MIND_NOW cannot go backwards.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mindledger.compose import Home, build_model, persistence_env
from mindledger.settings import FIELDS, env_name
from mindledger.settings_sources import ENV_ONLY
from tests.conftest import Result, subprocess_env

Cli = Callable[..., Result]

# One bad value per declared setting: a new setting without one fails the first test below.
BAD: dict[str, Any] = {
    "home": "A FILE",  # replaced by a path to a file
    "now": "9999-01-01T00:00:00Z",
    "allow_past_now": "maybe",
    "backend": "mysql",
    "postgres_dsn": "nonsense",
    "postgres_schema": "a;drop",
    "master_key": "too-short",
    "lock_timeout": "abc",
    "api_base": "ftp://example.com",
    "model_timeout": "abc",
    "model_retries": "x",
    "max_tokens": "0",
    "model_fallbacks": "a,,b",
    "mock_reply": "x" * 100_001,
    "query_timeout": "nan",
    "query_max_rows": "0",
    "query_max_bytes": "-1",
}
FILE_SOURCES = sorted(set(FIELDS) - set(ENV_ONLY))


def head(cli: Cli) -> int:
    position: int = cli("status", "--json").json()["head"]["position"]
    return position


def one_error_line(result: Result, exit_code: int = 1) -> str:
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == exit_code, result.output
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert "Traceback" not in result.stderr + result.output
    return lines[0]


def test_every_declared_setting_has_a_bad_value_under_test() -> None:
    assert set(BAD) == set(FIELDS)


@pytest.mark.parametrize("name", sorted(FIELDS))
def test_a_bad_value_in_the_environment_is_one_line_naming_it_and_changes_nothing(
    cli: Cli, mind_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str
) -> None:
    before = head(cli)
    value = BAD[name]
    if name == "home":
        value = str(tmp_path / "a-file")
        Path(value).write_text("not a folder")
    monkeypatch.setenv(env_name(name), value)

    line = one_error_line(cli("commit", "Ship the report"))

    if name == "home":
        monkeypatch.setenv("MIND_HOME", str(mind_home))
        assert Path(value).read_text() == "not a folder"
    else:
        monkeypatch.delenv(env_name(name))
    assert env_name(name) in line and "(environment)" in line and "it takes" in line
    assert head(cli) == before


@pytest.mark.parametrize("source", [".env", "config.json"])
@pytest.mark.parametrize("name", FILE_SOURCES)
def test_a_bad_value_in_a_home_file_is_one_line_naming_the_file_and_changes_nothing(
    cli: Cli, mind_home: Path, name: str, source: str
) -> None:
    before = head(cli)
    if source == ".env":
        (mind_home / ".env").write_text(f"{env_name(name)}={BAD[name]}\n")
    else:
        (mind_home / "config.json").write_text(json.dumps({name: BAD[name]}))

    line = one_error_line(cli("commit", "Ship the report"))

    (mind_home / source).unlink()
    assert str(mind_home / source) in line and "it takes" in line
    assert head(cli) == before


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[]", "must hold a JSON object ({...}), not a list"),
        ('"str"', "not a string"),
        ("42", "not a number"),
        ("null", "not null"),
        ('{"model_settings": "oops"}', "model_settings in"),
        ('{"model_settings": {"timeout": "abc"}}', "model_settings.timeout in"),
        ('{"model_settings": {"temperature": 1}}', "model_settings.'temperature' in"),
        ('{"backend": "oracle"}', "backend in"),
        ('{"colour": "blue"}', "'colour' in"),
        ('{"now": "2026-05-01T09:00:00Z"}', "the clock is set only by a flag or the environment"),
        ("{not json", "is not valid JSON"),
        ('{"a":' * 5000 + "1" + "}" * 5000, "is nested too deeply to read"),
    ],
)
def test_a_malformed_config_json_is_one_line_for_reads_and_turns(
    cli: Cli, mind_home: Path, content: str, message: str
) -> None:
    (mind_home / "config.json").write_text(content)

    read = one_error_line(cli("commitments"))
    turn = one_error_line(cli("turn", "hi", "--model", "mock", "--mock-reply", "hello"))

    assert message in read and read == turn


def test_a_dotenv_that_is_not_utf8_is_one_line_in_a_real_process(mind_home: Path) -> None:
    (mind_home / ".env").write_bytes(b"OPENAI_API_KEY=sk-\xff\xfe\n")

    done = subprocess.run(
        [sys.executable, "-c", "from mindledger.cli.main import main; main()", "status"],
        env=subprocess_env(mind_home),
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"Error: {mind_home / '.env'} is not UTF-8 text (byte 18); fix or remove it"
    ]


def test_an_unknown_backend_is_refused_rather_than_run_on_sqlite(
    cli: Cli, mind_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MIND_BACKEND", "mysql")

    result = cli("status")

    assert "sqlite or postgres" in one_error_line(result)
    assert "ledger at" not in result.output


def test_sources_apply_flag_then_environment_then_dotenv_then_config_json(
    cli: Cli, mind_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def timeout() -> tuple[Any, str]:
        rows = {r["key"]: r for r in cli("config", "show", "--json").json()}
        return rows["MIND_MODEL_TIMEOUT"]["value"], rows["MIND_MODEL_TIMEOUT"]["source"]

    defaulted = timeout()
    (mind_home / "config.json").write_text('{"model_settings": {"timeout": 10}}')
    from_config = timeout()
    (mind_home / ".env").write_text("MIND_MODEL_TIMEOUT=20\n")
    from_dotenv = timeout()
    monkeypatch.setenv("MIND_MODEL_TIMEOUT", "30")
    from_environment = timeout()
    monkeypatch.setenv("MIND_API_BASE", "http://from-environment.example/v1")
    flagged = Home(mind_home).with_flags(api_base=("--api-base", "http://flag.example/v1"))

    assert defaulted == (120.0, "default")
    assert from_config == (10.0, "config.json")
    assert from_dotenv == (20.0, ".env")
    assert from_environment == (30.0, "environment")
    assert flagged.settings.api_base == "http://flag.example/v1"
    assert flagged.loaded.origins["api_base"].describe() == "--api-base (flag)"


def test_config_show_lists_process_and_ledger_settings_with_source_and_help(
    cli: Cli, mind_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MIND_POSTGRES_DSN", "postgresql://echo:hunter2@db.example:5432/minds")
    cli("config", "set", "threads.top_k", "3")

    rows = {r["key"]: r for r in cli("config", "show", "--json").json()}
    text = cli("config", "show").output

    assert rows["MIND_POSTGRES_DSN"]["value"] == "postgresql://echo:****@db.example:5432/minds"
    assert rows["MIND_POSTGRES_DSN"]["source"] == "environment"
    assert rows["MIND_LOCK_TIMEOUT"] == {
        "key": "MIND_LOCK_TIMEOUT",
        "value": 15.0,
        "default": True,
        "meaning": "seconds to wait for the ledger's write lock (rounded up to whole seconds)",
        "accepts": "a number over 0, at most 3600 (a fraction is rounded up: the ledger takes "
        "whole seconds)",
        "source": "default",
        "origin": None,
    }
    assert (rows["threads.top_k"]["value"], rows["threads.top_k"]["source"]) == ("3", "ledger")
    assert rows["threads.cap"]["source"] == "default"
    assert "hunter2" not in text and "seconds to wait for the ledger's write lock" in text


@pytest.mark.parametrize(
    ("given", "passed"),
    [("0.1", "1"), ("1.5", "2"), ("2", "2"), ("2.0", "2"), ("2.5", "3"), ("3600", "3600")],
)
def test_the_lock_timeout_setting_reaches_the_ledger_in_whole_seconds_rounded_up(
    mind_home: Path, monkeypatch: pytest.MonkeyPatch, given: str, passed: str
) -> None:
    monkeypatch.setenv("MIND_LOCK_TIMEOUT", given)

    env = persistence_env(Home(mind_home))

    assert env["SQLITE_LOCK_TIMEOUT"] == passed


@pytest.mark.parametrize("given", ["0.1", "1.5", "2.0"])
def test_a_fractional_lock_timeout_works_for_reads_and_writes(
    cli: Cli, mind_home: Path, monkeypatch: pytest.MonkeyPatch, given: str
) -> None:
    monkeypatch.setenv("MIND_LOCK_TIMEOUT", given)

    assert cli("status").exit_code == 0
    assert cli("commit", "one").exit_code == 0


def test_a_fractional_lock_timeout_in_config_json_works(cli: Cli, mind_home: Path) -> None:
    config = mind_home / "config.json"
    kept = json.loads(config.read_text()) if config.exists() else {}
    config.write_text(json.dumps({**kept, "lock_timeout": 0.5}))

    assert cli("commit", "one").exit_code == 0
    assert cli("status").exit_code == 0


def test_model_show_says_where_keys_and_base_urls_come_from_and_warns_of_a_redirect(
    cli: Cli, mind_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-canary-0123456789")
    monkeypatch.delenv("OPENAI_API_BASE", raising=False)
    (mind_home / ".env").write_text("OPENAI_API_BASE=http://collector.example/v1\n")

    result = cli("model", "show", "--json")
    data = result.json()

    assert {"name": "OPENAI_API_KEY", "kind": "key", "value": "****"}.items() <= next(
        v for v in data["provider_variables"] if v["name"] == "OPENAI_API_KEY"
    ).items()
    base = next(v for v in data["provider_variables"] if v["name"] == "OPENAI_API_BASE")
    assert (base["source"], base["where"]) == (".env", str(mind_home / ".env"))
    assert len(data["warnings"]) == 1 and "OPENAI_API_BASE" in data["warnings"][0]
    assert "sk-canary" not in result.output + result.stderr


def test_a_model_base_url_in_config_json_with_a_key_from_the_environment_warns_before_a_call(
    mind_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-canary-0123456789")
    (mind_home / "config.json").write_text('{"model_settings": {"api_base": "http://x.example"}}')

    build_model(Home(mind_home), "openai/gpt-4o-mini")

    err = capsys.readouterr().err
    assert err.startswith("Warning: model_settings.api_base=http://x.example comes from")
    assert "OPENAI_API_KEY" in err and "sk-canary" not in err


def test_no_redirect_warning_when_key_and_base_url_both_come_from_the_environment(
    cli: Cli, mind_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-canary-0123456789")
    monkeypatch.setenv("OPENAI_API_BASE", "http://my-proxy.example/v1")

    result = cli("model", "show", "--json")

    assert result.json()["warnings"] == [] and result.stderr == ""


def test_a_mind_now_before_the_ledger_head_is_refused_unless_allowed(
    cli: Cli, mind_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = head(cli)
    monkeypatch.setenv("MIND_NOW", "2026-04-01T09:00:00Z")

    refused = cli("commit", "Backdated promise")
    turn = cli("turn", "hi", "--model", "mock", "--mock-reply", "hello")
    still_readable = cli("commitments", "--json")
    refused_head = head(cli)
    monkeypatch.setenv("MIND_ALLOW_PAST_NOW", "1")
    allowed = cli("commit", "Backdated promise")

    assert "MIND_NOW 2026-04-01T09:00:00+00:00 is before the ledger's latest event" in (
        one_error_line(refused)
    )
    assert "MIND_ALLOW_PAST_NOW=1" in one_error_line(turn)
    assert still_readable.exit_code == 0
    assert refused_head == before
    assert allowed.exit_code == 0 and head(cli) == before + 1


def test_tick_now_before_the_ledger_head_is_refused(cli: Cli, mind_home: Path) -> None:
    before = head(cli)

    line = one_error_line(cli("tick", "--now", "2026-01-01T00:00:00Z"))

    assert line.startswith("Error: --now 2026-01-01T00:00:00+00:00 is before")
    assert head(cli) == before


@pytest.mark.parametrize("when", ["9999-01-01T00:00:00Z", "0001-01-01T00:00:00Z"])
def test_an_absurd_mind_now_year_is_refused(
    cli: Cli, mind_home: Path, monkeypatch: pytest.MonkeyPatch, when: str
) -> None:
    monkeypatch.setenv("MIND_NOW", when)

    line = one_error_line(cli("commitments"))

    assert "outside the years 1970 to 2999" in line


# One bad value per per-mind setting (recorded as events by `mind config set`).
BAD_MIND = {
    "threads.base_rate": "fast",
    "threads.half_life": "0",
    "threads.cap": "-5",
    "threads.cycle_threshold": "nan",
    "threads.floor_interval": "-1",
    "threads.max_live_threads": "0",
    "threads.top_k": "2.5",
    "threads.work_credit": "lots",
    "workspace": "",
    "embedding.model": "two\nlines",
    "embedding.api_base": " ",
    "embedding.recall": "sometimes",
    "recall.spans": "sometimes",
}


def test_every_per_mind_setting_has_a_bad_value_under_test() -> None:
    from mindledger.domain.settings import KEYS

    assert set(BAD_MIND) == set(KEYS)


@pytest.mark.parametrize("key", sorted(BAD_MIND))
def test_a_bad_per_mind_setting_is_one_line_naming_it_and_changes_nothing(
    cli: Cli, mind_home: Path, key: str
) -> None:
    before = head(cli)

    line = one_error_line(cli("config", "set", key, "--", BAD_MIND[key]), exit_code=2)

    assert key in line
    assert head(cli) == before


@pytest.mark.parametrize(
    "url", ["javascript:alert(1)", "file:///etc/passwd", "ftp://models.example", "localhost:8080"]
)
def test_an_embedding_server_that_is_not_an_http_url_is_refused(
    cli: Cli, mind_home: Path, url: str
) -> None:
    before = head(cli)

    line = one_error_line(cli("config", "set", "embedding.api_base", url), exit_code=2)

    assert "http://" in line and "embedding.api_base" in line
    assert head(cli) == before


def test_an_embedding_server_url_or_off_is_recorded(cli: Cli, mind_home: Path) -> None:
    for value in ("http://127.0.0.1:8080/v1", "off"):
        assert cli("config", "set", "embedding.api_base", value).exit_code == 0


def test_the_home_flag_is_reported_as_the_source_of_the_home(
    cli: Cli, mind_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MIND_HOME", "/nonexistent/elsewhere")

    rows = {r["key"]: r for r in cli("--home", str(mind_home), "config", "show", "--json").json()}

    assert (rows["MIND_HOME"]["value"], rows["MIND_HOME"]["source"]) == (str(mind_home), "flag")


def test_settings_and_model_show_do_not_import_litellm(mind_home: Path) -> None:
    (mind_home / ".env").write_text("MIND_MODEL_TIMEOUT=30\nOPENAI_API_KEY=sk-local\n")
    probe = (
        "import sys; from mindledger.cli.main import mind\n"
        "for args in (['config', 'show'], ['model', 'show'], ['status']):\n"
        "    try: mind(args)\n"
        "    except SystemExit: pass\n"
        "print('LITELLM', 'litellm' in sys.modules)"
    )

    result = subprocess.run(
        [sys.executable, "-c", probe],
        env=subprocess_env(mind_home),
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.stdout.strip().splitlines()[-1] == "LITELLM False"


def test_a_proxy_in_the_home_dotenv_with_a_key_from_the_environment_warns(
    cli: Cli, mind_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-canary")
    (mind_home / ".env").write_text("HTTPS_PROXY=http://user:pw@proxy.example:3128\n")

    result = cli("model", "show")

    assert "Warning: HTTPS_PROXY=http://user:****@proxy.example:3128 comes from" in result.stderr
    assert "ANTHROPIC_API_KEY" in result.stderr and "sk-ant-canary" not in result.output


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (("turn", "hi", "--model", "openai/x", "--api-base", "notaurl"), "--api-base (flag)"),
        (("tick", "--now", "9999-01-01T00:00:00Z"), "--now (flag)"),
    ],
)
def test_a_bad_flag_value_is_one_line_naming_the_flag_and_changes_nothing(
    cli: Cli, mind_home: Path, args: tuple[str, ...], named: str
) -> None:
    before = head(cli)

    line = one_error_line(cli(*args))

    assert named in line and "it takes" in line
    assert head(cli) == before


@pytest.mark.parametrize("source", [".env", "config.json", "environment"])
def test_model_show_lists_each_setting_once_wherever_the_base_url_comes_from(
    cli: Cli, mind_home: Path, monkeypatch: pytest.MonkeyPatch, source: str
) -> None:
    base = "http://models.example/v1"
    if source == ".env":
        (mind_home / ".env").write_text(f"MIND_API_BASE={base}\n")
    elif source == "config.json":
        (mind_home / "config.json").write_text(json.dumps({"model_settings": {"api_base": base}}))
    else:
        monkeypatch.setenv("MIND_API_BASE", base)

    shown = cli("model", "show")
    data = cli("model", "show", "--json").json()

    names = [row["key"] for row in data["settings"]]
    names += [v["name"] for v in data["provider_variables"]]
    assert len(names) == len(set(names)), names
    listed = [line.split()[0] for line in shown.output.splitlines()[2:]]
    assert listed.count("MIND_API_BASE") == 1, shown.output
    (row,) = [r for r in data["settings"] if r["key"] == "MIND_API_BASE"]
    assert (row["value"], row["source"]) == (base, source)


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("ftp://user:sekret@example.com/v1", "a URL beginning ftp://"),
        ("http://exa mple.com", "a URL with no host, or with a space in it"),
        ("example.com/v1", "'example.com/v1'"),
    ],
)
def test_a_refused_api_base_is_named_by_what_is_wrong_with_it_and_no_secret(
    cli: Cli, monkeypatch: pytest.MonkeyPatch, value: str, shown: str
) -> None:
    # The error path drops non-loopback URLs from what it prints; the line still says what
    # is wrong with the one the user set (it printed `= ''`), and never its password.
    monkeypatch.setenv("MIND_API_BASE", value)

    line = one_error_line(cli("status"))

    assert shown in line and "MIND_API_BASE (environment)" in line
    assert "sekret" not in line and "= ''" not in line
