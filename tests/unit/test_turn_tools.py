"""Tools and structured output on the floor's turn, with a fake model that takes tools: the
offer reaches the model and the record; a reply that calls tools completes its turn with the
calls (ids the mind gives); the results start a turn linked to the one that asked; a model
without tools refuses them naming itself, before anything is recorded; forgetting a turn takes
its calls and results; LiteLLM is called with the offer and reads calls back, whole or in
streamed pieces."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mindledger
from mindledger.adapters.litellm_model import LiteLLMModel, ModelSettings
from mindledger.adapters.model_tools import add_piece, tool_calls_of
from mindledger.domain.errors import InvalidInputError, UnsupportedParameterError
from mindledger.domain.model_port import Completion
from mindledger.domain.tool_use import ToolRequest, asking_turn, checked_results, checked_tools

NOW = "2026-05-01T09:00:00Z"
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city now.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
QUESTION = "What is the weather in Paris?"
ANSWER = "It is 18 degrees and sunny in Paris."


@dataclass
class ToolModel:
    """Calls get_weather when offered it and the last message is the user's; answers in text
    once the last message is a tool's. Records what it was offered and sent."""

    name: str = "fake/tools"
    text: str = ""  # what a reply that calls tools also says
    offered: list[dict[str, Any]] = field(default_factory=list)
    sent: list[list[dict[str, Any]]] = field(default_factory=list)
    tooling: dict[str, Any] = field(default_factory=dict)

    def with_tools(self, request: ToolRequest) -> ToolModel:
        self.offered.append(request.chosen())
        return ToolModel(self.name, self.text, self.offered, self.sent, request.chosen())

    def complete(
        self, messages: list[dict[str, Any]], on_token: Callable[[str], None] | None = None
    ) -> Completion:
        self.sent.append(messages)
        if messages[-1]["role"] == "tool" or not self.tooling.get("tools"):
            return Completion(ANSWER, self.name, "fake")
        call = {
            "id": "call_upstream_1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
        }
        return Completion(
            self.text, self.name, "fake", finish_reason="tool_calls", tool_calls=(call,)
        )


@pytest.fixture
def mind(tmp_path: Path) -> Iterator[mindledger.MindLedger]:
    home = tmp_path / "mind"
    mindledger.init(home, name="Echo", now=NOW)
    with mindledger.open(home, now=NOW) as opened:
        yield opened


@pytest.fixture
def model(mind: mindledger.MindLedger) -> ToolModel:
    fake = ToolModel()
    # The floor keeps one model per (spec, api_base): a test's fake goes where a turn on
    # model "fake/tools" finds it.
    mind._models[("fake/tools", None)] = fake
    return fake


def events(mind: mindledger.MindLedger, topic: str) -> list[dict[str, Any]]:
    logged = mind.log(limit=200).model_dump(mode="json")
    return [e["payload"] for e in logged if e["type"] == topic]


def calling(*ids: str) -> list[dict[str, Any]]:
    """The conversation a client sends back before its results: the question, the calls."""
    calls = [
        {"id": i, "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
        for i in ids
    ]
    return [
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "content": None, "tool_calls": calls},
    ]


def asked(mind: mindledger.MindLedger) -> mindledger.results.TurnResult:
    return mind.turn(QUESTION, model="fake/tools", tools=[WEATHER], tool_choice="auto")


@pytest.mark.floor("turn")
def test_a_reply_that_calls_tools_completes_its_turn_with_calls_the_mind_named(
    mind: mindledger.MindLedger, model: ToolModel
) -> None:
    done = asked(mind)

    assert done.status == "complete" and done.reply == "" and done.finish_reason == "tool_calls"
    assert done.tool_calls is not None and len(done.tool_calls) == 1
    call = done.tool_calls[0]
    assert call.id == f"call_{done.turn}00" and asking_turn(call.id).hex == done.turn  # type: ignore[union-attr]
    assert call.function.name == "get_weather" and json.loads(call.function.arguments) == {
        "city": "Paris"
    }
    assert model.offered[-1] == {"tools": [WEATHER], "tool_choice": "auto"}
    assert events(mind, "mind.turn.started")[-1]["tooling"] == model.offered[-1]
    assert events(mind, "mind.turn.replied")[-1]["tool_calls"] == [call.model_dump()]
    assert mind.turn_prompt(done.turn).tool_calls == done.tool_calls
    said = mind.query(
        "SELECT role, text FROM messages WHERE turn_id = $t", {"t": done.turn}
    ).model_dump(mode="json")
    assert [(m["role"], m["text"]) for m in said] == [("user", QUESTION)]  # no empty reply


