"""No unkeyed hash of a forgettable text is kept in the home's files (issue 16): a sha256 or
blake2b of a short sentence is reversed by guessing the sentence. The CIDs, stream ids, import
keys and the embeddings cache's row keys are keyed with the mind's own secrets instead."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path

from mindledger.compose import Home, embedding_model, home_text_keys, open_mind
from mindledger.domain.commitment import commitment_cid, legacy_cid, normalise
from mindledger.domain.knowledge import legacy_intent_hash, normalise_intent
from tests.conftest import Result
from tests.foreign_files import SMALL_PMM, pmm_ledger, write_json
from tests.integration.ledger_factory import sqlite_mind

Cli = Callable[..., Result]
PROMISE = "Bring the spare key to Ines on Sunday"
QUESTION = "Where does Ines hide the spare key?"
ANSWER = "Under the blue flowerpot"
SAID = "Ines told me the alarm code is 4711"
FIRST = "I am Ines; keep my secrets."


def digests(text: str) -> list[bytes]:
    """Every plain hash of `text` (as written and normalised) as raw bytes and as hex."""
    found: list[bytes] = []
    for form in {text, normalise(text), normalise_intent(text), json.dumps({"answer": text})}:
        data = form.encode()
        for raw in (
            hashlib.sha256(data).digest(),
            hashlib.blake2b(data).digest(),
            hashlib.blake2b(data, digest_size=16).digest(),
        ):
            found += [raw, raw.hex().encode()]
    return found


def home_files(home: Path) -> dict[str, bytes]:
    """The ledger, the key store and the embeddings cache, with their WAL files."""
    names = ("ledger.sqlite", "keys.sqlite", "embeddings.sqlite")
    return {p.name: p.read_bytes() for p in home.iterdir() if p.name.startswith(names)}


def test_no_plain_hash_of_what_was_written_is_in_the_ledger_keys_or_embeddings(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    chat = tmp_path / "chat.jsonl"
    chat.write_text(json.dumps({"role": "user", "content": SAID}) + "\n", encoding="utf-8")
    pmm = list(SMALL_PMM)
    pmm[1] = ("user_message", FIRST, {"role": "user"})
    pmm_file = write_json(tmp_path / "pmm.json", pmm_ledger(pmm))
    first_hash = pmm_ledger(pmm)[1]["hash"]

    cid = cli("commit", PROMISE, "--json").json()["cid"]
    cli("close", cid, "--reason", "brought it")
    cli("commit", PROMISE)
    cli("remember", ANSWER, "--question", QUESTION, "--state", "supported", "--confidence", "0.92")
    asked = cli("ask", QUESTION, "--json").json()
    cli("import", "chat", str(chat))
    cli("import", "pmm", str(pmm_file))
    embed = embedding_model(Home(mind_home), {})
    assert embed is not None
    embed([PROMISE, QUESTION, ANSWER, SAID, FIRST])
    embed.cache.close()

    files = home_files(mind_home)
    assert {"ledger.sqlite", "keys.sqlite", "embeddings.sqlite"} <= set(files)
    assert asked["route"] == "memory-exact"
    assert cid == commitment_cid(PROMISE, home_text_keys(Home(mind_home)))
    plain = [
        legacy_cid(PROMISE).encode(),
        legacy_intent_hash(QUESTION).encode(),
        ("k" + legacy_intent_hash(QUESTION)[:10]).encode(),
        first_hash.encode(),
        first_hash[:16].encode(),
        hashlib.sha256(pmm_file.read_bytes()).hexdigest().encode(),
        hashlib.sha256(chat.read_bytes()).hexdigest().encode(),
        hashlib.sha256(json.dumps(["user", None, SAID, 0]).encode()).hexdigest()[:32].encode(),
    ]
    for text in (PROMISE, QUESTION, ANSWER, SAID, FIRST):
        plain += digests(text)
    leaks = [(name, p) for name, data in files.items() for p in plain if p in data]
    assert leaks == []


def test_a_copy_of_a_home_names_a_promise_as_the_original_and_another_mind_does_not(
    tmp_path: Path,
) -> None:
    original, other = tmp_path / "original", tmp_path / "other"
    for home in (original, other):
        sqlite_mind(home, commands=0).close()
    shutil.copytree(original, tmp_path / "copy")  # its secrets were made by init

    cids = [
        open_mind(Home(home)).open_commitment(PROMISE).cid
        for home in (original, tmp_path / "copy", other)
    ]

    assert cids[0] == cids[1] != cids[2]
