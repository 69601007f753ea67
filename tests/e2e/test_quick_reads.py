"""`mind status` and `mind commitments` printed from the read model's summary, and `mind recall`,
(`mindledger.quick_reads`): the same bytes as through the floor, a write seen by the next
listing, none of the heavy packages imported, and the floor's path whenever the summary is not
the ledger's head or a setting needs the typed settings."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from mindledger.projections.engine.summary import read_summary, summary_path
from tests.conftest import REPO, subprocess_env

# The real entry point (`cli.main.main`), which takes the quick path; it reports what it loaded
# (`_duckdb`: DuckDB's engine, which its `duckdb` package imports too).
PROBE = (
    "import sys\n"
    "from mindledger.cli.main import main\n"
    "try:\n"
    "    main()\n"
    "finally:\n"
    "    heavy = ('_duckdb', 'pydantic', 'click', 'pyarrow', 'numpy', 'litellm', 'eventsourcing')\n"
    "    print('LOADED', sorted(m for m in heavy if m in sys.modules), file=sys.stderr)\n"
)
QUICK_CALLS = (
    ["status"],
    ["status", "--json"],
    ["commitments"],
    ["commitments", "--json"],
    ["recall", "weekly report", "--no-server"],
    ["recall", "Friday plumber", "--json"],
)


def mind(home: Path, *args: str, **env: str) -> tuple[str, list[str]]:
    """`mind ARGS` as a process: its stdout and the heavy packages it imported."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        env=subprocess_env(home, MIND_NO_SERVER="1", **env),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    loaded = [line for line in done.stderr.splitlines() if line.startswith("LOADED ")]
    return done.stdout, json.loads(loaded[-1].removeprefix("LOADED ").replace("'", '"'))


def test_a_listing_from_the_summary_prints_what_the_floor_prints(tmp_path: Path) -> None:
    home = tmp_path / "mind"
    mind(home, "init", "--name", "Echo")
    mind(home, "commit", "Send the weekly report on Friday")
    fern = "Water the fern by the café window — every Monday and Thursday, half a can"
    mind(home, "commit", fern)  # cut to 60 characters in the table either way
    closed, _ = mind(home, "commit", "Call the plumber")
    mind(home, "close", closed.strip(), "--reason", "done")
    mind(home, "commitments")  # catches the read model up: the summary is at the head now

    for call in QUICK_CALLS:
        quick, loaded = mind(home, *call)
        # A setting given (even its default) needs the typed settings: the floor's path.
        floor, floor_loaded = mind(home, *call, MIND_LOCK_TIMEOUT="15")
        assert quick == floor, call
        assert loaded == (["_duckdb"] if call[0] == "recall" else []), call
        assert "pydantic" in floor_loaded, call
    listed = json.loads(mind(home, "commitments", "--json")[0])
    texts = [r["text"] for r in listed]
    assert texts == ["Send the weekly report on Friday", fern]


def test_a_listing_right_after_a_write_shows_the_write(tmp_path: Path) -> None:
    home = tmp_path / "mind"
    mind(home, "init")
    mind(home, "commit", "First")
    assert "First" in mind(home, "commitments")[0]

    cid = mind(home, "commit", "Second")[0].strip()
    out, loaded = mind(home, "commitments", "--json")  # the summary is behind: the floor's path

    assert [r["text"] for r in json.loads(out)] == ["First", "Second"]
    assert "_duckdb" in loaded
    out, loaded = mind(home, "commitments", "--json")  # and now from the summary
    assert [r["text"] for r in json.loads(out)] == ["First", "Second"] and loaded == []
    mind(home, "commit", "Third, about the harbour")
    out, loaded = mind(home, "recall", "harbour", "--json")  # it catches the read model up
    assert "Third, about the harbour" in out and "click" not in loaded
    mind(home, "close", cid)
    status = json.loads(mind(home, "status", "--json")[0])  # not caught up: the lag shown
    assert status["projections"][0]["lag"] == 1
    assert [r["cid"] for r in json.loads(mind(home, "commitments", "--json")[0])] != [cid]


def test_the_summary_is_the_read_models_and_goes_with_it(tmp_path: Path) -> None:
    home = tmp_path / "mind"
    mind(home, "init")
    mind(home, "commit", "Feed the cat")
    mind(home, "commitments")
    working = home / "readmodel.duckdb"
    summary = read_summary(working)
    assert summary is not None and [r["text"] for r in summary["commitments"]] == ["Feed the cat"]
    assert summary_path(working).stat().st_mode & 0o077 == 0

    # A summary of another ledger position (a damaged or foreign one) is not taken.
    data = {**summary, "commitments": [{**summary["commitments"][0], "text": "Not this"}]}
    data["hash"] = "0" * 64
    summary_path(working).write_text(json.dumps(data))
    out, loaded = mind(home, "commitments")
    assert "Feed the cat" in out and "_duckdb" in loaded

    mind(home, "replay", "--swap")
    assert read_summary(working) is None or read_summary(working)["hash"] != "0" * 64


def test_a_bad_setting_or_a_shared_home_is_said_as_the_floor_says_it(tmp_path: Path) -> None:
    home = tmp_path / "mind"
    mind(home, "init")
    mind(home, "commitments")  # the summary is at the head

    (home / ".env").write_text("MIND_LOCK_TIMEOUT=soon\n")
    refused = subprocess.run(
        [sys.executable, "-c", PROBE, "status"],
        env=subprocess_env(home, MIND_NO_SERVER="1"),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert refused.returncode == 1 and refused.stdout == ""
    assert "MIND_LOCK_TIMEOUT" in refused.stderr and "not valid" in refused.stderr

    (home / ".env").unlink()
    home.chmod(0o755)  # other users may list it: one warning line, on either path
    said = []
    for env in ({}, {"MIND_LOCK_TIMEOUT": "15"}):
        done = subprocess.run(
            [sys.executable, "-c", PROBE, "status"],
            env=subprocess_env(home, MIND_NO_SERVER="1", **env),
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
        )
        said.append([line for line in done.stderr.splitlines() if not line.startswith("LOADED")])
    assert said[0] == said[1] and "other users may read" in " ".join(said[0])
