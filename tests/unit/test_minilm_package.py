"""The offline model's package probe (adapters/minilm_package.py): a copy of the package that
fails on import, however it fails, is absent with the reason, and the command goes on."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mindledger.adapters import minilm_package
from mindledger.adapters.minilm_package import MODULE


def _state_with(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str
) -> tuple[Path | None, str]:
    """The probe's answer with a module of the package's name, holding `body`, first on the path."""
    (tmp_path / f"{MODULE}.py").write_text(body)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, MODULE, raising=False)
    return minilm_package.package_state.__wrapped__()


@pytest.mark.parametrize(
    ("body", "cause"),
    [
        ('raise RuntimeError("this copy is broken")\n', "RuntimeError: this copy is broken"),
        ("raise SystemExit(0)\n", "SystemExit: 0"),  # ended the command, exit 0, nothing said
        ('raise SystemExit("bye")\n', "SystemExit: bye"),
        ("raise GeneratorExit\n", "GeneratorExit"),  # a traceback
        ("class Odd(BaseException):\n    pass\nraise Odd\n", "Odd"),
    ],
)
def test_a_package_that_raises_anything_on_import_is_absent_with_why(
    body: str, cause: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, why = _state_with(tmp_path, monkeypatch, body)

    assert folder is None
    assert why == f"{MODULE} at {tmp_path / MODULE}.py fails on import ({cause})"


def test_an_interrupt_while_the_package_imports_stays_an_interrupt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(KeyboardInterrupt):
        _state_with(tmp_path, monkeypatch, "raise KeyboardInterrupt\n")
