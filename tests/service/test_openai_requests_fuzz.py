"""Any legacy completion or Responses API body is read as a turn or refused with a 400 naming
a field (never another exception), and whatever the floor then refuses of a body that was
read (its system prompt, earlier messages, sampling settings) names a field of that body; any
embeddings body is read as texts or refused the same way."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mindledger.domain.client_chat import checked_chat
from mindledger.domain.errors import InvalidInputError
from mindledger.domain.sampling import checked_sampling
from mindledger.service.chat_request import ChatRequest
from mindledger.service.errors import ApiError
from mindledger.service.openai_completions import KNOWN as COMPLETION_FIELDS
from mindledger.service.openai_completions import LEGACY_SAMPLING, completion_request
from mindledger.service.openai_embeddings import KNOWN as EMBEDDING_FIELDS
from mindledger.service.openai_embeddings import embeddings_request
from mindledger.service.responses_request import KNOWN as RESPONSES_FIELDS
from mindledger.service.responses_request import SAMPLING, responses_request

VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-3, 3) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
PART = st.fixed_dictionaries(
    {"type": st.sampled_from(["input_text", "output_text", "input_image"]), "text": VALUES}
)
ITEM = st.fixed_dictionaries(
    {
        "role": st.sampled_from(["system", "developer", "user", "assistant", "tool"]) | VALUES,
        "content": st.text(max_size=20) | st.lists(PART, max_size=2) | VALUES,
    },
    optional={"type": st.sampled_from(["message", "function_call"]), "id": VALUES},
)
SETTINGS = settings(max_examples=150, deadline=None, derandomize=True, database=None)


def _read_or_refused(read: Any, body: dict[str, Any]) -> None:
    """`read(body)` is a request whose floor checks name a field of `body`, or a 400 that
    names one."""
    try:
        request: ChatRequest = read(body)
    except ApiError as e:
        assert e.status == 400 and e.param is not None
        assert e.param.split("[")[0].split(".")[0] in body
        return
    assert request.text.strip()
    try:
        checked_chat(request.system, request.history)
        checked_sampling(request.sampling)
    except InvalidInputError as e:
        field = request.request_field(e.param)
        assert field is not None and field.split("[")[0].split(".")[0] in body, (e.param, field)


SAMPLED = st.integers(-5, 3000) | st.floats(-3, 3) | st.text(max_size=4) | VALUES
USER = {"role": "user", "content": "Please note this."}


@SETTINGS
@given(
    sampling=st.dictionaries(st.sampled_from(LEGACY_SAMPLING), SAMPLED, max_size=3),
    fields=st.dictionaries(st.sampled_from(sorted(COMPLETION_FIELDS)), VALUES, max_size=1),
    prompt=st.text(min_size=1, max_size=10) | st.lists(st.text(max_size=5), max_size=2) | VALUES,
)
def test_any_completion_body_is_a_turn_or_a_400_naming_a_field(
    sampling: dict[str, Any], fields: dict[str, Any], prompt: Any
) -> None:
    body = {**sampling, **fields, "model": "mind/Echo", "prompt": prompt}
    _read_or_refused(completion_request, body)


@SETTINGS
@given(
    sampling=st.dictionaries(
        st.sampled_from((*SAMPLING, "max_output_tokens")), SAMPLED, max_size=3
    ),
    fields=st.dictionaries(st.sampled_from(sorted(RESPONSES_FIELDS)), VALUES, max_size=1),
    items=st.text(min_size=1, max_size=10) | st.lists(ITEM, max_size=4),
    last=st.booleans(),
)
def test_any_responses_body_is_a_turn_or_a_400_naming_a_field(
    sampling: dict[str, Any], fields: dict[str, Any], items: Any, last: bool
) -> None:
    if last and isinstance(items, list):
        items = [*items, USER]
    body = {**sampling, **fields, "model": "mind/Echo", "input": items}
    _read_or_refused(responses_request, body)


@SETTINGS
@given(
    fields=st.dictionaries(st.sampled_from(sorted(EMBEDDING_FIELDS)), VALUES, max_size=3),
    texts=st.text(max_size=10) | st.lists(st.text(max_size=5) | VALUES, max_size=3),
)
def test_any_embeddings_body_is_texts_or_a_400_naming_a_field(
    fields: dict[str, Any], texts: Any
) -> None:
    body = {**fields, "model": "mind/Echo", "input": texts}
    try:
        model, read, encoding, _ = embeddings_request(body)
    except ApiError as e:
        assert e.status == 400 and e.param is not None and e.param in body
        return
    assert model == "mind/Echo" and read and all(isinstance(t, str) for t in read)
    assert encoding in ("float", "base64")
