"""The OpenAPI document is one clients can be generated from: it passes a spec validator, and
Schemathesis, driven by it alone, finds no 5xx, no answer outside the route's published schema
or status codes, and no request the document calls invalid that the server accepts. Each route
is seen accepting (2xx) and refusing (4xx) a request; the ledger verifies afterwards.

Kept cheap: one app for the whole run (in-process, the app `mind serve` serves), a few
derandomized examples per route and mode, no shrinking. Turns run on the scripted `mock` model:
a generated model name or server URL is replaced, since either would reach for a network."""

from __future__ import annotations

import importlib
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from openapi_spec_validator import validate
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)
from starlette.testclient import TestClient

from mindledger.compose import Home
from mindledger.service.app import OPTIONAL_EXTENSIONS, build_app
from mindledger.service.minds import Minds
from tests.conftest import Result

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    negative_data_rejection,
]
EXAMPLES = 4  # per route and generation mode
MIND = "/v1/minds/{name}"
Route = tuple[str, str]  # (METHOD, path as the document names it)


def _openai_extensions(minds: Minds) -> list[Any]:
    """The OpenAI-compatible routes (MCP and the web page add no documented route)."""
    names = [n for n in OPTIONAL_EXTENSIONS if ".openai_" in n]
    return [importlib.import_module(n).extension(minds) for n in names]


def test_the_document_passes_the_openapi_spec_validator() -> None:
    minds = Minds([])
    document = build_app(minds, extensions=_openai_extensions(minds)).state.openapi()

    validate(document)

    bodies = {
        f"{method.upper()} {path}": op["requestBody"]["content"]["application/json"]["schema"]
        for path, ops in document["paths"].items()
        for method, op in ops.items()
        if "requestBody" in op
    }
    schemas = document["components"]["schemas"]
    closed = {
        route: schemas[ref["$ref"].rsplit("/", 1)[1]].get("additionalProperties")
        for route, ref in bodies.items()
    }
    assert closed and set(closed.values()) == {False}, closed
    every = [op for ops in document["paths"].values() for op in ops.values()]
    assert all({"200", "4XX", "5XX"} <= set(op["responses"]) for op in every)


def _seed(cli: Callable[..., Result]) -> dict[str, str]:
    """A mind with something for each write route to act on; its turns on the scripted model."""
    assert cli("model", "set", "mock").exit_code == 0
    thread = cli("thread", "open", "First frost?", "--content", "For the ferns", "--json")
    made = {
        "cid": cli("commit", "Water the ferns", "--json").json()["cid"],
        "thread": thread.json()["id"],
        "token": "garden.ferns",
    }
    assert cli("concept", "define", "garden.ferns", "The ferns by the door").exit_code == 0
    kept = cli("remember", "4471", "--question", "What is the boiler code?", "--json")
    made["ref"] = kept.json()["id"]
    made["live"] = cli("thread", "open", "Hedge?", "--content", "Trim it", "--json").json()["id"]
    return made


