"""A mind holding one canary word per kind of memory `mind forget` can name, and the probes that
look for a word afterwards: in every byte under the home, and on every reading surface."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from mindledger.adapters.sqlite_ledger import SQLiteLedgerReader
from tests.conftest import Result

Cli = Callable[..., Result]
MOCK = ("--model", "mock", "--no-server")
# One word per memory, found nowhere else, in mixed case (the term index lowercases words).
CANARIES = {
    "turn": "Zqxmessage",
    "reply": "Zqxreply",
    "commitment": "Zqxcommitment",
    "concept": "Zqxconcept",
    "thread": "Zqxthread",
    "conversation": "Zqxconversation",
    "speaker": "Zqxspeaker",
    "knowledge": "Zqxknowledge",
}
SURVIVOR = "ploverwing"  # said in the last turn, which no selector here names


@dataclass(frozen=True)
class Memories:
    """The mind's home and, for each canary, the selector that names its memory."""

    home: Path
    selectors: dict[str, tuple[str, str]]  # canary's kind -> (option, value)


def module_cli(home: Path) -> Cli:
    """`mind ARGS...` in-process on `home` at the suite's fixed time, outside any test's own
    home: for a mind a module builds once and each test reads a copy of."""
    from click.testing import CliRunner

    from mindledger.cli.main import mind

    runner = CliRunner(
        env={"MIND_HOME": str(home), "MIND_NOW": "2026-05-01T09:00:00Z", "MIND_BACKEND": None}
    )

    def run(*args: str, input: str | None = None) -> Result:
        r = runner.invoke(mind, list(args), input=input, catch_exceptions=False)
        return Result(r.exit_code, r.stdout, r.stderr)

    return run


def turn(cli: Cli, message: str, reply: str) -> dict[str, object]:
    result = cli("turn", message, *MOCK, "--mock-reply", reply, "--json")
    assert result.exit_code == 0, result.stderr
    data: dict[str, object] = result.json()
    return data


def jsonl(path: Path, lines: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def locomo(path: Path, said: list[tuple[str, str]]) -> Path:
    """A LoCoMo file of one conversation: (speaker, text) lines in one session."""
    speakers = sorted({s for s, _ in said})
    conversation: dict[str, object] = {
        "speaker_a": speakers[0],
        "speaker_b": speakers[-1],
        "session_1_date_time": "10:00 am on 8 May, 2023",
        "session_1": [
            {"speaker": s, "dia_id": f"D1:{n}", "text": t} for n, (s, t) in enumerate(said, 1)
        ],
    }
    path.write_text(json.dumps([{"sample_id": "s1", "conversation": conversation, "qa": []}]))
    return path


def build_memories(cli: Cli, home: Path, folder: Path) -> Memories:
    """Every kind of memory a selector names, each holding its canary; then a turn whose prompt
    quotes most of them (the survivor)."""
    c = CANARIES
    message = f"I keep my spare key under the {c['turn']} flowerpot"
    told = turn(cli, message, "Noted.")
    # What `mind chat`'s line editor keeps of what was typed (readline's history file).
    (home / "chat_history").write_text(f"{message}\nWhere do the {SURVIVOR} birds nest?\n")
    asked = turn(cli, "What should I cook tonight?", f"Try the {c['reply']} stew.")
    cid = cli("commit", f"Water the {c['commitment']} fern").output.strip()
    assert cli("concept", "define", "garden.secret", f"The {c['concept']} hedge").exit_code == 0
    opened = cli("thread", "open", f"Ask about {c['thread']}", "--content", f"{c['thread']} plan")
    chat = [
        {"role": "user", "content": f"My locker code is {c['conversation']} 4417"},
        {"role": "assistant", "content": f"I will keep {c['conversation']} safe"},
    ]
    assert cli("import", "chat", str(jsonl(folder / "history.jsonl", chat))).exit_code == 0
    conversation = cli("query", "SELECT stream_id FROM conversations").json()[0]["stream_id"]
    said = [("Caroline", f"I adopted {c['speaker']}"), ("Melanie", "A lovely dog name")]
    assert cli("import", "locomo", str(locomo(folder / "locomo.json", said))).exit_code == 0
    known = cli("remember", f"{c['knowledge']} is the wifi password", "--json").json()
    turn(cli, f"Where do the {SURVIVOR} birds nest?", "On the beach, in the dunes.")
    return Memories(
        home,
        {
            "turn": ("--turn", str(told["turn"])),
            "reply": ("--turn", str(asked["turn"])[:8]),
            "commitment": ("--commitment", cid),
            "concept": ("--concept", "garden.secret"),
            "thread": ("--thread", opened.output.strip()),
            "conversation": ("--conversation", conversation),
            "speaker": ("--speaker", "caroline"),
            "knowledge": ("--knowledge", known["id"]),
        },
    )


def files_under(folder: Path) -> Iterator[Path]:
    return (p for p in sorted(folder.rglob("*")) if p.is_file())


def spellings(word: str) -> list[bytes]:
    """The bytes a word may be stored as: as written and lower-cased, in UTF-8 and UTF-16."""
    forms = sorted({word, word.lower()})
    return [f.encode(enc) for f in forms for enc in ("utf-8", "utf-16-le", "utf-16-be")]


def holds(data: bytes, word: str) -> bool:
    return any(form in data for form in spellings(word))


def files_holding(home: Path, word: str) -> list[str]:
    """Every file under the home (ledger, key store, their WALs, read models, caches, history)
    any of whose bytes spell `word`."""
    return [str(p.relative_to(home)) for p in files_under(home) if holds(p.read_bytes(), word)]


def read_side(cli: Cli, folder: Path) -> str:
    """Everything the mind shows: every event opened, every turn's sent prompt, every read-model
    table, the ledger export and the transcript."""
    shown = [cli("log", "--json", "--limit", "100000").output]
    for row in cli("query", "SELECT stream_id FROM turns").json():
        shown.append(cli("log", "--turn", row["stream_id"]).output)
    for fmt in ("jsonl", "md", "csv"):
        out = folder / f"export-{fmt}"
        assert cli("export", str(out), "--format", fmt).exit_code == 0
        shown.extend(p.read_text(errors="replace") for p in files_under(out))
    return "\n".join(shown)


def ledger_head(home: Path) -> tuple[int, str | None]:
    """The ledger's last position and hash: any write changes them."""
    reader = SQLiteLedgerReader(home / "ledger.sqlite")
    try:
        return reader.head()
    finally:
        reader.close()


def stored_keys(home: Path) -> set[bytes]:
    """The data keys in keys.sqlite (stored raw: these minds have no master key)."""
    con = sqlite3.connect(f"file:{home / 'keys.sqlite'}?mode=ro", uri=True)
    try:
        return {bytes(k) for (k,) in con.execute("SELECT key FROM keys")}
    finally:
        con.close()


def events_of(cli: Cli, topic: str) -> list[dict[str, object]]:
    events: list[dict[str, object]] = cli("log", "--json", "--limit", "100000").json()
    return [e for e in events if e["type"] == topic]


def verified(cli: Cli) -> bool:
    result = cli("verify", "--json")
    return result.exit_code == 0 and result.json()["ok"] is True


def forget(cli: Cli, option: str, value: str) -> Result:
    return cli("forget", option, value, "--yes", "--json")


def recalls(cli: Cli, query: str, word: str) -> bool:
    items = cli("recall", query, "--no-server", "--json").json()["items"]
    return any(word in item["text"] for item in items)
