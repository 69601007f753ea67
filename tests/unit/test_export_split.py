"""The integrity check of an export in halves (adapters/export_split.py) answers as the check
of one process does: the same events, head and anchor for a sound file, the same line and
reason for a broken one, wherever the fault lies (before, at or after where the halves join).
The second half runs inline here (a fork in a test worker with threads is what the module
refuses); one test runs the real fork in a process of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mindledger.adapters.export_chain import ChainBroken, ChainChecked, check_chain
from mindledger.adapters.export_split import check_split
from tests.unit.test_export_chain import DATA

MAX_LINE = 16 * 1024 * 1024
EVENTS_AT = DATA.index(b"\n") + 1  # the header is ExportReader's to check, not the chain's


class _Inline:
    """The second half checked here, when its answer is asked for."""

    def __init__(self, check: Callable[[], ChainChecked]) -> None:
        self.check, self.stopped = check, False

    def result(self) -> ChainChecked | None:
        try:
            return self.check()
        except ChainBroken:
            return None

    def stop(self) -> None:
        self.stopped = True


def _answer(check: Callable[..., ChainChecked], data: bytes, anchor: str | None = None) -> Any:
    """What `check` says of `data` written to a file: its result, or the line and reason."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "ledger.jsonl"
        path.write_bytes(data)
        with open(path, "rb") as handle:
            header = json.loads(handle.readline())
            try:
                return tuple(check(handle, header["genesis"], header["events"], anchor, MAX_LINE))
            except ChainBroken as e:
                return ("broken", e.line, e.reason)


def _split(handle: Any, *args: Any) -> ChainChecked:
    return check_split(handle, *args, split_bytes=0, apart=_Inline)


def _both(data: bytes, anchor: str | None = None) -> tuple[Any, Any]:
    return _answer(check_chain, data, anchor), _answer(_split, data, anchor)


def test_a_sound_file_gets_the_same_answer_and_every_anchor_its_position() -> None:
    hashes = [json.loads(line)["hash"] for line in DATA.splitlines()[1:]]

    for anchor in [None, "ab" * 32, json.loads(DATA.splitlines()[0])["genesis"], *hashes]:
        alone, split = _both(DATA, anchor)
        assert split == alone and alone[0] == 12


def test_the_halves_join_in_the_middle() -> None:
    seen: list[int] = []

    def told(done: int) -> None:
        seen.append(done)

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "ledger.jsonl"
        path.write_bytes(DATA)
        with open(path, "rb") as handle:
            header = json.loads(handle.readline())
            halves: list[_Inline] = []

            def apart(check: Callable[[], ChainChecked]) -> _Inline:
                halves.append(_Inline(check))
                return halves[-1]

            checked = check_split(
                handle, header["genesis"], 12, None, MAX_LINE, told, split_bytes=0, apart=apart
            )

    assert checked.events == 12 and len(halves) == 1 and halves[0].stopped
    assert seen[-1] == 12 and 1 < seen[0] <= 12  # the first half's count scaled to the file


@settings(max_examples=150, deadline=None)
@given(st.integers(EVENTS_AT, len(DATA) - 1), st.integers(0, 255))
def test_a_changed_byte_gets_the_same_answer(offset: int, byte: int) -> None:
    data = DATA[:offset] + bytes([byte]) + DATA[offset + 1 :]

    alone, split = _both(data)

    assert split == alone


@settings(max_examples=100, deadline=None)
@given(st.integers(EVENTS_AT, len(DATA) - 1), st.integers(0, 2))
def test_a_cut_deleted_or_doubled_line_gets_the_same_answer(offset: int, how: int) -> None:
    lines = DATA.splitlines(keepends=True)
    at = 1 + offset % (len(lines) - 1)
    data = [
        DATA[:offset],
        b"".join(lines[:at] + lines[at + 1 :]),
        b"".join(lines[: at + 1] + lines[at:]),
    ][how]

    alone, split = _both(data)

    assert split == alone


@pytest.mark.parametrize("blank", [b"\n", b"  \n", b"\n\n"])
def test_blank_lines_get_the_same_answer_wherever_they_are(blank: bytes) -> None:
    lines = DATA.splitlines(keepends=True)

    for at in range(1, len(lines) + 1):
        alone, split = _both(b"".join([*lines[:at], blank, *lines[at:]]))
        assert split == alone


