"""Redaction of secrets from failure messages."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mindledger.cli.output import configured_secrets, error_text
from mindledger.domain.redaction import REDACTED, is_secret_name, redact, secret_values

SECRET = st.text("abcdefghijklmnopqrstuvwxyz0123456789-_", min_size=8, max_size=40)


@given(st.text(max_size=60), SECRET, st.text(max_size=60))
def test_a_configured_secret_never_survives(before: str, secret: str, after: str) -> None:
    assert secret not in redact(before + secret + after, [secret])


@pytest.mark.parametrize(
    ("message", "secret"),
    [
        ("invalid header Authorization: Bearer abc.def-ghi_jkl", "abc.def-ghi_jkl"),
        ("Authorization=Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA=="),
        ('headers={"authorization": "Bearer abcdefghijkl"}', "abcdefghijkl"),
        ("Incorrect API key provided: sk-proj-abcdefghijklmnop", "abcdefghijklmnop"),
        ("anthropic said sk-ant-api03-abcdefghijklmnop is not valid", "abcdefghijklmnop"),
        ("GET https://host/v1/models?api_key=abcdefgh12&x=1", "abcdefgh12"),
        ("POST https://host/v1?key=AIzaSyA1234567890abcdefghijklmnopqrstu", "AIzaSy"),
        ('{"api_key": "hunter2hunter2"}', "hunter2"),
        ("x-api-key: abcdefghijklmnop", "abcdefghijklmnop"),
        ("postgresql://bob:hunter2hunter2@db.example/mind", "hunter2"),
        ("token=ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_"),
        ("password: correct-horse", "correct-horse"),
    ],
)
def test_credential_shaped_strings_are_redacted(message: str, secret: str) -> None:
    shown = redact(message)

    assert REDACTED in shown and secret not in shown


@pytest.mark.parametrize(
    "message",
    [
        "the model provider refused the API key",
        "the key was wrong; see the token limit of 512",
        "monkey=banana, secret: of life",
        "cannot connect to the model server at http://127.0.0.1:8080/v1",
    ],
)
def test_ordinary_messages_are_left_alone(message: str) -> None:
    assert redact(message) == message


# Prose and paths with no credential in them: the words that name a credential (`passwd`,
# `api_key`, `token`, ...) appear only as parts of paths, the way a path a user typed is quoted
# back in a message (`unknown model '../../etc/passwd': give provider/model ...`).
_CREDENTIAL_WORDS = ("passwd", "password", "api_key", "api-key", "token", "key", "secret")
_PLAIN_WORD = st.text("abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=12).filter(
    lambda w: (
        not any(c in w for c in ("passw", "key", "token", "secret", "auth", "bearer", "basic"))
    )
)
_PATH = st.builds(
    lambda up, parts, last: "../" * up + "/".join(parts) + "/" + last,
    st.integers(0, 3),
    st.lists(_PLAIN_WORD, max_size=3),
    st.one_of(st.sampled_from(_CREDENTIAL_WORDS), _PLAIN_WORD),
)
_GLUE = st.sampled_from([" ", ": ", "': ", '": "', "=", ", ", " (", ") ", "; "])


@given(st.lists(st.tuples(st.one_of(_PLAIN_WORD, _PATH), _GLUE), max_size=12))
def test_a_message_without_secrets_comes_out_unchanged(pieces: list[tuple[str, str]]) -> None:
    message = "".join(word + glue for word, glue in pieces)

    assert redact(message) == message


def test_a_path_naming_a_credential_file_keeps_the_words_after_it() -> None:
    message = "unknown model '../../etc/passwd': give provider/model with a provider"

    assert redact(message) == message


def test_secret_names_and_values() -> None:
    env = {
        "OPENAI_API_KEY": "sk-111111111111",
        "MY_TOKEN": "tok-2222222222",
        "DB_PASSWORD_FILE": "pw-33333333",
        "AWS_SECRET": "s-4444444444",
        "SHORT_KEY": "1",
        "HOME": "/home/someone/long",
        "MIND_MODEL": "openai/gpt-4o-mini",
    }

    assert [n for n in env if is_secret_name(n)] == [
        "OPENAI_API_KEY",
        "MY_TOKEN",
        "DB_PASSWORD_FILE",
        "AWS_SECRET",
        "SHORT_KEY",
    ]
    assert set(secret_values(env.items())) == {
        "sk-111111111111",
        "tok-2222222222",
        "pw-33333333",
        "s-4444444444",
    }


def test_the_homes_dotenv_secrets_are_redacted_from_printed_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "envtoken-5555")
    (tmp_path / ".env").write_text('ANTHROPIC_API_KEY="dotenv-666666"\nMIND_MODEL=x\n')

    assert {"envtoken-5555", "dotenv-666666"} <= set(configured_secrets(tmp_path))
    assert error_text("failed: dotenv-666666 / envtoken-5555", tmp_path) == (
        f"failed: {REDACTED} / {REDACTED}"
    )


@given(SECRET)
def test_a_secrets_base64_and_url_encoded_forms_never_survive(secret: str) -> None:
    import base64
    from urllib.parse import quote

    encoded = base64.b64encode(f"bob:{secret}".encode()).decode()
    message = f"invalid key {encoded} for {quote('p@ss/' + secret, safe='')}"

    shown = redact(message, [f"bob:{secret}", "p@ss/" + secret])

    assert encoded not in shown and encoded.rstrip("=") not in shown
    assert quote("p@ss/" + secret, safe="") not in shown


def test_a_configured_urls_userinfo_counts_as_a_secret() -> None:
    secrets = secret_values([("MIND_API_BASE", "http://bob:urlCanaryPw@127.0.0.1:9/v1")])

    assert {"urlCanaryPw", "bob:urlCanaryPw"} <= set(secrets)
    assert redact("Basic Ym9iOnVybENhbmFyeVB3 rejected", secrets) == "Basic [redacted] rejected"


@pytest.mark.parametrize(
    "message",
    [
        "api_key='sk-abcdefghijklmnop' was refused",
        "Authorization: Bearer sk-abcdefghijklmnop",
        "headers={'authorization': 'sk-abcdefghijklmnop'}",
    ],
)
def test_a_redacted_value_gets_no_stray_brackets(message: str) -> None:
    shown = redact(message, ["sk-abcdefghijklmnop"])

    assert "sk-abcdefghijklmnop" not in shown and "[redacted]]" not in shown