def _accepted(made: dict[str, str]) -> dict[Route, dict[str, Any]]:
    """A request each route accepts, as a Case's fields (in the order they run)."""
    mock = {"mock_reply": "Noted."}
    openai = {"model": "mind/Echo", "mind_options": mock}
    chat = {**openai, "messages": [{"role": "user", "content": "Hello"}]}
    return {
        ("GET", "/healthz"): {},
        ("GET", "/v1/minds"): {},
        ("POST", f"{MIND}/turns"): {"body": {"text": "Remind me to water the ferns", **mock}},
        ("GET", f"{MIND}/recall"): {"query": {"q": "ferns"}},
        ("GET", f"{MIND}/commitments"): {"query": {"all": "true"}},
        ("GET", f"{MIND}/threads"): {},
        ("GET", f"{MIND}/concepts"): {},
        ("GET", f"{MIND}/identity"): {},
        ("GET", f"{MIND}/status"): {},
        ("GET", f"{MIND}/log"): {"query": {"limit": 5}},
        ("POST", f"{MIND}/verify"): {},
        ("POST", f"{MIND}/query"): {"body": {"sql": "SELECT count(*) AS n FROM events"}},
        ("GET", f"{MIND}/events"): {},
        ("GET", f"{MIND}/knowledge"): {},
        ("POST", f"{MIND}/knowledge"): {"body": {"text": "Blue", "question": "Shed colour?"}},
        ("GET", f"{MIND}/knowledge/{{ref}}"): {},
        ("POST", f"{MIND}/knowledge/{{ref}}/verify"): {"body": {}},
        ("POST", f"{MIND}/knowledge/{{ref}}/dispute"): {"body": {"note": "unsure"}},
        ("POST", f"{MIND}/knowledge/{{ref}}/retract"): {"body": {}},
        ("POST", f"{MIND}/knowledge/{{ref}}/edit"): {"body": {"answer": "4472"}},
        ("POST", f"{MIND}/ask"): {"body": {"question": "What colour is the gate?", **mock}},
        ("POST", f"{MIND}/turns/{{turn}}/approve"): {},
        ("POST", f"{MIND}/turns/{{turn}}/discard"): {"body": {}},
        ("POST", f"{MIND}/knowledge/{{ref}}/delete"): {"body": {}},
        ("POST", f"{MIND}/forget"): {
            "body": {"selector": "speaker", "value": "user", "dry_run": True}
        },
        ("POST", f"{MIND}/commitments/{{cid}}/close"): {"body": {"reason": "watered"}},
        ("POST", f"{MIND}/threads/{{thread}}/resolve"): {
            "body": {"verdict": "dissolved", "reason": "it never frosts here"}
        },
        ("POST", f"{MIND}/concepts/{{token}}/define"): {"body": {"definition": "Ferns"}},
        ("POST", f"{MIND}/concepts/{{token}}/aliases"): {"body": {"alias": "garden.fronds"}},
        ("GET", "/v1/models"): {},
        ("GET", "/v1/models/{model}"): {},
        ("POST", "/v1/chat/completions"): {"body": chat},
        ("POST", "/v1/completions"): {"body": {**openai, "prompt": "Hello"}},
        ("POST", "/v1/embeddings"): {"body": {"model": "mind/Echo", "input": "ferns"}},
        ("POST", "/v1/responses"): {"body": {**openai, "input": "Hello"}},
    }


def _offline(case: Any) -> None:
    """Keep a generated turn on the scripted model and off the network: a model name becomes
    `mock` (`mind/Echo` on the OpenAI routes), a server URL is dropped, the script is fixed."""
    body = case.body
    if not isinstance(body, dict):
        return
    for options in (body, body.get("mind_options")):
        if isinstance(options, dict):
            if isinstance(options.get("api_base"), str):
                del options["api_base"]
            if isinstance(options.get("model"), str):
                options["model"] = "mock"
            # The script stands for the model's answer, which is not the client's request: an
            # empty one is the model failing (a 502 by design), so it says something.
            if isinstance(options.get("mock_reply"), str):
                options["mock_reply"] = "Noted."
    if case.operation.path.startswith("/v1/minds/") is False and isinstance(body.get("model"), str):
        body["model"] = "mind/Echo"


