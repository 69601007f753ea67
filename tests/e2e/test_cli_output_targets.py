"""Every command that writes a path the user names treats what is there as Unix tools do: a
regular file is replaced whole, a new name is created, a FIFO or character device is opened and
written (never replaced), a symbolic link is refused with its target untouched, and a folder it
cannot write is one error line that changes nothing."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Result, subprocess_env

Cli = Callable[..., Result]
MIND = [sys.executable, "-c", "from mindledger.cli.main import main; main()"]
DEADLINE_S = 120


@dataclass(frozen=True)
class Writer:
    """A command that writes a named path: its arguments for a target (the file, or the
    export folder holding it), and the bytes the written file starts with."""

    name: str
    args: Callable[[Path], list[str]]
    file: str | None  # the file written inside the export folder; None: the target itself
    starts: bytes
    new_only: bool = False  # replay --into: a new DuckDB file, never anything that is there


WRITERS = [
    Writer("graph", lambda p: ["graph", "export", "--out", str(p)], None, b"<graphml"),
    Writer(
        "png",
        lambda p: ["report", "activity", "--format", "png", "--out", str(p)],
        None,
        b"\x89PNG",
    ),
    Writer(
        "report-csv",
        lambda p: ["report", "activity", "--format", "csv", "--out", str(p)],
        None,
        b"day,type,events\n",
    ),
    Writer("report-table", lambda p: ["report", "activity", "--out", str(p)], None, b"DAY "),
    Writer(
        "jsonl", lambda p: ["export", "--format", "jsonl", "--force", str(p)], "ledger.jsonl", b'{"'
    ),
    Writer(
        "md",
        lambda p: ["export", "--format", "md", "--force", str(p)],
        "transcript.md",
        b"# Mind transcript",
    ),
    Writer(
        "tables",
        lambda p: ["export", "--format", "csv", "--force", str(p)],
        "commitments.csv",
        b"stream_id,cid,",
    ),
    Writer("replay", lambda p: ["replay", "--into", str(p)], None, b"", new_only=True),
]
ids = [w.name for w in WRITERS]


def placed(writer: Writer, tmp_path: Path) -> tuple[list[str], Path]:
    """The command's arguments and the path of the file it writes."""
    if writer.file is None:
        target = tmp_path / "out" / "target"
        target.parent.mkdir()
        return writer.args(target), target
    folder = tmp_path / "out"
    folder.mkdir()
    return writer.args(folder), folder / writer.file