def test_the_fork_answers_as_one_process_does() -> None:
    """In a process of its own (no other thread: the fork is taken): a sound file, a fault
    in each half, and a file too small to split."""
    lines = DATA.splitlines(keepends=True)
    late = b"".join([*lines[:9], lines[9].replace(b'"n":7', b'"n":8'), *lines[10:]])
    early = b"".join([*lines[:2], lines[2].replace(b'"n":0', b'"n":9'), *lines[3:]])
    assert late != DATA != early
    script = (
        "import json, os, sys\n"
        "from mindledger.adapters import export_split\n"
        "from mindledger.adapters.export_chain import ChainBroken, check_chain\n"
        "forks = []\n"
        "fork = os.fork\n"
        "def counted():\n"
        "    pid = fork()\n"
        "    if pid: forks.append(pid)\n"
        "    return pid\n"
        "os.fork = counted\n"
        "for path in sys.argv[1:]:\n"
        "    answers = []\n"
        "    for check in (check_chain, export_split.check_split):\n"
        "        with open(path, 'rb') as handle:\n"
        "            header = json.loads(handle.readline())\n"
        "            args = (handle, header['genesis'], header['events'], None, 1 << 24)\n"
        "            try:\n"
        "                answers.append(list(check(*args)))\n"
        "            except ChainBroken as e:\n"
        "                answers.append([e.line, e.reason])\n"
        "    print(json.dumps([answers, len(forks)]))\n"
        "    forks.clear()\n"
    )
    with tempfile.TemporaryDirectory() as folder:
        paths = []
        for name, data in (("sound", DATA), ("late", late), ("early", early)):
            paths.append(Path(folder) / f"{name}.jsonl")
            paths[-1].write_bytes(data)
        env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
        small = "export_split.SPLIT_BYTES = 0\n"
        out = subprocess.run(
            [
                sys.executable,
                "-c",
                script.replace("forks = []\n", small + "forks = []\n"),
                *map(str, paths),
            ],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
    results = [json.loads(line) for line in out.stdout.splitlines()]

    for (alone, split), _ in results:
        assert split == alone
    assert [forks for _, forks in results] == (
        [1, 1, 1] if len(os.sched_getaffinity(0)) > 1 else [0, 0, 0]
    )
    assert results[0][0][0][0] == 12 and len(results[1][0][0]) == 2 == len(results[2][0][0])


@pytest.mark.parametrize("at", [0, 65_530, 65_536, 200_000])
def test_where_the_halves_join_is_found_across_reads(at: int) -> None:
    """The join's bytes are found wherever they lie (across a read's end too), and not past
    the limit (a line longer than a line may be: the check of one process reads the file)."""
    from mindledger.adapters.export_split import _JOIN, _read_until

    data = b"x" * at + _JOIN + b"y" * 10
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "f"
        path.write_bytes(data)
        fd = os.open(path, os.O_RDONLY)
        try:
            found = _read_until(fd, 0, _JOIN, len(data))
            short = _read_until(fd, 0, _JOIN, at + len(_JOIN) - 1)
        finally:
            os.close(fd)

    assert found.find(_JOIN) == at and found == data[: len(found)]
    assert _JOIN not in short and len(short) == at + len(_JOIN) - 1


def test_a_child_reaped_by_another_is_a_failed_half_and_an_ignored_sigchld_no_fork() -> None:
    """A program whose children are reaped for it (SIGCHLD ignored, or a handler that reaps)
    gets the check's answer, not ChildProcessError: a half whose status is lost is a failed
    half (the check of one process answers), and with SIGCHLD ignored nothing is forked."""
    script = (
        "import json, os, signal, sys\n"
        "from mindledger.adapters import export_split\n"
        "from mindledger.adapters.export_chain import ChainChecked, check_chain\n"
        "said = []\n"
        "for ask in (True, False):\n"
        "    apart = export_split._forked(lambda: ChainChecked(1, 'ab', None))\n"
        "    os.waitpid(apart.pid, 0)  # reaped by another\n"
        "    said.append(apart.result() if ask else None)\n"
        "    apart.stop()\n"
        "signal.signal(signal.SIGCHLD, signal.SIG_IGN)\n"
        "said.append(export_split._can_fork())\n"
        "answers = []\n"
        "for check in (check_chain, export_split.check_split):\n"
        "    with open(sys.argv[1], 'rb') as handle:\n"
        "        header = json.loads(handle.readline())\n"
        "        args = (handle, header['genesis'], header['events'], None, 1 << 24)\n"
        "        answers.append(list(check(*args)))\n"
        "print(json.dumps([said, answers]))\n"
    )
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "ledger.jsonl"
        path.write_bytes(DATA)
        env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
        small = "export_split.SPLIT_BYTES = 0\n"
        out = subprocess.run(
            [sys.executable, "-c", script.replace("said = []\n", small + "said = []\n"), str(path)],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
    said, (alone, split) = json.loads(out.stdout)

    assert said == [None, None, False]
    assert split == alone and alone[0] == 12


def test_a_half_whose_parent_was_killed_lets_go_of_its_output_and_ends() -> None:
    """A check killed from outside (SIGTERM, SIGKILL: its half never stopped) leaves no
    orphan: the half ends once it sees its parent gone, letting go of the command's output
    (the half here would wait a minute for its input)."""
    script = (
        "import os, select\n"
        "from mindledger.adapters import export_split\n"
        "r, w = os.pipe()\n"
        "apart = export_split._forked(lambda: select.select([r], [], [], 60))\n"
        "print(apart.pid, flush=True)\n"
        "os._exit(0)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    # Returns once every holder of its output let go: the half too (else after a minute).
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=55
    )
    stat = Path(f"/proc/{int(out.stdout)}/stat")
    if not Path("/proc/self/stat").exists():
        return
    for _ in range(600):  # gone, or ended and not yet reaped by whoever adopted it
        try:
            if stat.read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                break
        except (FileNotFoundError, ProcessLookupError):
            break
        time.sleep(0.1)
    else:
        raise AssertionError("the orphaned half still runs")


def test_the_count_told_never_goes_back_when_the_file_is_checked_again() -> None:
    """A fault in the second half: the check of one process reads the file again, and its
    count is told only once past what the halves told (the first half's count was scaled to
    the whole file: a bar at 100% went back to 0)."""
    lines = DATA.splitlines(keepends=True)
    at = lines[11].index(b'"prev":"') + 8  # the line before's hash, its first digit changed
    digit = b"0" if lines[11][at : at + 1] != b"0" else b"1"
    wrong = lines[11][:at] + digit + lines[11][at + 1 :]
    late = b"".join([*lines[:11], wrong, *lines[12:]])
    assert late != DATA
    seen: list[int] = []
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "ledger.jsonl"
        path.write_bytes(late)
        with open(path, "rb") as handle:
            header = json.loads(handle.readline())
            with pytest.raises(ChainBroken) as broken:
                check_split(handle, header["genesis"], 12, None, MAX_LINE, seen.append, 0, _Inline)

    assert ("broken", broken.value.line, broken.value.reason) == _answer(check_chain, late)
    assert seen and seen == sorted(seen)


def test_a_process_started_with_its_standard_streams_closed_gets_the_same_answer() -> None:
    """The file checked is then on descriptor 0, 1 or 2: the forked half reads it there (a
    half that put /dev/null on its standard streams read nothing and a sound file was cut
    short at its middle)."""
    script = (
        "import json, os, sys\n"
        "from mindledger.adapters import export_split\n"
        "from mindledger.adapters.export_chain import ChainBroken, check_chain\n"
        "export_split.SPLIT_BYTES = 0\n"
        "answers = []\n"
        "for check in (check_chain, export_split.check_split):\n"
        "    with open(sys.argv[1], 'rb') as handle:\n"
        "        answers.append(handle.fileno())\n"
        "        header = json.loads(handle.readline())\n"
        "        args = (handle, header['genesis'], header['events'], None, 1 << 24)\n"
        "        try:\n"
        "            answers.append(list(check(*args)))\n"
        "        except ChainBroken as e:\n"
        "            answers.append([e.line, e.reason])\n"
        "with open(sys.argv[2], 'w') as out:\n"
        "    json.dump(answers, out)\n"
    )
    with tempfile.TemporaryDirectory() as folder:
        path, said = Path(folder) / "ledger.jsonl", Path(folder) / "said.json"
        path.write_bytes(DATA)
        env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
        subprocess.run(  # standard input closed by the shell as it runs Python
            ["sh", "-c", 'exec "$0" "$@" <&-', sys.executable, "-c", script, path, said],
            env=env,
            check=True,
        )
        fd_alone, alone, fd_split, split = json.loads(said.read_text())

    assert fd_alone == fd_split == 0
    assert split == alone and alone[0] == 12
