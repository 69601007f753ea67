"""`mind import ledger` into each backend: the same genesis and head; a tampered file leaves the
target ledger empty."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mindledger.cli.main import mind
from mindledger.compose import open_reader
from tests.integration.backends import BACKENDS, backend_home


def _run(home: Path, *args: str) -> Any:
    return CliRunner().invoke(mind, ["--home", str(home), *args], catch_exceptions=False)


@pytest.fixture
def exported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict[str, Any]]:
    """An export of a small SQLite mind, and that mind's status."""
    monkeypatch.setenv("MIND_NOW", "2026-05-01T09:00:00Z")
    monkeypatch.delenv("MIND_BACKEND", raising=False)
    source = tmp_path / "source"
    for args in (
        ["init", "--name", "Echo"],
        ["commit", "Send the report"],
        ["turn", "hi", "--model", "mock", "--mock-reply", "Sure.\nCOMMIT: stretch hourly"],
        ["export", str(tmp_path / "out"), "--format", "jsonl"],
    ):
        assert _run(source, *args).exit_code == 0
    status = json.loads(_run(source, "status", "--json").stdout)
    return tmp_path / "out" / "ledger.jsonl", status


@pytest.mark.parametrize("kind", BACKENDS)
def test_import_into_a_backend_keeps_the_genesis_and_head(
    kind: str, tmp_path: Path, exported: tuple[Path, dict[str, Any]]
) -> None:
    path, status = exported
    with backend_home(kind, tmp_path / "target") as home:
        imported = _run(home.path, "import", "ledger", str(path), "--json")

        assert imported.exit_code == 0, imported.output
        assert json.loads(imported.stdout)["backend"] == kind
        restored = json.loads(_run(home.path, "status", "--json").stdout)
        assert (restored["ledger_id"], restored["head"]) == (status["ledger_id"], status["head"])
        assert _run(home.path, "verify").exit_code == 0
        listed = json.loads(_run(home.path, "commitments", "--json").stdout)
        assert sorted(c["text"] for c in listed) == ["Send the report", "stretch hourly"]


@pytest.mark.parametrize("kind", BACKENDS)
def test_a_tampered_import_leaves_the_backend_empty(
    kind: str, tmp_path: Path, exported: tuple[Path, dict[str, Any]]
) -> None:
    path, _ = exported
    lines = path.read_text().splitlines(keepends=True)
    lines[-1] = lines[-1].replace('"topic":"mind.', '"topic":"mind.x')
    path.write_text("".join(lines))
    with backend_home(kind, tmp_path / "target") as home:
        imported = _run(home.path, "import", "ledger", str(path))
        assert imported.exit_code == 1
        assert f"line {len(lines)}:" in imported.stderr
        if kind == "postgres":
            reader = open_reader(home)
            try:
                assert reader.head() == (0, None)
            finally:
                reader.close()
        else:
            assert not home.path.exists()


@pytest.mark.parametrize("kind", BACKENDS)
def test_import_into_a_backend_holding_a_mind_is_refused_and_keeps_it(
    kind: str, tmp_path: Path, exported: tuple[Path, dict[str, Any]]
) -> None:
    path, _ = exported
    with backend_home(kind, tmp_path / "target") as home:
        assert _run(home.path, "init", "--name", "Other").exit_code == 0
        assert _run(home.path, "commit", "Keep me").exit_code == 0
        before = json.loads(_run(home.path, "status", "--json").stdout)["head"]

        imported = _run(home.path, "import", "ledger", str(path))

        assert imported.exit_code == 1
        assert "already holds" in imported.stderr
        assert json.loads(_run(home.path, "status", "--json").stdout)["head"] == before
        assert _run(home.path, "verify").exit_code == 0
