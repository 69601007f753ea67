"""Any chat completion body, streamed or not, is a turn or a 4xx in OpenAI's error shape
naming a field: never a 5xx, never a stream that carries an error, and the ledger verifies."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from mindledger.compose import Home
from mindledger.service.app import build_app
from mindledger.service.chat_request import KNOWN, SAMPLING
from mindledger.service.minds import Minds
from mindledger.service.openai_api import extension

SCRIPTED = {"model": "mock", "mock_reply": "Noted."}
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-3, 3) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
MESSAGE = st.fixed_dictionaries(
    {
        "role": st.sampled_from(["system", "developer", "user", "assistant", "tool"]),
        "content": st.text(max_size=30) | VALUES,
    }
)
USER = {"role": "user", "content": "Please note this."}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, dict[str, str]]]:
    import mindledger

    home = tmp_path_factory.mktemp("fuzz") / "mind"
    mindledger.init(home, name="Echo")
    minds = Minds.open([Home(Path(home))])
    app = build_app(minds, extensions=[extension(minds)])
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client, {"Authorization": f"Bearer {next(iter(minds)).token}"}
    minds.close(10)


@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    fields=st.dictionaries(
        st.sampled_from(sorted(KNOWN - {"model", "mind_options"})), VALUES, max_size=3
    ),
    sampling=st.dictionaries(st.sampled_from(sorted(SAMPLING)), VALUES, max_size=2),
    earlier=st.lists(MESSAGE, max_size=3),
    stream=st.booleans(),
)
def test_any_body_is_a_turn_or_a_4xx_naming_a_field(
    served: tuple[TestClient, dict[str, str]],
    fields: dict[str, Any],
    sampling: dict[str, Any],
    earlier: list[dict[str, Any]],
    stream: bool,
) -> None:
    client, auth = served
    body = {
        "messages": [*earlier, USER],
        **fields,
        **sampling,
        "model": "mind/Echo",
        "mind_options": SCRIPTED,
    }
    if "stream" not in fields:
        body["stream"] = stream

    answer = client.post("/v1/chat/completions", json=body, headers=auth)

    assert answer.status_code < 500, answer.text
    if answer.status_code >= 400:
        error = answer.json()["error"]
        assert set(error) == {"message", "type", "param", "code"}
        assert error["type"] == "invalid_request_error" and "--" not in error["message"]
    elif answer.headers["content-type"].startswith("text/event-stream"):
        assert '"error"' not in answer.text and answer.text.endswith("data: [DONE]\n\n")
    else:
        assert answer.json()["choices"][0]["message"]["content"] == "Noted."


def test_the_ledger_verifies_after_the_fuzzing(served: tuple[TestClient, dict[str, str]]) -> None:
    client, auth = served

    answer = client.post("/v1/minds/Echo/verify", headers=auth)

    assert answer.status_code == 200 and answer.json()["ok"] is True
