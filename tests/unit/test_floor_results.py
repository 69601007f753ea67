"""The floor's typed results: every use case returns a frozen pydantic result whose JSON dump is
what the command's `--json` prints; the async twins mirror the methods one for one."""

from __future__ import annotations

import asyncio
import inspect
import json
import subprocess
import sys
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

import mindledger
from mindledger.application import MindLedger
from mindledger.async_floor import PLUMBING, AsyncMindLedger, public_methods, use_cases
from mindledger.results import Result, Rows
from tests.conftest import REPO
from tests.conftest import Result as CliResult

RESULT_TYPES = (Result, Rows)


def _returns(fn: Any) -> Any:
    # The floor names its result types for type checkers only (they load when a use case
    # returns one), so their names are resolved against the result modules.
    import mindledger.results as results
    import mindledger.results_files as files
    import mindledger.results_knowledge as knowledge
    import mindledger.results_ledger as ledger
    import mindledger.results_listings as listings

    names = {**vars(results), **vars(knowledge), **vars(files), **vars(ledger), **vars(listings)}
    return typing.get_type_hints(fn, localns=names)["return"]


def test_every_use_case_is_annotated_with_a_result_model() -> None:
    methods = use_cases()

    returned = {name: _returns(getattr(MindLedger, name)) for name in methods}

    assert len(methods) >= 40  # every use case, not a handful
    wrong = {n: t for n, t in returned.items() if not issubclass(t, RESULT_TYPES)}
    assert wrong == {}
    assert issubclass(_returns(mindledger.init), Result)
    assert issubclass(_returns(mindledger.import_ledger), Result)


def test_the_public_methods_are_the_use_cases_and_named_plumbing() -> None:
    assert set(public_methods()) == set(use_cases()) | PLUMBING


def test_the_async_twins_mirror_every_public_method_with_its_signature() -> None:
    twins = sorted(
        name
        for name in dir(AsyncMindLedger)
        if not name.startswith("_") and inspect.iscoroutinefunction(getattr(AsyncMindLedger, name))
    )

    assert twins == public_methods()
    for name in twins:
        sync = inspect.signature(getattr(MindLedger, name))
        assert inspect.signature(getattr(AsyncMindLedger, name)) == sync, name


def test_a_result_is_frozen_and_refuses_unknown_keys() -> None:
    change = mindledger.KnowledgeChange(
        id="k1", revision=1, state="verified", confidence_ppm=950_000, created=True
    )

    with pytest.raises(ValidationError):
        change.revision = 2  # type: ignore[misc]
    with pytest.raises(ValidationError, match="extra"):
        mindledger.KnowledgeChange.model_validate({**change.model_dump(), "colour": "red"})
    with pytest.raises(ValidationError):
        mindledger.KnowledgeChange.model_validate({**change.model_dump(), "state": "sure"})


def test_a_key_a_use_case_sometimes_leaves_out_stays_out_of_the_dump() -> None:
    plan = {
        "dry_run": True,
        "forget_id": "f1",
        "selector": "speaker",
        "value": "user",
        "counts": {"turn": 2},
        "events": 4,
        "keys": 3,
        "context_turns": 0,
        "forgotten": False,
    }

    once = mindledger.ForgetResult.model_validate(plan)
    again = mindledger.ForgetResult.model_validate({**plan, "already_forgotten": True})

    assert once.model_dump(mode="json") == plan
    assert once.already_forgotten is None and "already_forgotten" not in once
    assert again.model_dump(mode="json") == {**plan, "already_forgotten": True}


def test_a_result_reads_like_the_dict_it_replaced() -> None:
    rows = mindledger.Concepts.model_validate(
        [
            {
                "token": "boiler",
                "definition": "The heating unit",
                "version": 1,
                "aliases": [],
                "defined_at": None,
                "updated_at": None,
                "relations": [{"relation": "part-of", "target": "house"}],
            }
        ]
    )

    assert len(rows) == 1 and rows[0]["token"] == "boiler" == rows[0].token
    assert [r.relations[0]["target"] for r in rows] == ["house"]
    assert isinstance(rows.model_dump(mode="json"), list)
    with pytest.raises(KeyError):
        rows[0]["colour"]


