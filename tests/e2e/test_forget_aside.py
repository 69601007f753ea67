"""A forget builds its read model aside while turns go on, then swaps it in: a turn recorded
meanwhile that quotes what goes is forgotten with it, and the read model is what a replay from 0
gives; an aside the final plan does not match is dropped for a rebuild, with the same result."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from mindledger import forget_aside
from mindledger.compose import Home
from mindledger.domain.forgetting import Selector
from tests.conftest import Result
from tests.e2e.forget_memories import files_holding, forget, read_side, turn, verified
from tests.e2e.test_forget_from_base import differences, remember

Cli = Callable[..., Result]
CANARY = "Zqxaside"


def spy_on_swaps(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    swapped: list[Path] = []
    real = forget_aside.swap_in

    def swap_in(home: Home, first_position: int | None) -> None:
        swapped.append(home.path)
        real(home, first_position)

    monkeypatch.setattr(forget_aside, "swap_in", swap_in)
    return swapped


def test_a_turn_recorded_while_the_aside_is_built_is_forgotten_with_it(
    cli: Cli, mind_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    turn(cli, "The lantern is by the door", "Noted.")
    doomed = remember(cli, f"{CANARY} opens the vault")
    real_build = forget_aside.build

    def build_then_turn(home: Home, selector: Selector) -> forget_aside.Aside | None:
        built = real_build(home, selector)
        turn(cli, "What opens the vault?", "Something I kept.")  # its prompt quotes the item
        return built

    monkeypatch.setattr(forget_aside, "build", build_then_turn)
    swapped = spy_on_swaps(monkeypatch)

    done = forget(cli, "--knowledge", doomed)

    assert done.exit_code == 0, done.stderr
    assert swapped == [mind_home]
    assert done.json()["context_turns"] == 1  # the turn recorded meanwhile
    replayed = tmp_path / "replayed.duckdb"
    assert cli("replay", "--into", str(replayed), "--json").exit_code == 0
    assert differences(mind_home, replayed) == {}
    assert files_holding(mind_home, f"{CANARY} opens") == []
    assert f"{CANARY} opens" not in read_side(cli, tmp_path / "shown")
    assert not list(mind_home.glob("readmodel.aside*"))
    assert verified(cli)


def test_an_aside_the_final_plan_does_not_match_is_dropped_for_a_rebuild(
    cli: Cli, mind_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    turn(cli, f"The vault word is {CANARY}", "Kept.")
    doomed = remember(cli, f"{CANARY} opens the vault")
    real_build = forget_aside.build

    def build_hiding_nothing(home: Home, selector: Selector) -> forget_aside.Aside | None:
        built = real_build(home, selector)
        assert built is not None
        # As if the plan had found nothing when the aside was built: it holds the words.
        empty = type(built.plan)(built.plan.forget_id, selector)
        return forget_aside.Aside(empty, built.position, built.planner)

    monkeypatch.setattr(forget_aside, "build", build_hiding_nothing)
    swapped = spy_on_swaps(monkeypatch)

    done = forget(cli, "--knowledge", doomed)

    assert done.exit_code == 0, done.stderr
    assert swapped == []
    replayed = tmp_path / "replayed.duckdb"
    assert cli("replay", "--into", str(replayed), "--json").exit_code == 0
    assert differences(mind_home, replayed) == {}
    assert files_holding(mind_home, f"{CANARY} opens") == []
    assert not list(mind_home.glob("readmodel.aside*"))
    assert verified(cli)