@pytest.mark.floor("turn")
def test_control_lines_beside_tool_calls_work_on_the_visible_text(
    mind: mindledger.MindLedger, model: ToolModel
) -> None:
    model.text = "Let me look that up.\nCOMMIT: tell the user the weather in Paris"

    done = asked(mind)

    assert done.reply == "Let me look that up." and done.tool_calls is not None
    assert len(done.opened) == 1 and done.finish_reason == "tool_calls"


def test_log_turn_shows_tool_calls_and_results(capsys: pytest.CaptureFixture[str]) -> None:
    from mindledger.cli.turn_prompt import echo_prompt

    call = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    echo_prompt(
        {
            "turn": "ab12",
            "status": "complete",
            "model": "fake/tools",
            "messages": [
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "call_1", "content": "18C"},
            ],
            "tool_calls": [call],
        }
    )

    shown = capsys.readouterr().out.splitlines()
    assert shown[1:] == [
        "--- assistant ---",
        "[tool call call_1] f({})",
        "--- tool call_1 ---",
        "18C",
        "--- the reply's tool calls ---",
        "[tool call call_1] f({})",
    ]


@pytest.mark.floor("turn", "turn_prompt")
def test_the_results_start_a_turn_linked_to_the_turn_that_asked(
    mind: mindledger.MindLedger, model: ToolModel
) -> None:
    first = asked(mind)
    assert first.tool_calls is not None
    call = first.tool_calls[0].model_dump()
    history: list[dict[str, Any]] = [
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "content": None, "tool_calls": [call]},
    ]
    result = {"tool_call_id": call["id"], "content": '{"celsius": 18, "sky": "sunny"}'}

    second = mind.turn(
        "", model="fake/tools", tools=[WEATHER], history=history, tool_results=[result]
    )
    shown = mind.turn_prompt(second.turn)

    assert second.status == "complete" and second.reply == ANSWER
    assert second.follows == first.turn and second.tool_calls is None
    assert model.sent[-1][1:] == [*history, {"role": "tool", **result}]
    record = events(mind, "mind.turn.started")[-1]
    assert record["speaker"] == "tool" and record["text"] == ""
    assert record["tool_results"] == [result] and record["follows"] == first.turn
    assert shown.tool_results == [result] and shown.follows == first.turn
    assert shown.messages is not None and shown.messages[-1] == {"role": "tool", **result}
    assert mind.verify().ok


@pytest.mark.floor("turn")
def test_results_naming_a_call_the_mind_never_made_start_a_turn_linked_to_none(
    mind: mindledger.MindLedger, model: ToolModel
) -> None:
    from mindledger.domain.identity import IDENTITY_ID

    forged = {"tool_call_id": f"call_{'ab' * 16}00", "content": "42"}
    other = {**forged, "tool_call_id": "x"}
    identity = {**forged, "tool_call_id": f"call_{IDENTITY_ID.hex}00"}  # another stream's id

    done = mind.turn(
        "",
        model="fake/tools",
        history=calling(forged["tool_call_id"], "x", identity["tool_call_id"]),
        tool_results=[forged, other, identity],
    )

    assert done.status == "complete" and done.follows is None


@pytest.mark.floor("turn")
def test_a_model_without_tools_refuses_them_naming_itself_and_records_nothing(
    mind: mindledger.MindLedger,
) -> None:
    before = mind.verify().events

    with pytest.raises(UnsupportedParameterError) as refused:
        mind.turn(QUESTION, model="mock", mock_reply="Sunny.", tools=[WEATHER])

    assert refused.value.param == "tools" and "model mock" in str(refused.value)
    assert mind.verify().events == before


