"""`GET /v1/models/{model}` as OpenAI's clients call it: the real OpenAI Python SDK (in-process,
over Starlette's test client), the id's slash sent escaped or not, a real `created`, and a 404
in OpenAI's error shape for a model the key does not open."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import openai
import pytest
from starlette.testclient import TestClient

import mindledger
from mindledger.compose import Home
from mindledger.service.app import build_app
from mindledger.service.minds import Minds


@pytest.fixture
def served(mind_home: Path, tmp_path: Path) -> Iterator[tuple[TestClient, Minds]]:
    other = tmp_path / "nova"
    mindledger.init(other, name="Nova")
    minds = Minds.open([Home(mind_home), Home(other)])
    with TestClient(build_app(minds), raise_server_exceptions=False) as client:
        yield client, minds
    minds.close(10)


def sdk(client: TestClient, minds: Minds) -> openai.OpenAI:
    """The OpenAI SDK with Echo's key, talking to the app in this process."""
    echo = next(iter(minds))
    return openai.OpenAI(
        base_url="http://testserver/v1", api_key=echo.token, http_client=client, max_retries=0
    )


def test_the_sdk_retrieves_a_mind_as_a_model_created_when_its_ledger_was(
    served: tuple[TestClient, Minds],
) -> None:
    client, minds = served
    echo = next(iter(minds))
    made = echo.status().created_at
    assert made is not None

    model = sdk(client, minds).models.retrieve("mind/Echo")
    listed = sdk(client, minds).models.list().data

    assert (model.id, model.object, model.owned_by) == ("mind/Echo", "model", "mindledger")
    assert model.created == int(datetime.fromisoformat(made).timestamp())
    assert [(m.id, m.created) for m in listed] == [("mind/Echo", model.created)]


@pytest.mark.parametrize("path", ["/v1/models/mind/Echo", "/v1/models/mind%2FEcho"])
def test_the_ids_slash_may_come_escaped_or_not(served: tuple[TestClient, Minds], path: str) -> None:
    client, minds = served
    key = {"Authorization": f"Bearer {next(iter(minds)).token}"}

    answer = client.get(path, headers=key)

    assert answer.status_code == 200
    assert answer.json()["id"] == "mind/Echo"


@pytest.mark.parametrize("model", ["mind/Nova", "mind/Nobody", "gpt-4o", "mind/Echo/extra"])
def test_a_model_the_key_does_not_open_is_a_404_in_openais_shape(
    served: tuple[TestClient, Minds], model: str
) -> None:
    client, minds = served

    with pytest.raises(openai.NotFoundError) as refused:
        sdk(client, minds).models.retrieve(model)

    assert refused.value.status_code == 404
    error = refused.value.response.json()["error"]
    assert error["code"] == "model_not_found"
    assert error["type"] == "invalid_request_error"
    assert error["param"] == "model"
    assert repr(model) in error["message"]
