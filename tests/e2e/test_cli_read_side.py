"""Read-side commands end to end: project, query, report, export, graph, replay, status."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest

from mindledger.projections.engine.schema import TABLES
from tests.conftest import Result

Cli = Callable[..., Result]


@pytest.fixture
def busy_mind(cli: Cli, mind_home: Path) -> Path:
    # Opening a thread reads the read model (for the triage check), so it comes first.
    cli("thread", "open", "Why did the import fail?", "--content", "On 3 May")
    cli("commit", "Send the weekly report")
    cid = cli("commit", "Water the plants").output.strip()
    cli("close", cid, "--reason", "watered")
    cli("concept", "define", "project.alpha", "The billing rewrite")
    cli("concept", "define", "team.billing", "The billing team")
    cli("concept", "relate", "project.alpha", "team.billing", "--as", "owned-by")
    return mind_home


def test_project_catches_up_and_status_shows_no_lag(cli: Cli, busy_mind: Path) -> None:
    before = cli("status", "--json").json()["projections"][0]

    projected = cli("project", "--json").json()
    after = cli("status", "--json").json()

    # A write catches the read model up before its first event (the append guard), so only
    # what the last command appended is still to project.
    assert before["lag"] == 1
    assert (projected["applied"], projected["position"]) == (1, 8)
    # The vector projection runs beside (a served mind, `project --follow` or `--vectors`).
    assert after["projections"] == [
        {"name": "main", "position": 8, "lag": 0},
        {"name": "vectors", "position": 0, "lag": 8},
    ]


def test_query_returns_a_json_array_with_named_parameters(cli: Cli, busy_mind: Path) -> None:
    result = cli(
        "query", "SELECT cid, status FROM commitments WHERE status = $s", "-p", "s", "closed"
    )

    assert result.exit_code == 0
    assert [r["status"] for r in result.json()] == ["closed"]


@pytest.mark.parametrize(
    ("flag", "expected"),
    [
        ("--csv", "kind,n\ncommitment,3\n"),
        ("--nl", '{"kind": "commitment", "n": 3}\n'),
        ("--table", "KIND        N\ncommitment  3\n"),
    ],
)
def test_query_output_formats(cli: Cli, busy_mind: Path, flag: str, expected: str) -> None:
    result = cli(
        "query",
        "SELECT aggregate_kind AS kind, count(*) AS n FROM events "
        "WHERE aggregate_kind = 'commitment' GROUP BY 1",
        flag,
    )

    assert result.output == expected


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("DELETE FROM events", "DELETE statements are refused"),
        ("DROP TABLE events", "DROP statements are refused"),
        ("COPY events TO '/tmp/out.csv'", "COPY statements are refused"),
        ("INSTALL httpfs", "INSTALL statements are refused"),
        ("FORCE INSTALL httpfs", "INSTALL statements are refused"),
        ("LOAD httpfs", "LOAD statements are refused"),
        ("SELECT * FROM read_csv('/etc/passwd')", "disabled by configuration"),
        ("SELECT * FROM no_such_table", "no_such_table does not exist"),
        ("SELECT 1; SELECT 2", "exactly one SQL statement"),
    ],
)
def test_query_refuses_writes_and_reports_sql_errors_in_one_line(
    cli: Cli, busy_mind: Path, sql: str, message: str
) -> None:
    result = cli("query", sql)

    assert result.exit_code == 1
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_reports_as_json_and_png(cli: Cli, busy_mind: Path, tmp_path: Path) -> None:
    commitments = cli("report", "commitments", "--format", "json").json()
    activity = cli("report", "activity", "--format", "json").json()
    png = cli("report", "activity", "--format", "png", "--out", str(tmp_path / "a.png"))

    assert commitments == [
        {
            "day": "2026-05-01",
            "origin": "owner",
            "opened": 2,
            "closed": 1,
            "still_open": 1,
            "median_hours_to_close": 0.0,
        }
    ]
    assert {r["type"]: r["events"] for r in activity}["mind.commitment.opened"] == 2
    assert png.exit_code == 0
    assert (tmp_path / "a.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_export_writes_every_table(cli: Cli, busy_mind: Path, tmp_path: Path, fmt: str) -> None:
    result = cli("export", "--format", fmt, str(tmp_path / "out"))

    assert result.exit_code == 0
    reader = "read_parquet" if fmt == "parquet" else "read_csv"
    count = duckdb.sql(f"SELECT count(*) FROM {reader}('{tmp_path}/out/commitments.{fmt}')")
    assert count.fetchall() == [(2,)]
    assert sorted(p.stem for p in (tmp_path / "out").iterdir()) == sorted(TABLES)


def test_graph_stats_neighbors_and_export(cli: Cli, busy_mind: Path) -> None:
    stats = cli("graph", "stats", "--json").json()
    near = cli("graph", "neighbors", "team.billing", "--json").json()
    graphml = cli("graph", "export", "--format", "graphml").output

    assert stats["by_kind"] == {"concept": 2, "commitment": 2, "thread": 1}
    assert stats["by_relation"] == {"owned-by": 1}
    assert [(n["id"], n["distance"]) for n in near] == [("concept:project.alpha", 1)]
    assert "<graphml" in graphml and "project.alpha" in graphml


def test_graph_export_json_to_a_file_keeps_the_format_and_prints_what_was_written(
    cli: Cli, busy_mind: Path, tmp_path: Path
) -> None:
    out = tmp_path / "g.graphml"

    result = cli("graph", "export", "--format", "graphml", "--out", str(out), "--json")

    assert result.exit_code == 0
    assert out.read_text().startswith("<graphml ")
    assert result.json() == {"out": str(out), "format": "graphml", "nodes": 5, "edges": 1}


def test_graph_export_json_to_stdout_with_another_format_is_refused(
    cli: Cli, busy_mind: Path
) -> None:
    refused = cli("graph", "export", "--format", "graphml", "--json")
    graph = cli("graph", "export", "--json").json()

    assert refused.exit_code == 1 and refused.output == ""
    assert "--json prints JSON, not graphml" in refused.stderr
    assert len(graph["nodes"]) == 5


def test_graph_neighbors_of_an_unknown_node_is_a_clear_error(cli: Cli, busy_mind: Path) -> None:
    result = cli("graph", "neighbors", "nothing.here")

    assert result.exit_code == 1
    assert "no graph node 'nothing.here'" in result.stderr


def test_replay_check_and_swap(cli: Cli, busy_mind: Path, tmp_path: Path) -> None:
    cli("project")

    checked = cli("replay", "--into", str(tmp_path / "r.duckdb"), "--check", "--json").json()
    swapped = cli("replay", "--swap", "--json").json()
    again = cli("replay", "--into", str(tmp_path / "r.duckdb"))

    assert (checked["applied"], checked["identical"], checked["differences"]) == (8, True, [])
    assert swapped["swapped"] is True
    assert again.exit_code == 1 and "exists" in again.stderr


def test_replay_check_reports_a_live_read_model_that_drifted(
    cli: Cli, busy_mind: Path, tmp_path: Path
) -> None:
    cli("project")
    con = duckdb.connect(str(busy_mind / "readmodel.published.duckdb"))
    con.execute("UPDATE commitments SET text = 'tampered' WHERE status = 'open'")
    con.close()

    result = cli("replay", "--into", str(tmp_path / "r.duckdb"), "--check", "--json")

    assert result.exit_code == 1
    assert {(d["table"], d["only_in"]) for d in result.json()["differences"]} == {
        ("commitments", "live"),
        ("commitments", "rebuilt"),
    }
