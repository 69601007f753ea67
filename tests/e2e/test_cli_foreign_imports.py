"""`mind import pmm` and `mind import chatgpt` end to end: what an import leaves for `recall`,
`commitments`, `identity`, `log` and `query`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Result
from tests.foreign_files import (
    PMM_DATA,
    SMALL_PMM,
    branching_conversation,
    chatgpt_zip,
    pmm_ledger,
    write_json,
)

Cli = Callable[..., Result]
# The real ledger with commitments PMM left open (61 opened, 58 closed) and the fewest events.
REAL = PMM_DATA / "chat_session_2025-11-10_22-36-04_ledger.json"


@pytest.mark.skipif(not REAL.exists(), reason="needs ../shared/data/pmm")
def test_a_real_pmm_ledger_is_recalled_listed_logged_and_queryable(
    cli: Cli, mind_home: Path
) -> None:
    done = cli("import", "pmm", str(REAL), "--json")

    assert done.exit_code == 0, done.stderr
    summary = done.json()
    assert (summary["events"], summary["added"], summary["breaks"], summary["forks"]) == (
        1251,
        1251,
        [],
        [],
    )
    assert sum(r["count"] for r in summary["kinds"]) == 1251
    recalled = cli("recall", "giving you a new name Echo", "--json").json()
    assert any("Lets call you Echo" in i["text"] for i in recalled["items"])
    open_ = cli("commitments", "--json").json()
    assert len(open_) == 3 and all(c["origin"] == "assistant" for c in open_)
    counted = cli(
        "query", "SELECT count(*) AS n FROM imported_records WHERE kind = 'autonomy_tick'"
    ).json()
    assert counted == [{"n": 212}]
    logged = cli("log", "--kind", "import", "--limit", "3", "--json").json()
    assert {e["type"] for e in logged} == {"mind.import.record_kept"}
    again = cli("import", "pmm", str(REAL), "--json").json()
    assert (again["added"], again["skipped"]) == (0, 1251)


def test_a_pmm_import_prints_its_kinds_table_and_adopts_the_names(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    path = write_json(tmp_path / "small.json", pmm_ledger(SMALL_PMM))

    done = cli("import", "pmm", str(path))

    assert done.exit_code == 0, done.stderr
    assert any(
        line.split() == ["identity_adoption", "name", "adopted", "1"]
        for line in done.output.splitlines()
    )
    assert "no hash breaks, no forks" in done.output
    history = cli("identity", "--json").json()
    assert history["name"] == "Nova"
    raw = cli("recall", "zebra crossing", "--json").json()
    assert any("[imported pmm autonomy_tick 16]" in i["text"] for i in raw["items"])


def test_a_broken_pmm_file_is_refused_with_one_line_and_nothing_written(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    ledger = pmm_ledger(SMALL_PMM)
    ledger[3]["meta"] = '{"cid":"aa11"}'
    path = write_json(tmp_path / "broken.json", ledger)
    head = cli("status", "--json").json()["head"]

    refused = cli("import", "pmm", str(path))

    assert refused.exit_code == 1
    assert refused.stderr.startswith("Error: ") and refused.stderr.count("\n") == 1
    assert "PMM id 4)" in refused.stderr
    assert cli("status", "--json").json()["head"] == head
    accepted = cli("import", "pmm", str(path), "--accept-broken", "--json").json()
    assert accepted["breaks"] == ["4"]


def test_a_chatgpt_export_zip_is_imported_and_recalled(
    cli: Cli, mind_home: Path, tmp_path: Path
) -> None:
    path = chatgpt_zip(tmp_path / "export.zip", [branching_conversation()])

    done = cli("import", "chatgpt", str(path))

    assert done.exit_code == 0, done.stderr
    assert "1 conversations, 3 messages added, 0 skipped" in done.output
    assert "1 tool messages skipped" in done.output
    recalled = cli("recall", "when was the lighthouse built", "--json").json()
    assert any("built in 1890" in i["text"] for i in recalled["items"])