def test_litellm_refuses_tools_for_a_provider_it_would_not_pass_them_to() -> None:
    model = LiteLLMModel(ModelSettings(spec="ollama/llama3.2"))

    with pytest.raises(UnsupportedParameterError) as refused:
        model.with_tools(checked_tools([WEATHER]))

    assert refused.value.param == "tools" and "ollama/llama3.2" in str(refused.value)


def test_litellm_is_called_with_the_tools_and_the_response_format() -> None:
    schema = {"name": "weather", "schema": {"type": "object"}, "strict": True}
    offer = checked_tools(
        [WEATHER], "required", False, {"type": "json_schema", "json_schema": schema}
    )
    model = LiteLLMModel(ModelSettings(spec="openai/gpt-4o-mini"))

    args = model.with_tools(offer)._call_args([])

    assert args["tools"] == [WEATHER] and args["tool_choice"] == "required"
    assert args["parallel_tool_calls"] is False
    assert args["response_format"] == {"type": "json_schema", "json_schema": schema}
    assert "tools" not in model._call_args([])  # the mind's own model is unchanged


def test_streamed_pieces_of_tool_calls_add_up_to_the_calls() -> None:
    calls: dict[int, dict[str, Any]] = {}
    pieces = [
        {"index": 0, "id": "call_a", "type": "function", "function": {"name": "get_weather"}},
        {"index": 1, "id": "call_b", "function": {"name": "get_time", "arguments": ""}},
        {"index": 0, "function": {"arguments": '{"city": '}},
        {"index": 0, "function": {"arguments": '"Paris"}'}},
        {"index": 1, "function": {"arguments": "{}"}},
    ]

    for piece in pieces:
        add_piece(calls, piece)
    found = tool_calls_of([calls[i] for i in sorted(calls)])

    assert [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in found] == [
        ("call_a", "get_weather", '{"city": "Paris"}'),
        ("call_b", "get_time", "{}"),
    ]


@pytest.mark.parametrize(
    ("given", "param"),
    [
        ({"tools": [{"type": "retrieval"}]}, "tools"),
        ({"tools": [{"type": "function", "function": {"name": "no spaces"}}]}, "tools"),
        ({"tools": [WEATHER, WEATHER]}, "tools"),
        ({"tools": "get_weather"}, "tools"),
        ({"tools": [WEATHER], "tool_choice": "always"}, "tool_choice"),
        (
            {"tools": [WEATHER], "tool_choice": {"type": "function", "function": {"name": "x"}}},
            "tool_choice",
        ),
        ({"tool_choice": "required"}, "tool_choice"),
        ({"parallel_tool_calls": True}, "parallel_tool_calls"),
        ({"tools": [WEATHER], "parallel_tool_calls": "yes"}, "parallel_tool_calls"),
        ({"response_format": {"type": "xml"}}, "response_format"),
        ({"response_format": {"type": "json_schema"}}, "response_format"),
        ({"response_format": {"type": "json_object", "x": float("nan")}}, "response_format"),
    ],
)
def test_a_malformed_offer_is_refused_by_name(given: dict[str, Any], param: str) -> None:
    with pytest.raises(InvalidInputError) as refused:
        checked_tools(**given)

    assert refused.value.param == param


@pytest.mark.parametrize(
    ("history", "results", "param"),
    [
        ([], [{"tool_call_id": "call_1", "content": "18C"}], "tool_results[0].tool_call_id"),
        (
            calling("call_1"),
            [{"tool_call_id": "call_2", "content": "18C"}],
            "tool_results[0].tool_call_id",
        ),
        (
            [*calling("call_1"), {"role": "user", "content": "And?"}],
            [{"tool_call_id": "call_1", "content": "18C"}],
            "tool_results[0].tool_call_id",
        ),
        (
            [{"role": "tool", "tool_call_id": "call_1", "content": "18C"}],
            [],
            "history[0].tool_call_id",
        ),
        (calling("call_1"), [{"tool_call_id": "call_1"}], "tool_results[0]"),
    ],
    ids=["no-call", "another-call", "after-a-user", "stray-in-history", "no-content"],
)
def test_a_result_that_answers_no_call_before_it_is_refused_by_name(
    mind: mindledger.MindLedger,
    model: ToolModel,
    history: list[dict[str, Any]],
    results: list[Any],
    param: str,
) -> None:
    text = "" if results else "Thanks."

    with pytest.raises(InvalidInputError) as refused:
        mind.turn(text, model="fake/tools", history=history, tool_results=results)

    assert refused.value.param == param and model.sent == []