def one_error_line(result: Result | subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ") and "Traceback" not in result.stderr
    return lines[0]


def no_temporary_files(folder: Path) -> None:
    assert [p.name for p in folder.iterdir() if p.name.endswith(".part")] == []


@pytest.fixture
def with_events(cli: Cli, mind_home: Path) -> Path:
    assert cli("commit", "Water the ficus on Fridays").exit_code == 0
    assert cli("commitments").exit_code == 0  # the read model is built
    return mind_home


@pytest.mark.parametrize("writer", WRITERS, ids=ids)
def test_a_regular_file_is_replaced_whole(
    cli: Cli, with_events: Path, tmp_path: Path, writer: Writer
) -> None:
    args, target = placed(writer, tmp_path)
    target.write_bytes(b"an earlier version")
    target.chmod(0o640)

    result = cli(*args)

    if writer.new_only:
        assert result.exit_code == 1 and "exists" in one_error_line(result)
        assert target.read_bytes() == b"an earlier version"
        return
    assert result.exit_code == 0, result.stderr
    assert target.read_bytes().startswith(writer.starts)
    # as `>` keeps a file's mode; an export of the mind's words and keys is the owner's only
    private = writer.file is not None or writer.name == "graph"  # the mind's words: 0600
    assert stat.S_IMODE(target.stat().st_mode) == (0o600 if private else 0o640)
    no_temporary_files(target.parent)


@pytest.mark.parametrize("writer", WRITERS, ids=ids)
def test_a_new_name_is_created(cli: Cli, with_events: Path, tmp_path: Path, writer: Writer) -> None:
    args, target = placed(writer, tmp_path)

    result = cli(*args)

    assert result.exit_code == 0, result.stderr
    assert target.is_file() and target.read_bytes().startswith(writer.starts)
    no_temporary_files(target.parent)


@pytest.mark.parametrize("dangling", [False, True], ids=["to-a-file", "to-nothing"])
@pytest.mark.parametrize("writer", WRITERS, ids=ids)
def test_a_symbolic_link_is_refused_and_its_target_kept(
    cli: Cli, with_events: Path, tmp_path: Path, writer: Writer, dangling: bool
) -> None:
    args, target = placed(writer, tmp_path)
    elsewhere = tmp_path / "elsewhere.txt"
    if not dangling:
        elsewhere.write_bytes(b"precious")
    target.symlink_to(elsewhere)

    result = cli(*args)

    assert result.exit_code == 1
    line = one_error_line(result)
    assert "symbolic link" in line or "exists" in line
    assert target.is_symlink() and os.readlink(target) == str(elsewhere)
    assert elsewhere.read_bytes() == b"precious" if not dangling else not elsewhere.exists()
    no_temporary_files(target.parent)


@pytest.mark.parametrize("writer", WRITERS, ids=ids)
def test_a_fifo_is_written_not_replaced(
    cli: Cli, with_events: Path, tmp_path: Path, writer: Writer
) -> None:
    args, target = placed(writer, tmp_path)
    os.mkfifo(target)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(target.read_bytes()), daemon=True)
    reader.start()

    result = cli(*args)

    if result.exit_code != 0:  # the reader still waits for a writer: release it
        # A blocking open waits for the reader to open its end (on a busy machine the thread
        # may not have got there yet; O_NONBLOCK then failed with ENXIO).
        os.close(os.open(target, os.O_WRONLY))
    reader.join(DEADLINE_S)
    assert not reader.is_alive()
    assert stat.S_ISFIFO(os.lstat(target).st_mode)
    if writer.new_only:
        assert result.exit_code == 1 and "exists" in one_error_line(result)
        assert received == [b""]
        return
    assert result.exit_code == 0, result.stderr
    assert received[0].startswith(writer.starts)


