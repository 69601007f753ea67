"""The wheel adds one importable name to site-packages, `mindledger`: the repository's top-level
folders ship inside it (through the symlinks in mindledger/) as real files, and a program with
its own `cli`, `service` and `domain` packages runs beside it
(docs/decisions/0100-one-name-in-site-packages.md).

Nothing is downloaded: the wheel is built from a copy of the repository with this venv's
setuptools (--no-build-isolation), installed into a fresh venv with no pip of its own whose
dependencies are this venv's site-packages (a .pth file), and run from outside the repository
with no PYTHONPATH."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.slow

SUBPACKAGES = ("domain", "projections", "adapters", "cli", "service")
# Not part of the source: never copied for the build.
NOT_SOURCE = {".git", ".venv", "build", "dist", ".mypy_cache", ".ruff_cache", ".pytest_cache"}
NOT_SOURCE_ANYWHERE = {"__pycache__", ".hypothesis"}
# Nothing fetched, nothing cached: this venv's setuptools builds, the wheel file installs.
OFFLINE = ("--no-deps", "--no-index", "--no-cache-dir", "--disable-pip-version-check", "-q")


def clean_env(tmp: Path) -> dict[str, str]:
    """The caller's environment without PYTHONPATH (nor any other PYTHON* or MIND_* setting),
    with HOME in `tmp`, and no server and no network for the commands."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "MIND_"))}
    env.update(HOME=str(tmp), MIND_NO_SERVER="1", LITELLM_OFFLINE_MODE="true")
    return env


def run(
    args: Sequence[str | Path], cwd: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=180
    )


def ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, (
        f"{done.args}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    )
    return done.stdout


def source_copy(dest: Path) -> Path:
    """The repository's files as a build sees them (symlinks kept as symlinks), without caches,
    the venv or an earlier build's leftovers."""

    def ignore(folder: str, names: list[str]) -> set[str]:
        skip = {n for n in names if n in NOT_SOURCE_ANYWHERE or n.endswith(".egg-info")}
        return skip | (set(names) & NOT_SOURCE if Path(folder) == REPO else set())

    shutil.copytree(REPO, dest, symlinks=True, ignore=ignore)
    return dest


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the wheel, the source it was built from)."""
    tmp = tmp_path_factory.mktemp("build")
    src = source_copy(tmp / "src")
    out = tmp / "dist"
    done = run(
        [sys.executable, "-m", "pip", "wheel", *OFFLINE, "--no-build-isolation", "-w", out, src],
        cwd=tmp,
        env=clean_env(tmp),
    )
    if done.returncode != 0 and "invalid command 'bdist_wheel'" in done.stdout + done.stderr:
        # setuptools < 70.1 builds wheels only with the `wheel` package; without it a build
        # offline is impossible (a build with isolation would download a setuptools).
        pytest.skip(
            "this venv's setuptools cannot build a wheel (setuptools < 70.1 and no `wheel`): "
            "the dev extras need setuptools>=70.1"
        )
    ok(done)
    [wheel] = out.glob("mindledger-*.whl")
    return wheel, src


def source_files(src: Path) -> dict[str, Path]:
    """What the wheel must hold under mindledger/: the floor's own modules and every file of
    the five folders (the web page's assets too), as `mindledger/...` names."""
    files = {f"mindledger/{p.name}": p for p in (src / "mindledger").glob("*.py")}
    for folder in SUBPACKAGES:
        for p in (src / folder).rglob("*"):
            if p.is_file() and "__pycache__" not in p.parts:
                files[f"mindledger/{p.relative_to(src).as_posix()}"] = p
    return files


def test_the_wheel_holds_only_mindledger_with_the_linked_folders_as_real_files(
    built: tuple[Path, Path],
) -> None:
    wheel, src = built
    with zipfile.ZipFile(wheel) as z:
        infos = z.infolist()
        names = {i.filename for i in infos}
        expected = source_files(src)
        same = {n for n, path in expected.items() if n in names and z.read(n) == path.read_bytes()}
        dist_info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
        entry_points = z.read(f"{dist_info}/entry_points.txt").decode()

    assert {n.split("/")[0] for n in names} == {"mindledger", dist_info}
    assert dist_info.startswith("mindledger-")
    assert {n for n in names if n.startswith("mindledger/")} == set(expected)
    assert same == set(expected)  # each file is the source's, not a link to it
    assert [i.filename for i in infos if stat.S_ISLNK(i.external_attr >> 16)] == []
    assert {
        "mindledger/service/web/static/index.html",
        "mindledger/service/web/static/app.js",
        "mindledger/service/web/static/app.css",
    } <= names
    assert "mind = mindledger.cli.main:main" in entry_points


# A program with its own packages named like our folders, importing ours beside them.
PROGRAM = """\
import contextlib, importlib.resources, io, json, sys
import cli, domain, service
import mindledger, mindledger.cli.main, mindledger.domain.events

help_text = io.StringIO()
sys.argv = ["mind", "--help"]
with contextlib.redirect_stdout(help_text):
    try:
        mindledger.cli.main.main()
    except SystemExit as exit:
        code = exit.code
static = importlib.resources.files("mindledger.service.web") / "static" / "index.html"
print(json.dumps({
    "own": [cli.OWN, domain.OWN, service.OWN],
    "own_files": [cli.__file__, domain.__file__, service.__file__],
    "help": [code, help_text.getvalue()],
    "mindledger": mindledger.__file__,
    "events": mindledger.domain.events.__file__,
    "static": static.is_file(),
    "bare": sorted(n for n in sys.modules if n.split(".")[0] in BARE),
}))
"""


def write_program(folder: Path) -> Path:
    for name in ("cli", "service", "domain"):
        (folder / name).mkdir(parents=True)
        (folder / name / "__init__.py").write_text('OWN = "mine"\n', encoding="utf-8")
    main = folder / "main.py"
    main.write_text(f"BARE = {SUBPACKAGES!r}\n{PROGRAM}", encoding="utf-8")
    return main


def outer_site_packages() -> list[str]:
    """Where this interpreter finds the dependencies (site-packages folders only: never the
    repository itself, which pytest puts on sys.path)."""
    return [p for p in sys.path if "site-packages" in Path(p).parts and Path(p).is_dir()]


def listing(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


def test_the_installed_wheel_adds_one_name_and_runs_beside_a_programs_own_cli(
    built: tuple[Path, Path], tmp_path: Path
) -> None:
    wheel, _ = built
    env = clean_env(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    venv = tmp_path / "venv"
    ok(run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=elsewhere, env=env))
    python, bin_dir = venv / "bin" / "python", venv / "bin"
    purelib = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = Path(ok(run([python, "-c", purelib], cwd=elsewhere, env=env)).strip())
    (site / "outer.pth").write_text("\n".join(outer_site_packages()) + "\n", encoding="utf-8")
    before = listing(site), listing(bin_dir)

    # This venv's pip, run by the new interpreter: it installs there, scripts included;
    # --ignore-installed leaves the editable mindledger it also sees (through outer.pth) alone.
    ok(
        run(
            [python, "-m", "pip", "install", *OFFLINE, "--ignore-installed", wheel],
            cwd=elsewhere,
            env=env,
        )
    )

    dist_info = wheel.name.split("-py")[0] + ".dist-info"
    assert listing(site) - before[0] == {"mindledger", dist_info}
    assert before[0] - listing(site) == set()
    assert listing(bin_dir) - before[1] == {"mind"}
    assert "Usage: mind" in ok(run([bin_dir / "mind", "--help"], cwd=elsewhere, env=env))
    ok(run([python, "-c", "import mindledger"], cwd=elsewhere, env=env))
    probe = f"import importlib.util as u; print([u.find_spec(n) for n in {SUBPACKAGES!r}])"
    assert ok(run([python, "-c", probe], cwd=elsewhere, env=env)).strip() == str([None] * 5)

    program = write_program(tmp_path / "program")
    seen: dict[str, Any] = json.loads(ok(run([python, program], cwd=elsewhere, env=env)))

    assert seen["own"] == ["mine"] * 3
    assert [Path(f).parent.parent for f in seen["own_files"]] == [program.parent] * 3
    assert seen["help"][0] in (0, None) and "Usage:" in seen["help"][1]
    assert seen["bare"] == ["cli", "domain", "service"]  # the program's own, nothing under them
    assert seen["static"] is True
    for loaded in (seen["mindledger"], seen["events"]):
        assert Path(loaded).is_relative_to(site), loaded
        assert not Path(loaded).resolve().is_relative_to(REPO), loaded
    assert Path(seen["events"]) == site / "mindledger" / "domain" / "events.py"