def test_an_offer_that_asks_nothing_reads_as_none() -> None:
    offer = checked_tools([], "none", None, {"type": "text"})

    assert not offer and offer.chosen() == {}


@pytest.mark.floor("turn", "forget")
def test_forgetting_the_turns_forgets_their_calls_and_results(
    mind: mindledger.MindLedger, model: ToolModel
) -> None:
    first = asked(mind)
    assert first.tool_calls is not None
    call_id = first.tool_calls[0].id
    second = mind.turn(
        "",
        model="fake/tools",
        history=calling(call_id),
        tool_results=[{"tool_call_id": call_id, "content": "secret forecast Zqxsunny"}],
    )

    mind.forget("turn", first.turn)
    mind.forget("turn", second.turn)
    shown = json.dumps(mind.log(limit=200).model_dump(mode="json"))

    # Words no hash or id can hold (a digit code was found inside an event hash 1 time in 50).
    assert "get_weather" not in shown and "Zqxsunny" not in shown
    assert events(mind, "mind.turn.replied")[0]["tool_calls"] == []
    assert mind.verify().ok


@pytest.mark.floor("turn", "export")
def test_turns_with_tools_export_verify_import_and_replay_the_same(
    mind: mindledger.MindLedger, model: ToolModel, tmp_path: Path
) -> None:
    first = asked(mind)
    assert first.tool_calls is not None
    call_id = first.tool_calls[0].id
    mind.turn(
        "",
        model="fake/tools",
        history=calling(call_id),
        tool_results=[{"tool_call_id": call_id, "content": "18C"}],
    )

    mind.export(tmp_path / "out")
    exported = next((tmp_path / "out").glob("*.jsonl"))
    checked = mindledger.verify_export(exported)
    mindledger.import_ledger(exported, tmp_path / "copy", now=NOW)
    with mindledger.open(tmp_path / "copy", now=NOW) as copy:
        replayed = copy.replay(tmp_path / "replayed.duckdb", check=True)
        verified = copy.verify()
        results = [
            e["tool_results"] for e in events(copy, "mind.turn.started") if e["tool_results"]
        ]

    assert checked.ok and verified.ok and replayed.identical is True
    assert results == [[{"tool_call_id": call_id, "content": "18C"}]]


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=10,
)
NEAR = st.sampled_from(
    [
        WEATHER,
        {"type": "function", "function": {"name": "f", "strict": "yes"}},
        {"type": "json_object"},
    ]
)


@given(
    tools=st.none() | st.lists(NEAR | JSON, max_size=3) | JSON,
    choice=st.sampled_from(
        ["auto", "none", "required", {"type": "function", "function": {"name": "get_weather"}}]
    )
    | JSON,
    parallel=JSON,
    output=NEAR | JSON,
    results=st.lists(
        JSON | st.fixed_dictionaries({"tool_call_id": JSON, "content": JSON}), max_size=3
    ),
)
@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])  # a busy machine
def test_any_offer_or_results_are_checked_or_refused_by_name(
    tools: Any, choice: Any, parallel: Any, output: Any, results: list[Any]
) -> None:
    try:
        offer = checked_tools(tools, choice, parallel, output)
    except InvalidInputError as e:
        assert e.param in ("tools", "tool_choice", "parallel_tool_calls", "response_format")
    else:
        assert json.loads(json.dumps(offer.chosen(), allow_nan=False)) == offer.chosen()
    try:
        checked = checked_results(results)
    except InvalidInputError as e:
        assert (e.param or "").startswith("tool_results")
    else:
        assert all(set(r) == {"tool_call_id", "content"} for r in checked)