@pytest.mark.parametrize("writer", WRITERS, ids=ids)
def test_a_character_device_is_written_not_replaced(
    cli: Cli, with_events: Path, tmp_path: Path, writer: Writer
) -> None:
    args, target = placed(writer, tmp_path)
    try:  # a /dev/null of the test's own (major 1, minor 3)
        os.mknod(target, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        os.close(os.open(target, os.O_WRONLY))
    except OSError:
        pytest.skip("cannot make and open a character device here (needs root, no nodev)")

    result = cli(*args)

    assert stat.S_ISCHR(os.lstat(target).st_mode)
    assert os.lstat(target).st_rdev == os.makedev(1, 3)
    if writer.new_only:
        assert result.exit_code == 1 and "exists" in one_error_line(result)
        return
    assert result.exit_code == 0, result.stderr
    no_temporary_files(target.parent)


def _without_override() -> list[str]:
    """A prefix that runs a process bound by file modes (root ignores them otherwise)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    caps = "-dac_override,-dac_read_search"
    prefix = [setpriv or "setpriv", f"--bounding-set={caps}", f"--inh-caps={caps}"]
    if setpriv is None or subprocess.run([*prefix, "true"], check=False).returncode != 0:
        pytest.skip("running as root and cannot drop CAP_DAC_OVERRIDE: root would write anyway")
    return prefix


@pytest.mark.parametrize("writer", WRITERS, ids=ids)
def test_a_read_only_folder_is_one_error_line_and_changes_nothing(
    cli: Cli, with_events: Path, tmp_path: Path, writer: Writer
) -> None:
    args, target = placed(writer, tmp_path)
    folder = target.parent
    (folder / "keep.txt").write_text("kept")
    folder.chmod(0o555)
    try:
        result = subprocess.run(
            [*_without_override(), *MIND, *args],
            env=subprocess_env(with_events, LITELLM_OFFLINE_MODE="true", MIND_NO_SERVER="1"),
            capture_output=True,
            text=True,
            timeout=DEADLINE_S,
            check=False,
        )
    finally:
        folder.chmod(0o755)

    assert result.returncode == 1
    assert "ermission denied" in one_error_line(result)
    assert sorted(p.name for p in folder.iterdir()) == ["keep.txt"]
    assert result.stdout == ""


def test_an_earlier_export_is_refused_without_force_and_other_files_are_left(
    cli: Cli, with_events: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "backup"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    assert cli("export", "--format", "jsonl", str(folder)).exit_code == 0
    first = (folder / "ledger.jsonl").read_bytes()
    cli("commit", "Call the plumber")

    again = cli("export", "--format", "jsonl", str(folder))
    forced = cli("export", "--format", "jsonl", "--force", str(folder))

    assert again.exit_code == 1
    assert "--force" in one_error_line(again) and "ledger.jsonl" in again.stderr
    assert forced.exit_code == 0
    assert (folder / "ledger.jsonl").read_bytes() != first
    assert (folder / "notes.txt").read_text() == "mine"


def test_tables_exported_twice_are_refused_then_replaced_with_force(
    cli: Cli, with_events: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "tables"
    assert cli("export", "--format", "csv", str(folder)).exit_code == 0
    before = {p.name: p.read_bytes() for p in folder.iterdir()}

    again = cli("export", "--format", "csv", str(folder))

    assert again.exit_code == 1 and "already holds" in one_error_line(again)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    assert cli("export", "--format", "csv", "--force", str(folder)).exit_code == 0


def test_a_report_to_standard_output_with_a_dash(cli: Cli, with_events: Path) -> None:
    csv_text = cli("report", "activity", "--format", "csv", "--out", "-")
    png = cli("report", "activity", "--format", "png", "--out", "-", "--json")

    assert csv_text.exit_code == 0 and csv_text.output.startswith("day,type,events\n")
    assert png.exit_code == 1 and "--json" in one_error_line(png)


def test_a_report_written_to_a_file_says_so_in_json(
    cli: Cli, with_events: Path, tmp_path: Path
) -> None:
    out = tmp_path / "activity.json"

    result = cli("report", "activity", "--format", "json", "--out", str(out), "--json")

    assert result.exit_code == 0
    assert result.json() == {"report": "activity", "format": "json", "path": str(out), "rows": 2}
    assert out.read_text().startswith("[")


@pytest.mark.parametrize("fmt", ["jsonl", "md", "csv", "parquet"])
def test_an_export_to_standard_output_is_refused_and_makes_no_folder(
    cli: Cli, with_events: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    monkeypatch.chdir(tmp_path)

    result = cli("export", "--format", fmt, "-")

    assert result.exit_code == 1
    assert "standard output, not a folder" in one_error_line(result)
    assert not (tmp_path / "-").exists()


WAITING = "waiting for a reader on FIFO"


class StderrLines:
    """A process's standard error, line by line, read in a thread so a test can wait for a line
    with a deadline instead of sleeping."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.lines: list[str] = []
        self.changed = threading.Condition()
        assert process.stderr is not None
        self.thread = threading.Thread(target=self._read, args=(process.stderr,), daemon=True)
        self.thread.start()

    def _read(self, stream: Any) -> None:
        for line in stream:
            with self.changed:
                self.lines.append(line.rstrip("\n"))
                self.changed.notify_all()

    def wait_for(self, text: str) -> None:
        with self.changed:
            found = self.changed.wait_for(
                lambda: any(text in line for line in self.lines), DEADLINE_S
            )
        assert found, self.lines

    def all(self) -> list[str]:
        self.thread.join(DEADLINE_S)
        return [line for line in self.lines if line.strip()]


def _writing_to_a_fifo(home: Path, fifo: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*MIND, "graph", "export", "--format", "json", "--out", str(fifo)],
        env=subprocess_env(home, LITELLM_OFFLINE_MODE="true", MIND_NO_SERVER="1"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,  # read by `StderrLines` alone
        text=True,
        # Ctrl-C's signal must reach Python's handler (a parent may have it ignored).
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def test_a_fifo_nobody_reads_says_once_that_it_waits_then_writes_to_the_reader(
    cli: Cli, with_events: Path, tmp_path: Path
) -> None:
    fifo = tmp_path / "graph.fifo"
    os.mkfifo(fifo)
    process = _writing_to_a_fifo(with_events, fifo)
    stderr = StderrLines(process)

    stderr.wait_for(WAITING)
    received = fifo.read_bytes()
    process.wait(DEADLINE_S)

    assert process.returncode == 0
    assert stderr.all() == [f"{WAITING} {fifo} (Ctrl-C to stop)"]
    assert b'"nodes"' in received
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_ctrl_c_while_waiting_for_a_fifo_reader_stops_in_one_line_and_writes_nothing(
    cli: Cli, with_events: Path, tmp_path: Path
) -> None:
    fifo = tmp_path / "graph.fifo"
    os.mkfifo(fifo)
    process = _writing_to_a_fifo(with_events, fifo)
    stderr = StderrLines(process)

    stderr.wait_for(WAITING)
    process.send_signal(signal.SIGINT)
    process.wait(DEADLINE_S)

    assert process.returncode == 1
    lines = stderr.all()
    assert lines[0].startswith(WAITING) and lines[1:] == ["Aborted!"], lines
    assert sorted(p.name for p in tmp_path.iterdir()) == ["graph.fifo", "mind"]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_replay_into_a_dash_is_refused_and_makes_no_file(
    cli: Cli, with_events: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)

    result = cli("replay", "--into", "-")

    assert result.exit_code == 1
    assert "cannot go to a stream" in one_error_line(result)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mind"]


STREAMED = [
    (["graph", "export", "--out", "/dev/stdout"], b"<graphml"),
    (["graph", "export", "--format", "json", "--out", "/dev/stdout"], b"{\n"),
    (["report", "activity", "--format", "csv", "--out", "/dev/stdout"], b"day,type,events\n"),
]


@pytest.mark.parametrize("into", ["pipe", "file"])
@pytest.mark.parametrize("args,starts", STREAMED, ids=["graphml", "graph-json", "report-csv"])
def test_out_dev_stdout_writes_the_stream_to_standard_output(
    with_events: Path, tmp_path: Path, args: list[str], starts: bytes, into: str
) -> None:
    # /dev/stdout is a link to /proc/self/fd/1: written through, as `-` is, wherever stdout
    # goes (a pipe, or a file the shell opened), and nothing else is printed there.
    if not os.path.islink("/dev/stdout"):
        pytest.skip("no /dev/stdout link here")
    captured = tmp_path / "captured"
    with open(captured, "wb") as file:
        result = subprocess.run(
            [*MIND, *args],
            env=subprocess_env(with_events, LITELLM_OFFLINE_MODE="true", MIND_NO_SERVER="1"),
            stdout=subprocess.PIPE if into == "pipe" else file,
            stderr=subprocess.PIPE,
            timeout=DEADLINE_S,
            check=False,
        )
    out = result.stdout if into == "pipe" else captured.read_bytes()

    assert (result.returncode, result.stderr) == (0, b"")
    assert out.startswith(starts) and b"wrote " not in out
    assert os.path.islink("/dev/stdout")


def test_a_link_to_a_fifo_is_written_through(cli: Cli, with_events: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "graph.fifo"
    os.mkfifo(fifo)
    (tmp_path / "link").symlink_to(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()

    result = cli("graph", "export", "--format", "json", "--out", str(tmp_path / "link"))

    reader.join(DEADLINE_S)
    assert result.exit_code == 0, result.stderr
    assert received and b'"nodes"' in received[0]
    assert (tmp_path / "link").is_symlink() and stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_verify_export_from_a_fifo_says_once_that_it_waits_for_a_writer_then_checks_it(
    cli: Cli, with_events: Path, tmp_path: Path
) -> None:
    assert cli("export", "--format", "jsonl", str(tmp_path / "export")).exit_code == 0
    fifo = tmp_path / "ledger.fifo"
    os.mkfifo(fifo)
    process = subprocess.Popen(
        [*MIND, "verify", "--export", str(fifo), "--json"],
        env=subprocess_env(with_events, LITELLM_OFFLINE_MODE="true", MIND_NO_SERVER="1"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    stderr = StderrLines(process)

    stderr.wait_for("waiting for a writer on FIFO")
    fifo.write_bytes((tmp_path / "export" / "ledger.jsonl").read_bytes())
    assert process.stdout is not None
    verified = json.loads(process.stdout.read())
    process.wait(DEADLINE_S)

    assert process.returncode == 0
    assert stderr.all() == [f"waiting for a writer on FIFO {fifo} (Ctrl-C to stop)"]
    assert verified["ok"] is True and verified["events"] == 2