def test_generated_requests_meet_the_document_and_each_route_accepts_and_refuses(
    cli: Callable[..., Result], mind_home: Path
) -> None:
    made = _seed(cli)
    minds = Minds.open([Home(mind_home)])
    app = build_app(minds, extensions=_openai_extensions(minds))
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    client = TestClient(app)
    auth = {"Authorization": f"Bearer {next(iter(minds)).token}"}
    statuses: dict[Route, list[int]] = defaultdict(list)
    turn: dict[str, str] = {}

    def send(case: Any, headers: dict[str, str] | None = auth) -> Any:
        route = (case.operation.method.upper(), case.operation.path)
        events = route[1].endswith("/events")
        if events:  # an endless stream: the server ends it at once while "stopping"
            app.state.stopping.set()
        try:
            answer = case.call(headers=headers)
        finally:
            app.state.stopping.clear()
        case.validate_response(answer, checks=CHECKS, headers=headers)
        statuses[route].append(answer.status_code)
        if route == ("POST", f"{MIND}/ask") and answer.status_code == 200:
            turn.setdefault("turn", answer.json()["turn"])
        return answer

    def path_values(path: str) -> dict[str, str]:
        values = {"name": "Echo", "model": "mind/Echo", **made, **turn}
        return {k: v for k, v in values.items() if f"{{{k}}}" in path}

    operations = {
        (op.method.upper(), op.path): op for op in (r.ok() for r in schema.get_all_operations())
    }
    accepted = _accepted(made)
    assert set(operations) == set(accepted)

    for route, fields in accepted.items():
        operation = operations[route]
        send(operation.Case(path_parameters=path_values(route[1]), **fields))
        # Refused: a mind no token opens; on routes without one, no token or a stray parameter.
        if "{name}" in route[1]:
            send(operation.Case(path_parameters={**path_values(route[1]), "name": "Nobody"}))
        elif route == ("GET", "/healthz"):
            send(operation.Case(query={"verbose": "1"}))
        else:
            send(operation.Case(path_parameters=path_values(route[1])), headers=None)

    for route, operation in operations.items():
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            strategy = operation.as_strategy(
                generation_mode=mode, path_parameters=path_values(route[1])
            )

            @settings(
                max_examples=EXAMPLES,
                derandomize=True,
                database=None,
                deadline=None,
                phases=[Phase.generate],
                suppress_health_check=list(HealthCheck),
            )
            @given(strategy)
            def each(case: Any) -> None:
                _offline(case)
                send(case)

            try:
                each()
            except Unsatisfiable:  # nothing to vary: no parameters, no body (GET /healthz)
                assert mode == GenerationMode.NEGATIVE, route

    # A refusal names the request field, in the message too: never a command line's flag.
    chat_hot = {"model": "mind/Echo", "messages": [{"role": "user", "content": "Hi"}]}
    refusals = [
        ("forget", {"selector": "speaker", "value": "Nobody"}, "value", 404, "`speaker` Nobody"),
        (f"threads/{made['live']}/resolve", {"verdict": "dissolved"}, "reason", 400, "`reason`"),
        (
            "turns",
            {"text": "hi", "sampling": {"temperature": 5}},
            "sampling.temperature",
            400,
            "'sampling.temperature' is 5; it must be at most 2",
        ),
        ("turns", {"text": "hi", "budget": 10**4000}, "budget", 400, "'budget' is a number of"),
        (
            "/v1/chat/completions",
            {**chat_hot, "temperature": 10**4000},
            "temperature",
            400,
            "`temperature` is a number of about 4001 digits",
        ),
    ]
    unauthorized = client.get("/v1/minds")  # the whole line, nothing taken for a credential
    assert "after the word Bearer" in unauthorized.json()["error"]["message"]
    for path, body, param, status, words in refusals:
        url = path if path.startswith("/") else f"/v1/minds/Echo/{path}"
        refused = client.post(url, json=body, headers=auth)
        error = refused.json()["error"]
        assert (refused.status_code, error["param"]) == (status, param), error
        assert words in error["message"] and "--" not in error["message"], error

    schemathesis.python.asgi.shutdown_lifespans()
    minds.close(10)
    missing = {
        f"{m} {p}": sorted(set(s))
        for (m, p), s in statuses.items()
        if not (any(200 <= c < 300 for c in s) and any(400 <= c < 500 for c in s))
    }
    assert missing == {}
    verified = cli("verify", "--json")
    assert verified.exit_code == 0 and verified.json()["ok"] is True, verified.output
