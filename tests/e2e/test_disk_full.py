"""No room to write, met by an append, an import, a projection, an export and a forget: one
line saying so (exit 1, no traceback), no partial event (the ledger's rows as before, none
outside the chain), `mind verify` passes, and once there is room the same command works and the
read model carries on from where it was (the same file, caught up: no rebuild).

Two kinds of "no room": a real full disk (a small tmpfs mounted for the test, filled; skipped
where `mount` is not permitted) and the file size limit on the command's process
(RLIMIT_FSIZE 0; Python ignores SIGXFSZ, so a write past it fails with EFBIG), which needs no
privilege. A third test leaves a little room, so that a long import and a long projection run
out of it part of the way through."""

from __future__ import annotations

import json
import os
import re
import resource
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from mindledger.cli.main import mind as mind_command
from tests.conftest import REPO

MIND = [sys.executable, "-c", "from mindledger.cli.main import main; main()"]
OPS = ["append", "import", "projection", "export", "forget"]
TRANSCRIPT_LINES = 2000  # the long import: far more than the room left
ROOM = 512 * 1024  # bytes left on the disk for the long import and its projection


def mind(
    home: Path, *args: str, limit: bool = False, check: bool = False
) -> subprocess.CompletedProcess[str]:
    """`mind ARGS` on `home`; with `limit`, under a file size limit of 0 bytes."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MIND_")}
    env.update(MIND_HOME=str(home), MIND_NO_SERVER="1", PYTHONPATH=str(REPO))
    env["LITELLM_OFFLINE_MODE"] = "true"
    ran = subprocess.run(
        [*MIND, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=_no_file_growth if limit else None,
    )
    assert not check or ran.returncode == 0, ran.stderr
    return ran


# The one line: what filled, where, and what to do.
NO_ROOM = re.compile(
    r"Error: no space left to write in /\S.* \((the disk is full|the file size limit was "
    r"reached|the disk is full, or the file size limit was reached)\): (free some space|raise "
    r"the limit \(ulimit -f\)), then run the command again\n"
)


def says_no_room(stderr: str) -> bool:
    """Whether `stderr` is the one line a command that found no room prints."""
    return NO_ROOM.fullmatch(stderr) is not None


def here(home: Path, *args: str) -> Result:
    """`mind ARGS` in this process with the environment `mind` gets above (no size limit): for
    the set-up and the read-back around the commands under test, which stay processes."""
    env: dict[str, str | None] = {"MIND_HOME": str(home), "MIND_NO_SERVER": "1"}
    env.update(LITELLM_OFFLINE_MODE="true", MIND_NOW=None, MIND_BACKEND=None)
    ran = CliRunner(env=env).invoke(mind_command, list(args), catch_exceptions=False)
    assert ran.exit_code == 0, ran.stderr
    return ran


def _no_file_growth() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, resource.RLIM_INFINITY))


class Disk:
    """A small tmpfs of its own, which the test fills and frees."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.filler = root / "filler"

    def fill(self, leave: int = 0) -> None:
        """Write until the disk is full, then give back `leave` bytes."""
        try:
            # Unbuffered: a buffered file keeps what a full disk refused and writes it again at
            # close, which then raises ENOSPC out of the fill (seen on a busy machine, when the
            # room left was not a whole number of chunks).
            f = open(self.filler, "wb", buffering=0)  # noqa: SIM115 (closed below; the open is checked)
        except OSError as e:
            # Full before the filler (seen twice on a busy machine, with room left by statvfs):
            # what the commands left behind, and the counts, are the finding, not the fill.
            stat = os.statvfs(self.root)
            listing = subprocess.run(["du", "-ab", str(self.root)], capture_output=True, text=True)
            raise AssertionError(
                f"the disk refused a new file before the fill ({e}); blocks free "
                f"{stat.f_bfree} x {stat.f_frsize}, inodes free {stat.f_ffree}:\n{listing.stdout}"
            ) from None
        with f:
            try:
                while f.write(b"\0" * 65536):
                    pass  # a short write is the last of the room; the next one raises or writes 0
            except OSError:
                pass
        if leave:
            os.truncate(self.filler, max(0, self.filler.stat().st_size - leave))

    def free(self) -> None:
        self.filler.unlink(missing_ok=True)


