"""The floor gives each use case the same data through every front-end: the Python API
(`mindledger.open`, a typed result whose JSON dump is the data), `mind ... --json`, the HTTP API
and MCP's structured content (parsed JSON equal)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

import mindledger
from mindledger.compose import Home
from mindledger.domain.errors import InvalidInputError, NotInitialisedError
from mindledger.service.app import build_app
from mindledger.service.minds import Minds
from tests.conftest import Result


@pytest.fixture
def filled(cli: Callable[..., Result], mind_home: Path) -> Path:
    """A mind with a commitment, a concept, a thread, a turn and a knowledge item."""
    for args in (
        ("commit", "Send the weekly report on Friday"),
        ("concept", "define", "boiler", "The heating unit in the cellar"),
        ("thread", "open", "Which supplier?", "--content", "Two quotes came in for the boiler"),
        ("turn", "Remind me about the report", "--model", "mock", "--mock-reply", "Noted."),
        (
            "remember",
            "4471",
            "--question",
            "What is the boiler code?",
            "--state",
            "verified",
            "--confidence",
            "0.95",
        ),
    ):
        result = cli(*args)
        assert result.exit_code == 0, (args, result.output, result.stderr)
    return mind_home


@pytest.fixture
def http(filled: Path) -> Iterator[Callable[..., Any]]:
    minds = Minds.open([Home(filled)])
    served = next(iter(minds))
    headers = {"Authorization": f"Bearer {served.token}"}
    # A client on this machine, as the command line is: one elsewhere is told "the mind's
    # home" instead of the status's path (tests/service/test_client_paths.py).
    local = ("127.0.0.1", 50000)
    with TestClient(build_app(minds), raise_server_exceptions=False, client=local) as client:

        def call(method: str, tail: str, **kwargs: Any) -> Any:
            reply = client.request(
                method, f"/v1/minds/{served.name}{tail}", headers=headers, **kwargs
            )
            assert reply.status_code < 500, reply.text
            return reply.json()

        yield call
    minds.close(10)


# use case -> (Python API call, CLI arguments, HTTP request)
READS: dict[str, tuple[Callable[[Any], Any], list[str], tuple[str, str, dict[str, Any]]]] = {
    "recall": (
        lambda m: m.recall("weekly report"),
        ["recall", "weekly report", "--no-server"],
        ("GET", "/recall", {"params": {"q": "weekly report"}}),
    ),
    "commitments": (lambda m: m.commitments(), ["commitments"], ("GET", "/commitments", {})),
    "threads": (lambda m: m.threads(), ["threads"], ("GET", "/threads", {})),
    "concepts": (lambda m: m.concepts(), ["concepts"], ("GET", "/concepts", {})),
    "identity": (lambda m: m.identity(), ["identity"], ("GET", "/identity", {})),
    "status": (lambda m: m.status(), ["status"], ("GET", "/status", {})),
    "log": (lambda m: m.log(), ["log"], ("GET", "/log", {})),
    "verify": (lambda m: m.verify(), ["verify"], ("POST", "/verify", {})),
    "query": (
        lambda m: m.query("SELECT cid, text FROM commitments"),
        ["query", "SELECT cid, text FROM commitments"],
        ("POST", "/query", {"json": {"sql": "SELECT cid, text FROM commitments"}}),
    ),
    "forget (dry run)": (
        lambda m: m.forget("speaker", "user", dry_run=True),
        ["forget", "--speaker", "user", "--dry-run"],
        ("POST", "/forget", {"json": {"selector": "speaker", "value": "user", "dry_run": True}}),
    ),
}


@pytest.mark.parametrize("use_case", sorted(READS))
def test_a_read_gives_the_same_data_through_python_the_command_line_and_http(
    use_case: str,
    filled: Path,
    cli: Callable[..., Result],
    http: Callable[..., Any],
) -> None:
    through_python, arguments, (method, tail, request) = READS[use_case]

    with mindledger.open(filled) as mind:
        from_python = through_python(mind)
    from_cli = cli(*arguments, "--json")
    from_http = http(method, tail, **request)

    assert from_cli.exit_code == 0, from_cli.stderr
    shapes = [from_python.model_dump(mode="json"), from_cli.json(), from_http]
    if use_case.startswith("forget"):  # each plan is named anew (the id a real forget records)
        shapes = [{k: v for k, v in s.items() if k != "forget_id"} for s in shapes]
    assert shapes[0] == shapes[1] == shapes[2]
    assert from_python  # something real was compared


# Fields a new write makes anew each time (ids, timings), and the ledger positions it lands at.
FRESH = {"turn", "latency_ms", "events", "seq"}


def _stable(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in FRESH}


def test_a_turn_gives_the_same_data_through_python_the_command_line_and_http(
    filled: Path, cli: Callable[..., Result], http: Callable[..., Any]
) -> None:
    said = {"model": "mock", "mock_reply": "Noted: the report."}

    with mindledger.open(filled) as mind:
        from_python = mind.turn("Log the report", model="mock", mock_reply=said["mock_reply"])
    from_cli = cli(
        "turn", "Log the report", "--model", "mock", "--mock-reply", said["mock_reply"],
        "--no-server", "--json",
    )  # fmt: skip
    from_http = http("POST", "/turns", json={"text": "Log the report", **said})

    assert from_cli.exit_code == 0, from_cli.stderr
    shapes = [_stable(from_python.model_dump(mode="json")), _stable(from_cli.json())]
    shapes.append(_stable(from_http))
    # The context grows with the ledger: each turn sees the one before.
    for shape in shapes:
        shape.pop("context"), shape.pop("context_tokens")
    assert shapes[0] == shapes[1] == shapes[2]
    assert shapes[0]["reply"] == "Noted: the report."


def test_ask_gives_the_same_answer_through_python_the_command_line_and_http(
    filled: Path, cli: Callable[..., Result], http: Callable[..., Any]
) -> None:
    with mindledger.open(filled) as mind:
        from_python = mind.ask("What is the boiler code?")
    from_cli = cli("ask", "What is the boiler code?", "--json")
    from_http = http("POST", "/ask", json={"question": "What is the boiler code?"})

    assert from_cli.exit_code == 0, from_cli.stderr
    assert from_python.model_dump(mode="json") == from_cli.json() == from_http
    assert from_python.answer == "4471" and from_python.route == "memory-exact"
    assert from_python.turn is None  # answered from knowledge: no model, no turn


def test_a_budget_below_the_floor_is_refused_by_the_floor_and_writes_nothing(
    filled: Path,
) -> None:
    with mindledger.open(filled) as mind:
        head = mind.status().head

        with pytest.raises(InvalidInputError, match="at least 200"):
            mind.turn("hi", model="mock", mock_reply="Hello", budget=199)
        with pytest.raises(InvalidInputError, match="at least 50"):
            mind.recall("hi", budget=49)

        assert mind.status().head == head


def test_opening_a_folder_without_a_mind_says_how_to_make_one(tmp_path: Path) -> None:
    with pytest.raises(NotInitialisedError, match="mind init"):
        mindledger.open(tmp_path / "nowhere")


@pytest.mark.parametrize("home", ["", "  "])
def test_an_empty_home_is_refused_not_read_as_the_current_folder(
    home: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for call in (mindledger.open, mindledger.init):
        with pytest.raises(InvalidInputError, match="`home` is empty") as refused:
            call(home)
        assert refused.value.param == "home"
    assert list(tmp_path.iterdir()) == []  # nothing made in the current folder


def test_a_setting_given_to_open_wins_over_the_environment(filled: Path) -> None:
    with mindledger.open(filled, now="2030-01-01T00:00:00Z") as mind:
        assert mind.home.settings.now is not None
        assert mind.home.settings.now.year == 2030


def test_one_turn_opens_the_application_once(
    filled: Path, cli: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    from mindledger.domain.application import Mind

    opened: list[int] = []
    real_init = Mind.__init__

    def counting(self: Mind, *args: Any, **kwargs: Any) -> None:
        opened.append(1)
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(Mind, "__init__", counting)

    result = cli("turn", "hi", "--model", "mock", "--mock-reply", "Hello", "--json")

    assert result.exit_code == 0, result.stderr
    assert result.json()["reply"] == "Hello"
    assert len(opened) == 1


def test_an_mcp_turn_gives_the_turn_json_as_structured_content_and_pmm_text_beside_it(
    filled: Path, cli: Callable[..., Result]
) -> None:
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from mindledger.service.mcp_server import mind_mcp

    reply = "Noted: the report."
    # The setting scripts `mock` for the server (its agents are offered no script).
    minds = Minds.open([Home(filled).with_flags(mock_reply=("`mock_reply`", reply))])
    served = next(iter(minds))
    try:
        with ThreadPoolExecutor(1) as pool:
            result: Any = asyncio.run(
                mind_mcp(served, pool).call_tool(
                    "turn", {"text": "Log the report", "model": "mock"}
                )
            )
    finally:
        minds.close(10)
    from_cli = cli(
        "turn", "Log the report", "--model", "mock", "--mock-reply", reply, "--no-server", "--json"
    )

    assert not result.is_error
    assert from_cli.exit_code == 0, from_cli.stderr
    from_mcp, from_command = _stable(result.structured_content), _stable(from_cli.json())
    for shape in (from_mcp, from_command):
        shape.pop("context"), shape.pop("context_tokens")
    assert from_mcp == from_command
    assert from_mcp["reply"] == "Noted: the report."
    # The text a text-only client reads is the structured content itself.
    assert json.loads(result.content[0].text) == result.structured_content


def test_remember_gives_the_same_change_through_python_the_command_line_and_http(
    filled: Path, cli: Callable[..., Result], http: Callable[..., Any]
) -> None:
    with mindledger.open(filled) as mind:
        from_python = mind.remember("Tuesday", question="When is the bin day?", confidence=0.8)
    from_cli = cli(
        "remember", "Ms Li", "--question", "Who fixed the boiler?", "--confidence", "0.8", "--json"
    )
    from_http = http(
        "POST",
        "/knowledge",
        json={"text": "Mr Okafor", "question": "Who sold the boiler?", "confidence": 0.8},
    )

    assert from_cli.exit_code == 0, from_cli.stderr
    python_json = from_python.model_dump(mode="json")
    ids = {python_json.pop("id"), from_cli.json().get("id"), from_http.pop("id")}
    assert len(ids) == 3  # three questions, three items
    assert python_json == {k: v for k, v in from_cli.json().items() if k != "id"} == from_http
    assert python_json == {
        "revision": 1,
        "state": "unverified",
        "confidence_ppm": 800000,
        "created": True,
    }