def test_query_rows_hold_values_as_the_command_line_prints_them() -> None:
    from datetime import UTC, datetime
    from decimal import Decimal

    from mindledger.safe_text import json_text

    raw = [{"at": datetime(2026, 5, 1, 9, tzinfo=UTC), "n": Decimal("2.5"), "t": "x"}]

    rows = mindledger.QueryRows.model_validate(raw)

    assert rows.model_dump(mode="json") == json.loads(json_text(raw))
    assert rows[0]["at"] == "2026-05-01T09:00:00+00:00"


@pytest.fixture
def filled(cli: Callable[..., CliResult], mind_home: Path) -> Path:
    for args in (
        ("commit", "Send the weekly report on Friday"),
        ("concept", "define", "boiler", "The heating unit in the cellar"),
        ("remember", "4471", "--question", "What is the boiler code?"),
    ):
        assert cli(*args).exit_code == 0, args
    return mind_home


# use case -> (Python call, `mind ... --json` arguments)
SAME_AS_CLI: dict[str, tuple[Callable[[MindLedger], Any], list[str]]] = {
    "commitments": (lambda m: m.commitments(), ["commitments"]),
    "concepts": (lambda m: m.concepts(), ["concepts"]),
    "identity": (lambda m: m.identity(), ["identity"]),
    "status": (lambda m: m.status(), ["status"]),
    "knowledge": (lambda m: m.knowledge(), ["knowledge", "list"]),
    "graph_stats": (lambda m: m.graph_stats(), ["graph", "stats"]),
    "report": (lambda m: m.report("activity"), ["report", "activity"]),
    "model": (lambda m: m.model(), ["model", "show"]),
}


@pytest.mark.parametrize("use_case", sorted(SAME_AS_CLI))
def test_a_results_dump_is_what_the_command_prints(
    use_case: str, filled: Path, cli: Callable[..., CliResult]
) -> None:
    through_python, arguments = SAME_AS_CLI[use_case]

    with mindledger.open(filled) as mind:
        result = through_python(mind)
    printed = cli(*arguments, "--json")

    assert printed.exit_code == 0, printed.stderr
    assert isinstance(result, RESULT_TYPES)
    assert _returns(getattr(MindLedger, use_case)) is type(result)
    assert result.model_dump(mode="json") == printed.json()


def test_a_turn_and_its_knowledge_decision_dump_what_the_commands_print(
    filled: Path, cli: Callable[..., CliResult]
) -> None:
    with mindledger.open(filled) as mind:
        turn = mind.turn("Remind me", model="mock", mock_reply="Noted.")
        shown = mind.knowledge_item("What is the boiler code?")
    printed = cli("knowledge", "show", "What is the boiler code?", "--json")

    assert isinstance(turn, mindledger.TurnResult) and turn.reply == "Noted."
    assert turn.status == "complete" and turn.failure is None
    assert shown.model_dump(mode="json") == printed.json()
    assert "history" not in printed.json()  # asked without --history: absent, not null


def test_the_async_twin_gives_the_same_result_from_a_worker_thread(filled: Path) -> None:
    async def through_the_twin(mind: MindLedger) -> Any:
        return await mind.aio.commitments()

    with mindledger.open(filled) as mind:
        direct = mind.commitments()
        twin = asyncio.run(through_the_twin(mind))

    assert twin == direct
    assert isinstance(mind.aio, AsyncMindLedger)


def test_importing_mindledger_loads_no_pydantic() -> None:
    code = "import sys, mindledger; print(any(m.startswith('pydantic') for m in sys.modules))"

    ran = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )

    assert ran.stdout.strip() == "False"


def test_a_name_a_turn_adopted_is_in_the_identity_history_with_the_turns_number(
    mind_home: Path, cli: Callable[..., CliResult]
) -> None:
    with mindledger.open(mind_home) as mind:
        mind.turn(
            "a name?", model="mock", mock_reply='Maybe.\nCLAIM:identity_proposal={"name": "Nova"}'
        )
        mind.turn("yes", model="mock", mock_reply='Done.\nCLAIM:identity_ratify={"name": "Nova"}')
        identity = mind.identity()
    printed = cli("identity", "--json")

    assert identity.name == "Nova"
    assert [(h.change, h.turn) for h in identity.history][-2:] == [
        ("name_proposed", 1),
        ("name_adopted", 2),
    ]
    assert identity.model_dump(mode="json") == printed.json()