@pytest.fixture()
def disk(tmp_path: Path) -> Iterator[Disk]:
    root = tmp_path / "disk"
    root.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=24m,mode=0700", "tmpfs", str(root)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"mounting a tmpfs is not permitted here: {mounted.stderr.strip()}")
    try:
        yield Disk(root)
    finally:
        subprocess.run(["umount", "--lazy", str(root)], check=True)


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A mind with a commitment, a turn and its read model caught up."""
    home = tmp_path_factory.mktemp("made") / "mind"
    here(home, "init", "--name", "Echo")
    here(home, "commit", "Water the plants")
    here(home, "turn", "The boat is red", "--model", "mock", "--mock-reply", "Noted.")
    here(home, "project")
    return home


def ledger_rows(home: Path) -> tuple[int, int]:
    """(events, events outside the chain), read from the file (no command that might repair)."""
    con = sqlite3.connect(f"file:{home / 'ledger.sqlite'}?mode=ro", uri=True)
    try:
        events = con.execute("SELECT count(*) FROM stored_events").fetchone()[0]
        orphans = con.execute(
            "SELECT count(*) FROM stored_events WHERE rowid NOT IN "
            "(SELECT notification_id FROM ledger_chain)"
        ).fetchone()[0]
    finally:
        con.close()
    return int(events), int(orphans)


def projected(home: Path) -> tuple[int, int]:
    """(the head's position, the read model's)."""
    status = json.loads(here(home, "status", "--json").stdout)
    return status["head"]["position"], status["projections"][0]["position"]


def operation(home: Path, op: str, outside: Path) -> list[str]:
    """The command for `op`; `outside` is a folder for its files (on the same disk)."""
    if op == "append":
        return ["commit", "Call the plumber"]
    if op == "import":
        transcript = outside.parent / "chat.jsonl"
        if not transcript.exists():
            lines = ['{"role": "user", "content": "The shed is blue"}']
            transcript.write_text("\n".join([*lines, '{"role": "assistant", "content": "Ok"}']))
        return ["import", "chat", str(transcript)]
    if op == "projection":
        return ["project"]
    if op == "export":
        return ["export", "--format", "jsonl", str(outside)]
    cid = json.loads(here(home, "commitments", "--json").stdout)[0]["cid"]
    return ["forget", "--commitment", cid, "--yes"]


def meet_no_room(home: Path, op: str, outside: Path, no_room: Callable[[list[str]], str]) -> Result:
    """Run `op` with no room (`no_room` runs it so) and check what the fault left."""
    if op == "projection":
        here(home, "commit", "Pay the gas bill")  # the ledger ahead of the read model
    args = operation(home, op, outside)
    before = ledger_rows(home)
    inode = (home / "readmodel.duckdb").stat().st_ino

    failed = no_room(args)

    assert says_no_room(failed), failed
    assert ledger_rows(home) == before  # no partial event, none outside the chain
    assert json.loads(here(home, "verify", "--json").stdout)["ok"] is True
    again = here(home, *args)  # with room again: in this process (the fault was the process's)
    assert again.stderr == "", again.stderr
    if op != "forget":  # a forget rebuilds every read model, by design
        assert (home / "readmodel.duckdb").stat().st_ino == inode
        here(home, "project")
        head, position = projected(home)
        assert position == head and (home / "readmodel.duckdb").stat().st_ino == inode
    return again


@pytest.mark.parametrize("op", OPS)
def test_a_full_disk_stops_a_command_in_one_line_and_it_works_once_there_is_room(
    made: Path, disk: Disk, op: str
) -> None:
    home = disk.root / "mind"
    subprocess.run(["cp", "-a", str(made), str(home)], check=True)

    def full(args: list[str]) -> str:
        disk.fill()
        try:
            ran = mind(home, *args)
        finally:
            disk.free()
        assert ran.returncode == 1
        return ran.stderr

    meet_no_room(home, op, disk.root / "out", full)


@pytest.mark.parametrize("op", OPS)
def test_the_file_size_limit_stops_a_command_in_one_line_and_it_works_without_it(
    made: Path, tmp_path: Path, op: str
) -> None:
    home = tmp_path / "mind"
    subprocess.run(["cp", "-a", str(made), str(home)], check=True)

    def limited(args: list[str]) -> str:
        ran = mind(home, *args, limit=True)
        assert ran.returncode == 1
        return ran.stderr

    meet_no_room(home, op, tmp_path / "out", limited)


def test_a_long_import_and_a_projection_that_run_out_of_room_part_way_resume(
    made: Path, disk: Disk
) -> None:
    home = disk.root / "mind"
    subprocess.run(["cp", "-a", str(made), str(home)], check=True)
    transcript = disk.root / "long.jsonl"
    transcript.write_text(
        "".join(
            json.dumps({"role": "user" if i % 2 else "assistant", "content": f"Line {i} " * 40})
            + "\n"
            for i in range(TRANSCRIPT_LINES)
        )
    )
    inode = (home / "readmodel.duckdb").stat().st_ino
    before = ledger_rows(home)
    disk.fill(leave=ROOM)

    imported = mind(home, "import", "chat", str(transcript))
    disk.free()
    after_import = ledger_rows(home)
    # Processes, not this one: on a disk this small, what a command in this process leaves
    # open (the read model's engine, its log) is room the next fill cannot take.
    again = mind(home, "import", "chat", str(transcript), "--json")
    disk.fill(leave=ROOM)
    projecting = mind(home, "project")
    disk.free()
    part_way = projected(home)[1]
    verified = mind(home, "verify", "--json")
    resumed = mind(home, "project")
    head, position = projected(home)

    assert imported.returncode == 1 and says_no_room(imported.stderr), imported.stderr
    assert after_import == before  # the import is one transaction: all of it or nothing
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["added"] == TRANSCRIPT_LINES
    assert projecting.returncode == 1 and says_no_room(projecting.stderr), projecting.stderr
    assert verified.returncode == 0 and json.loads(verified.stdout)["ok"] is True
    assert resumed.returncode == 0 and resumed.stderr == ""
    assert part_way < head and position == head
    assert (home / "readmodel.duckdb").stat().st_ino == inode  # caught up, not rebuilt


# Outputs the user names: a refused or failed one leaves nothing behind (no part of a folder
# export, no folder made for it, no temporary file beside a replay's file), and the same
# command then works without --force.
OUTPUTS = {
    "csv": ["export", "--format", "csv", "{out}/tables"],
    "parquet": ["export", "--format", "parquet", "{out}/tables"],
    "jsonl": ["export", "--format", "jsonl", "{out}/new/ledger"],
    "replay": ["replay", "--into", "{out}/copy.duckdb"],
}


def no_room_for_an_output(
    home: Path,
    out: Path,
    name: str,
    no_room: Callable[[list[str]], subprocess.CompletedProcess[str]],
) -> None:
    args = [a.format(out=out) for a in OUTPUTS[name]]
    out.mkdir(exist_ok=True)
    before = ledger_rows(home)

    failed = no_room(args)

    assert failed.returncode == 1 and says_no_room(failed.stderr), failed.stderr
    assert sorted(p.name for p in out.iterdir()) == []  # nothing left, no folder made
    assert ledger_rows(home) == before
    again = here(home, *args)  # with room again: in this process
    assert again.stderr == "", again.stderr


@pytest.mark.parametrize("name", list(OUTPUTS))
def test_a_full_disk_leaves_no_part_of_an_output(made: Path, disk: Disk, name: str) -> None:
    home = disk.root / "mind"
    subprocess.run(["cp", "-a", str(made), str(home)], check=True)

    def full(args: list[str]) -> subprocess.CompletedProcess[str]:
        disk.fill()
        try:
            return mind(home, *args)
        finally:
            disk.free()

    no_room_for_an_output(home, disk.root / "out", name, full)


@pytest.mark.parametrize("name", list(OUTPUTS))
def test_the_file_size_limit_leaves_no_part_of_an_output(
    made: Path, tmp_path: Path, name: str
) -> None:
    home = tmp_path / "mind"
    subprocess.run(["cp", "-a", str(made), str(home)], check=True)

    no_room_for_an_output(home, tmp_path / "out", name, lambda args: mind(home, *args, limit=True))


# `mind turn` whose disk fills once the model has answered (after the message was recorded,
# before the reply is): the scripted model runs out the room itself, by the file size limit or
# by filling the disk at $FILL.
MID_TURN = """
import os, resource, sys
from mindledger.adapters import scripted_model

