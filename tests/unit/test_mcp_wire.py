"""The stdio wire's own answers (`service.mcp_stdio.refusal`) and its record of unanswered
requests (`Pending`), which holds the end of the wire back until each is answered."""

from __future__ import annotations

import json
import threading

from hypothesis import given
from hypothesis import strategies as st

from mindledger.service.mcp_stdio import Pending, refusal


@given(st.text())
def test_any_line_is_passed_on_or_refused_with_one_json_rpc_error(line: str) -> None:
    answer = refusal(line)
    if answer is None:
        return
    assert answer.endswith(b"\n") and answer.count(b"\n") == 1
    message = json.loads(answer)
    assert message["jsonrpc"] == "2.0" and message["error"]["code"] in (-32700, -32600)
    assert message["id"] is None or isinstance(message["id"], int | str)


def test_a_well_formed_message_and_a_blank_line_are_the_sdks() -> None:
    assert refusal('{"jsonrpc": "2.0", "id": 1, "method": "ping"}') is None
    assert refusal('{"jsonrpc": "2.0", "method": "notifications/initialized"}') is None
    assert refusal("\n") is None


def test_the_id_of_an_invalid_request_is_kept_when_it_is_one() -> None:
    bad_params = {"jsonrpc": "2.0", "id": "x", "method": "ping", "params": 3}
    assert json.loads(refusal(json.dumps(bad_params)) or b"")["id"] == "x"
    bool_id = {"jsonrpc": "2.0", "id": True, "method": "ping"}
    assert json.loads(refusal(json.dumps(bool_id)) or b"")["id"] is None


def test_a_line_nested_too_deeply_for_the_parser_is_a_parse_error() -> None:
    deep = "[" * 100_000 + "]" * 100_000  # json.loads raised RecursionError: the session ended

    message = json.loads(refusal(deep) or b"")

    assert message["error"] == {
        "code": -32700,
        "message": "Parse error: the line is nested too deeply",
    }


def test_a_lone_surrogate_the_sdk_cannot_parse_is_a_parse_error_keeping_the_id() -> None:
    line = '{"jsonrpc": "2.0", "id": 4, "method": "ping", "params": {"q": "\\ud800"}}'

    message = json.loads(refusal(line) or b"")

    assert message["id"] == 4 and message["error"]["code"] == -32700
    assert message["error"]["message"].startswith("Parse error: ")


def test_the_end_waits_for_each_request_asked_and_is_released_by_its_answer() -> None:
    pending = Pending()
    pending.wait_all_answered()  # nothing asked: no wait
    pending.asked(1)
    pending.asked("1")  # another id
    pending.settled(True)  # not an id: nothing settled
    released = threading.Event()

    def end() -> None:
        pending.wait_all_answered()
        released.set()

    waiter = threading.Thread(target=end)
    waiter.start()
    pending.settled(1)
    assert not released.wait(timeout=0.05)  # "1" is still unanswered
    pending.settled("1")
    waiter.join(timeout=30)
    assert released.is_set()
