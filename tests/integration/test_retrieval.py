"""Retrieval and imports: LoCoMo and chat imports, recall's channels, budget, determinism."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from mindledger.adapters.importers import import_chat, import_locomo
from mindledger.compose import Home, open_mind, open_reader, read_model
from mindledger.domain.errors import InvalidInputError
from mindledger.projections.retrieval.context import DROPPED_KEPT
from mindledger.projections.retrieval.recall import gather, rank, recall
from mindledger.projections.retrieval.time_expressions import windows
from tests.conftest import LOCOMO
from tests.integration.ledger_factory import sqlite_mind

NOW = datetime(2024, 1, 1, tzinfo=UTC)
needs_locomo = pytest.mark.skipif(not LOCOMO.exists(), reason="needs ../shared/data/locomo")


@pytest.fixture
def locomo_home(tmp_path: Path) -> Home:
    app = sqlite_mind(tmp_path, commands=0)
    import_locomo(app, LOCOMO, "conv-26")
    return Home(tmp_path)


@needs_locomo
def test_a_locomo_import_records_every_turn_once(locomo_home: Home) -> None:
    again = import_locomo(open_mind(locomo_home), LOCOMO, "conv-26")

    with read_model(locomo_home) as con:
        count, first = con.execute(
            "SELECT count(*), min_by(source_id, position) FROM messages"
        ).fetchone()
        speaker, time = con.execute(
            "SELECT speaker, time FROM messages WHERE source_id = 'D1:3'"
        ).fetchone()
        caption = con.execute("SELECT text FROM messages WHERE source_id = 'D1:5'").fetchone()
    assert again == [
        {
            "sample": "conv-26",
            "added": 0,
            "skipped": 419,
            "skipped_reasons": {"already imported": 419},
        }
    ]
    assert (count, first) == (419, "D1:1")
    assert (speaker, time) == ("Caroline", datetime(2023, 5, 8, 13, 56, tzinfo=UTC))
    assert caption is not None and "[shares a photo: a photo of a dog" in caption[0]


@needs_locomo
def test_recall_finds_the_evidence_turn_and_records_why(locomo_home: Home) -> None:
    with read_model(locomo_home) as con:
        context = recall(con, "When did Caroline go to the LGBTQ support group?", 500, NOW)

    found = {i.source_id: i for i in context.items}
    assert "D1:3" in found
    assert "lexical" in found["D1:3"].reason
    assert found["D1:3"].day == "2023-05-08"  # said 1:56 pm on 8 May 2023
    heading = context.rendered.index("On 2023-05-08:\n")
    assert heading < context.rendered.index(found["D1:3"].text)
    assert context.tokens <= 500
    assert sum(i.tokens for i in context.items) <= 500


@needs_locomo
@pytest.mark.parametrize("budget", [100, 500, 2000])
def test_the_budget_is_respected_and_nothing_is_dropped_silently(
    locomo_home: Home, budget: int
) -> None:
    with read_model(locomo_home) as con:
        ranked = rank(gather(con, "What did Melanie paint?", NOW))
        context = recall(con, "What did Melanie paint?", budget, NOW)

    assert context.tokens <= budget
    assert len(context.items) + context.dropped_total == len(ranked)
    chosen = {i.id for i in context.items}
    over = [i.id for i in ranked if i.id not in chosen]
    assert [d["id"] for d in context.dropped] == over[:DROPPED_KEPT]
    assert all("over the token budget" in d["reason"] for d in context.dropped)


@needs_locomo
def test_recall_is_deterministic_and_as_of_hides_later_events(locomo_home: Home) -> None:
    with read_model(locomo_home) as con:
        a = recall(con, "Melanie pottery class", 800, NOW)
        b = recall(con, "Melanie pottery class", 800, NOW)
        early = recall(con, "Melanie pottery class", 800, NOW, as_of=50)

    assert [(i.id, i.score, i.tokens) for i in a.items] == [
        (i.id, i.score, i.tokens) for i in b.items
    ]
    assert all(i.id <= 50 for i in early.items)


@pytest.mark.parametrize("scored_in", ["python", "sql"])
def test_closed_commitments_resolved_threads_and_old_definitions_are_not_recalled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scored_in: str
) -> None:
    if scored_in == "sql":
        monkeypatch.setattr("mindledger.projections.retrieval.bm25.SMALL_DOCS", 0)
    app = sqlite_mind(tmp_path, commands=0)
    cid = app.open_commitment("water the orchid every sunday").cid
    thread = app.open_thread("orchid care question", "how often to water an orchid")
    app.define_concept("plant.orchid", "an orchid that needs water weekly")
    with read_model(Home(tmp_path)):
        pass  # projected before they are superseded, then superseded in later batches
    app.close_commitment(cid, "the orchid died")
    app.resolve_thread(thread, "dissolved", reason="no orchid any more")
    app.define_concept("plant.orchid", "a plastic flower")

    with read_model(Home(tmp_path)) as con:
        context = recall(con, "orchid water", 2000, NOW)

    texts = " ".join(i.text for i in context.items)
    assert "every sunday" not in texts and "how often" not in texts
    assert "needs water weekly" not in texts and "a plastic flower" in texts


def test_a_chat_import_is_validated_before_anything_is_written(tmp_path: Path) -> None:
    app = sqlite_mind(tmp_path, commands=0)
    good = tmp_path / "good.jsonl"
    good.write_text(
        '{"role": "user", "content": "I adopted a cat named Miso",'
        ' "time": "2025-03-02T10:00:00Z"}\n'
        '{"role": "assistant", "content": "Lovely name!"}\n'
    )
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"role": "user", "content": "fine"}\nnot json\n')

    first = import_chat(app, good)
    again = import_chat(app, good)
    with pytest.raises(InvalidInputError, match=r"bad\.jsonl:2"):
        import_chat(app, bad)

    assert (first["added"], again["added"], again["skipped"]) == (2, 0, 2)
    with read_model(Home(tmp_path)) as con:
        rows = con.execute("SELECT speaker, text, time FROM messages ORDER BY position").fetchall()
    assert [r[:2] for r in rows] == [
        ("user", "I adopted a cat named Miso"),
        ("assistant", "Lovely name!"),
    ]
    assert rows[0][2] == datetime(2025, 3, 2, 10, tzinfo=UTC)


@pytest.mark.parametrize(
    ("query", "start", "end"),
    [
        (
            "what happened last May?",
            datetime(2023, 5, 1, tzinfo=UTC),
            datetime(2023, 6, 1, tzinfo=UTC),
        ),
        (
            "what did we do in 2022",
            datetime(2022, 1, 1, tzinfo=UTC),
            datetime(2023, 1, 1, tzinfo=UTC),
        ),
        (
            "in March 2021 we met",
            datetime(2021, 3, 1, tzinfo=UTC),
            datetime(2021, 4, 1, tzinfo=UTC),
        ),
    ],
)
def test_time_expressions_become_windows(query: str, start: datetime, end: datetime) -> None:
    now = datetime(2023, 11, 15, tzinfo=UTC)

    found = [(s, e) for s, e, _ in windows(query, now)]

    assert (start, end) in found


def test_two_weeks_ago_is_a_window_around_that_day() -> None:
    now = datetime(2023, 11, 15, tzinfo=UTC)

    ((start, end, words),) = windows("what did I say two weeks ago?", now)

    assert words == "two weeks ago" and start < datetime(2023, 11, 1, tzinfo=UTC) < end


def test_may_as_a_verb_is_not_a_month() -> None:
    assert windows("may I ask something", datetime(2023, 11, 15, tzinfo=UTC)) == []


@pytest.mark.parametrize(
    "query",
    [
        "Who did Maria have dinner with on May 3, 2023?",
        "What happened on 3 May 2023?",
        "and on the 3rd of May, 2023?",
        "what about 2023-05-03",
    ],
)
def test_a_calendar_date_is_a_window_from_the_day_before_to_the_day_after(query: str) -> None:
    found = windows(query, datetime(2024, 1, 1, tzinfo=UTC))

    assert [(s, e) for s, e, _ in found] == [
        (datetime(2023, 5, 2, tzinfo=UTC), datetime(2023, 5, 5, tzinfo=UTC))
    ]  # the date only: not also the whole of May


def test_an_impossible_date_is_no_window() -> None:
    assert windows("on February 30, 2023", datetime(2024, 1, 1, tzinfo=UTC)) == []


def test_recall_cli_json_shape(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from mindledger.cli.main import mind

    app = sqlite_mind(tmp_path, commands=0)
    app.open_commitment("send the quarterly report")
    result = CliRunner().invoke(
        mind, ["--home", str(tmp_path), "recall", "quarterly report", "--budget", "300", "--json"]
    )

    data = json.loads(result.output)
    assert set(data) == {"items", "tokens", "dropped", "vectors"}
    assert {"id", "source_id", "kind", "channel", "score", "reason", "tokens", "text"} <= set(
        data["items"][0]
    )
    assert any(i["kind"] == "commitment" for i in data["items"])


def test_open_commitments_and_live_threads_are_found_by_their_words(tmp_path: Path) -> None:
    app = sqlite_mind(tmp_path, commands=0)
    for i in range(15):
        app.open_commitment(f"unrelated promise number {i}")
    app.open_commitment("renew the passport before the trip to Lisbon")
    app.open_thread("Lisbon hotel", "which neighbourhood should we stay in")

    with read_model(Home(tmp_path)) as con:
        ranked = rank(gather(con, "anything about Lisbon?", NOW))

    lexical = {i.kind: i for i in ranked if "lexical" in i.reason}
    assert "passport" in lexical["commitment"].text
    assert "neighbourhood" in lexical["thread"].text
    assert lexical["thread"].stream is not None


@needs_locomo
def test_sorting_the_term_index_changes_no_result(
    locomo_home: Home, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from mindledger.projections.engine import maintenance
    from mindledger.projections.engine.projector import Projector

    questions = ["When did Caroline go to the LGBTQ support group?", "What does Melanie paint?"]
    reader = open_reader(locomo_home)
    unsorted = Projector(tmp_path / "unsorted.duckdb")
    unsorted.catch_up(reader)
    monkeypatch.setattr(maintenance, "SORT_MIN_ROWS", 0)
    sorted_ = Projector(tmp_path / "sorted.duckdb")
    sorted_.catch_up(reader, maintain=True)

    order = "SELECT term FROM doc_terms"
    terms = [t for (t,) in sorted_.con.execute(order).fetchall()]
    before = [t for (t,) in unsorted.con.execute(order).fetchall()]
    assert terms == sorted(terms) and terms != before
    assert sorted_.con.execute("SELECT unsorted FROM tracking").fetchall() == [(0,)]
    for q in questions:
        a = recall(unsorted.con, q, 1000, datetime(2024, 1, 1, tzinfo=UTC))
        b = recall(sorted_.con, q, 1000, datetime(2024, 1, 1, tzinfo=UTC))
        assert [i.record() for i in a.items] == [i.record() for i in b.items]


def test_concept_bindings_and_the_threads_of_open_commitments_are_recalled(
    tmp_path: Path,
) -> None:
    from mindledger.domain.thread import short_id

    app = sqlite_mind(tmp_path, commands=0)
    thread = app.open_thread("Billing migration", "Move invoices to the new system")
    other = app.open_thread("Unrelated", "Nothing to do with it")
    app.open_commitment("Write the migration plan", thread_id=short_id(thread))
    app.define_concept("project.alpha", "The billing rewrite")
    app.bind_concept("project.alpha", "thread", short_id(other))
    home = Home(tmp_path)

    with read_model(home) as con:
        items = recall(con, "what is project.alpha about?", 2000, NOW).items

    by_source = {i.source_id: i for i in items}
    assert by_source[short_id(thread)].reason.startswith("commitments #11: served by c")
    assert "bindings #1: bound to project.alpha" in by_source[short_id(other)].reason


def test_a_configured_embedding_model_adds_a_projected_vector_channel(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from mindledger.cli.main import mind as mind_command
    from tests.integration.fake_provider import embedding_provider

    app = sqlite_mind(tmp_path, commands=0)
    lines = [
        {"role": "user", "content": "My sister adopted a golden retriever puppy"},
        {"role": "assistant", "content": "What a lovely dog!"},
        {"role": "user", "content": "We painted the kitchen blue last weekend"},
    ]
    transcript = tmp_path / "chat.jsonl"
    transcript.write_text("\n".join(json.dumps(line) for line in lines))
    import_chat(app, transcript)
    runner = CliRunner()

    def mind(*args: str) -> Any:
        result = runner.invoke(mind_command, ["--home", str(tmp_path), *args])
        assert result.exit_code == 0, result.output
        return result

    with embedding_provider() as (url, requests):
        mind("config", "set", "embedding.model", "openai/fake-embed")
        mind("config", "set", "embedding.api_base", url)
        mind("config", "set", "embedding.recall", "on")
        mind("project", "--vectors")  # stored items are embedded by their projection, not by recall
        embedded = len(requests)
        first = json.loads(mind("recall", "golden retriever puppy", "--json").stdout)
        calls_after_first = len(requests)
        again = json.loads(mind("recall", "golden retriever puppy", "--json").stdout)

    vector = [i for i in first["items"] if "vector #1" in i["reason"]]
    assert vector and "golden retriever" in vector[0]["text"]
    assert again == first
    # the projection embedded the three messages, then their window; the first recall only its
    # query; the second recall found the query's vector in the cache
    assert requests == [3, 1, 1] and embedded == 2 and calls_after_first == 3


def test_a_speaker_named_in_the_query_has_their_own_messages_as_a_channel(
    tmp_path: Path,
) -> None:
    from mindledger.adapters.importers import import_locomo
    from mindledger.projections.retrieval.names import keys_in
    from mindledger.projections.retrieval.recall import NO_LIMIT
    from mindledger.projections.retrieval.speakers import said_by

    turns = [
        {"speaker": "Ben", "dia_id": f"D1:{i}", "text": f"pottery pottery class number {i}"}
        for i in range(1, 30)
    ] + [{"speaker": "Ana", "dia_id": "D1:30", "text": "I made a bowl at the pottery studio"}]
    conversation = {
        "speaker_a": "Ana",
        "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": turns,
    }
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([{"sample_id": "s1", "conversation": conversation, "qa": []}]))
    import_locomo(sqlite_mind(tmp_path, commands=0), path, None)

    with read_model(Home(tmp_path)) as con:
        asked, other = "What pottery did Ana make?", "What pottery did Anastasia make?"
        said = said_by(con, asked, set(keys_in(asked)), NO_LIMIT)
        unnamed = said_by(con, other, set(keys_in(other)), NO_LIMIT)
        context = recall(con, "What pottery did Ana make?", 2000, NOW)

    assert [(s[3], s[4]) for s in said] == [("D1:30", "said by Ana")]
    assert unnamed == []
    found = {i.source_id: i for i in context.items}
    assert "speaker #1: said by Ana" in found["D1:30"].reason