answer = scripted_model.ScriptedModel.complete

def complete(self, messages, on_token=None):
    done = answer(self, messages, on_token)
    if os.environ.get("FILL"):
        with open(os.environ["FILL"], "wb", buffering=0) as f:
            try:
                while f.write(b"\\0" * 65536):
                    pass
            except OSError:
                pass
    else:
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, resource.RLIM_INFINITY))
    return done

scripted_model.ScriptedModel.complete = complete
sys.argv[0] = "mind"
from mindledger.cli.main import main
main()
"""


def turn_as_the_room_runs_out(home: Path, *extra: str, fill: Path | None = None) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MIND_")}
    env.update(MIND_HOME=str(home), MIND_NO_SERVER="1", PYTHONPATH=str(REPO))
    if fill is not None:
        env["FILL"] = str(fill)
    turn = ["turn", "The shed key is under the blue pot", "--model", "mock", "--mock-reply", "Ok"]
    ran = subprocess.run(
        [sys.executable, "-c", MID_TURN, *turn, *extra],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert (ran.returncode, ran.stdout) == (1, ""), ran.stderr
    return ran.stderr


def kept_and_whole(home: Path, said: str, what: str, fix: str) -> None:
    """`said` is the one line naming the turn that keeps the message, and that turn is there:
    started, unanswered; the ledger verifies, and the turn works once there is room."""
    line = re.fullmatch(
        rf"Error: no space left to write in {re.escape(str(home))} \({what}\): the message is "
        rf"kept as turn ([0-9a-f]{{32}}), unanswered; {re.escape(fix)}, then run it again\n",
        said,
    )
    assert line is not None, said
    events = json.loads(here(home, "log", "--json", "--limit", "1000").stdout)
    started = [e for e in events if e["type"] == "mind.turn.started"]
    assert [e["payload"]["text"] for e in started][-1] == "The shed key is under the blue pot"
    assert started[-1]["aggregate"] == line.group(1)
    assert json.loads(here(home, "verify", "--json").stdout)["ok"] is True
    again = here(
        home, "turn", "The shed key is under the blue pot", "--model", "mock", "--mock-reply", "Ok"
    )
    assert again.stdout == "Ok\n"


@pytest.mark.parametrize("as_json", [False, True])
def test_the_file_size_limit_met_mid_turn_names_the_turn_that_keeps_the_message(
    made: Path, tmp_path: Path, as_json: bool
) -> None:
    home = tmp_path / "mind"
    subprocess.run(["cp", "-a", str(made), str(home)], check=True)

    said = turn_as_the_room_runs_out(home, *(["--json"] if as_json else []))

    kept_and_whole(home, said, "the file size limit was reached", "raise the limit (ulimit -f)")


def test_a_disk_that_fills_mid_turn_names_the_turn_that_keeps_the_message(
    made: Path, disk: Disk
) -> None:
    home = disk.root / "mind"
    subprocess.run(["cp", "-a", str(made), str(home)], check=True)

    try:
        said = turn_as_the_room_runs_out(home, fill=disk.filler)
    finally:
        disk.free()

    kept_and_whole(home, said, "the disk is full", "free some space")


def _small_file_growth() -> None:
    # Room for what reading a small home writes (the ledger's index, 32 KiB, is there already),
    # none for a copy of its ledger (~57 KiB) or its tables.
    resource.setrlimit(resource.RLIMIT_FSIZE, (40 * 1024, resource.RLIM_INFINITY))


@pytest.mark.parametrize(
    "args",
    [
        ["backup", "{out}/backup"],
        ["export", "--format", "csv", "{out}/tables"],
    ],
)
def test_an_output_with_no_room_names_the_folder_it_goes_into_not_the_home(
    made: Path, tmp_path: Path, args: list[str]
) -> None:
    home, out = tmp_path / "mind", tmp_path / "out"
    subprocess.run(["cp", "-a", str(made), str(home)], check=True)
    here(home, *["turn", "The shed is blue " * 3500, "--model", "mock", "--mock-reply", "Ok."])
    here(home, "project")  # nothing for the command to catch up: only its output is written
    out.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MIND_")}
    env.update(MIND_HOME=str(home), MIND_NO_SERVER="1", PYTHONPATH=str(REPO))

    failed = subprocess.run(
        [*MIND, *[a.format(out=out) for a in args]],
        env={**env, "LITELLM_OFFLINE_MODE": "true"},
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=_small_file_growth,
    )

    assert failed.returncode == 1 and says_no_room(failed.stderr), failed.stderr
    assert f"no space left to write in {out} (the file size limit" in failed.stderr
    assert sorted(p.name for p in out.iterdir()) == []
