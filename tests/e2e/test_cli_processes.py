"""The installed `mind` command as a real process: encodings, start-up imports, verify exit code."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from mindledger.cli.main import mind
from tests.conftest import REPO, sealed_text_changed, subprocess_env

MIND = [sys.executable, "-c", "from mindledger.cli.main import main; main()"]


def spawn(home: Path, argv: list[str | bytes], timeout: float) -> subprocess.CompletedProcess[str]:
    """`argv` as a process of its own (the suite's environment, `home` as MIND_HOME)."""
    return subprocess.run(
        argv, env=subprocess_env(home), cwd=REPO, capture_output=True, text=True, timeout=timeout
    )


def run(home: Path, *args: str | bytes) -> subprocess.CompletedProcess[str]:
    return spawn(home, [*MIND, *args], 120)


def python_probe(home: Path, probe: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """`probe` run by a Python of its own."""
    return spawn(home, [sys.executable, "-c", probe], timeout)


def made_here(home: Path, *args: str) -> None:
    """`mind ARGS` in this process, in the environment `run` gives: for the set-up around the
    processes under test."""
    env = {**subprocess_env(home), "MIND_NOW": None}
    assert CliRunner(env=env).invoke(mind, list(args), catch_exceptions=False).exit_code == 0


def test_non_utf8_arguments_get_a_clear_error_not_a_traceback(tmp_path: Path) -> None:
    made_here(tmp_path, "init")

    result = run(tmp_path, b"caf\xe9 au lait")

    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    bad = run(tmp_path, "commit", b"caf\xe9 au lait")
    assert bad.returncode == 1
    assert bad.stderr.strip() == (
        "Error: argument TEXT is not valid UTF-8 (byte 0xE9); pass it as UTF-8 text"
    )


# What each command may not import: `--help` none of the heavy packages; reads and listings
# none of pyarrow, numpy (a few rows need no Arrow batch) or litellm; listings that read only the
# read model not the library that writes the ledger. Commands run in this order in one process,
# so each is checked with everything before it loaded too.
NOT_IMPORTED = {
    "--help": ("pydantic", "_duckdb", "eventsourcing", "pyarrow", "numpy", "litellm"),
    "commitments": ("eventsourcing", "pyarrow", "numpy", "litellm"),
    "threads": ("eventsourcing", "pyarrow", "numpy", "litellm"),
    "status": ("eventsourcing", "pyarrow", "numpy", "litellm"),
    "log": ("pyarrow", "numpy", "litellm"),
    "recall report": ("eventsourcing", "pyarrow", "numpy", "litellm"),
    "query SELECT 1": ("pyarrow", "numpy", "litellm"),
    "graph stats": ("litellm",),
}


def test_status_help_and_listings_import_none_of_the_heavy_packages(tmp_path: Path) -> None:
    made_here(tmp_path, "init")
    made_here(tmp_path, "commit", "Send the weekly report on Friday")
    probe = (
        "import sys; from mindledger.cli.main import mind\n"
        f"for line, absent in {NOT_IMPORTED!r}.items():\n"
        "    try: mind(line.split())\n"
        "    except SystemExit: pass\n"
        "    print('LOADED', line, sorted(m for m in absent if m in sys.modules))\n"
    )

    result = python_probe(tmp_path, probe, timeout=120)

    loaded = [x for x in result.stdout.splitlines() if x.startswith("LOADED ")]
    assert loaded == [f"LOADED {line} []" for line in NOT_IMPORTED], result.stderr


def test_a_recall_with_vectors_on_and_a_mock_turn_never_import_litellm(tmp_path: Path) -> None:
    made_here(tmp_path, "init")
    made_here(tmp_path, "commit", "Send the weekly report on Friday")
    made_here(tmp_path, "project", "--vectors")  # the vector projection, beside turns
    probe = (
        "import sys; from mindledger.cli.main import mind\n"
        "for line in (['recall', 'weekly report', '--no-server'],\n"
        "    ['turn', '--model', 'mock', '--mock-reply', 'Noted.', '--no-server', 'Hi']):\n"
        "    try: mind(line)\n"
        "    except SystemExit as e: assert not e.code, e.code\n"
        "    print('LOADED', line[0], 'litellm' in sys.modules, 'numpy' in sys.modules)\n"
    )

    result = python_probe(tmp_path, probe, timeout=300)

    loaded = [x for x in result.stdout.splitlines() if x.startswith("LOADED ")]
    # numpy: the vector channel ran (the offline embedder: the query's vector against the
    # stored items' from the vector projection's file).
    assert loaded == ["LOADED recall False True", "LOADED turn False True"], result.stderr
    assert (tmp_path / "vectors.sqlite").exists()


# What a mock turn has no use for: the other use cases' result models, the LiteLLM adapter,
# the import, concept and tick events' classes (a reader loads an event kind's module when it
# meets one; a reply's concept lines and a tick import theirs), the conversations an import or
# a caller's history observes, the threads (a reply that names one loads them), autonomy, the
# vector follower, the forget's machinery and its event (a turn only shares its lock), the
# list-shaped results (pydantic's RootModel), DuckDB's Python layer (the `duckdb` package: the
# engine, `_duckdb`, runs our SQL).
NOT_FOR_A_TURN = (
    "duckdb",
    "pydantic.root_model",
    "mindledger.results_rows",
    "mindledger.results_knowledge",
    "mindledger.results_ledger",
    "mindledger.results_listings",
    "mindledger.results_files",
    "mindledger.adapters.litellm_model",
    "mindledger.domain.foreign_import",
    "mindledger.domain.concept",
    "mindledger.domain.autonomy",
    "mindledger.domain.conversation",
    "mindledger.domain.thread",
    "mindledger.autonomy",
    "mindledger.vector_projection",
    "mindledger.forget",
    "mindledger.domain.forgetting",
)


def test_a_mock_turn_loads_only_the_results_and_event_classes_it_uses(tmp_path: Path) -> None:
    made_here(tmp_path, "init")
    made_here(tmp_path, "commit", "Send the weekly report on Friday")
    probe = (
        "import sys; from mindledger.cli.main import main\n"
        "sys.argv = ['mind', 'turn', '--model', 'mock', '--mock-reply', 'Noted.',\n"
        "    '--no-server', 'Hi']\n"
        "try: main()\n"
        "except SystemExit as e: assert not e.code, e.code\n"
        f"print('LOADED', sorted(m for m in {NOT_FOR_A_TURN!r} if m in sys.modules))\n"
    )

    result = python_probe(tmp_path, probe, timeout=300)

    assert result.stdout.splitlines()[-1:] == ["LOADED []"], result.stderr
    assert "Noted." in result.stdout


def test_verify_exits_1_naming_the_first_bad_position(tmp_path: Path) -> None:
    made_here(tmp_path, "init")
    for text in ("one", "two", "three"):
        made_here(tmp_path, "commit", text)
    con = sqlite3.connect(tmp_path / "ledger.sqlite")
    (state,) = con.execute("SELECT state FROM stored_events WHERE rowid = 3").fetchone()
    changed = sealed_text_changed(state)  # "two", sealed, edited
    con.execute("UPDATE stored_events SET state = ? WHERE rowid = 3", (changed,))
    con.commit()
    con.close()

    result = run(tmp_path, "verify", "--json")

    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert {k: data[k] for k in ("ok", "events", "first_bad", "reason", "head")} == {
        "ok": False,
        "events": 2,
        "first_bad": 3,
        "reason": "payload changed",
        "head": None,
    }
    # The head file and the read model (the writes built it): neither checked past a bad event.
    assert [a["status"] for a in data["anchors"]] == ["not checked", "not checked"]


def test_a_writer_blocked_past_the_lock_timeout_fails_clearly_and_a_retry_lands(
    tmp_path: Path,
) -> None:
    made_here(tmp_path, "init")
    holder = sqlite3.connect(tmp_path / "ledger.sqlite", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process holding the write lock

    blocked = subprocess.run(
        [*MIND, "commit", "Wait your turn"],
        env=subprocess_env(tmp_path, MIND_LOCK_TIMEOUT="1"),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    holder.execute("ROLLBACK")
    holder.close()
    retried = run(tmp_path, "commit", "Wait your turn")

    assert blocked.returncode == 1
    assert blocked.stderr.strip() == (
        "Error: another mind process held the ledger's write lock too long; nothing was "
        "written, run the command again"
    )
    assert retried.returncode == 0
    listed = json.loads(run(tmp_path, "commitments", "--json").stdout)
    assert [c["text"] for c in listed] == ["Wait your turn"]


def test_a_catch_up_of_a_batch_scans_arrow_in_a_process_of_its_own(tmp_path: Path) -> None:
    """More than a few rows go in as a registered Arrow batch, which the engine scans only once
    DuckDB's package is imported (`duckdb_files.arrow_scans`): a fresh `mind project` of more
    than `FEW_ROWS` events, with threads to refresh the tension of (maintenance's batch)."""
    from bench.common import fill, new_mind
    from mindledger.projections.engine.projector import FEW_ROWS

    appended = fill(new_mind(tmp_path), 3 * FEW_ROWS)

    projected = run(tmp_path, "project")
    counted = run(tmp_path, "query", "SELECT count(*) AS n, count(tension) AS t FROM threads")

    assert projected.returncode == 0, projected.stderr
    assert counted.returncode == 0, counted.stderr
    assert appended > 2 * FEW_ROWS
    assert json.loads(counted.stdout)[0]["t"] == json.loads(counted.stdout)[0]["n"] > 0
