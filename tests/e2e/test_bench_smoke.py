"""Every benchmark module runs on a tiny size, so none can silently break (issue 30). A smoke
run, never a figure: nothing about time is asserted, only that the module's own `main()` runs
to the end with its own arguments and reports. Each runs in this process (one import of the
stack for all of them) on tiny data written here; what a bench starts itself (a server, a `mind`
process) it still starts. Its figures go to tmp_path, never to bench/out. The soak's smoke is
tests/e2e/test_soak_smoke.py; the model-driven benches get a scripted model, and the one that
needs the offline embedding weights or a browser is skipped without them."""

from __future__ import annotations

import contextlib
import functools
import importlib
import io
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mindledger.domain.model_port import Completion
from tests.conftest import REPO
from tests.foreign_files import SMALL_PMM, pmm_ledger

# Modules of bench/ that are parts of the others, not benchmarks.
PARTS = {
    "__init__",
    "common",
    "answer_scoring",
    "locomo_scoring",
    "append_worker",
    "longmsg_data",
    "vector_cache",
}
ELSEWHERE = {"soak": "tests/e2e/test_soak_smoke.py"}


def bench_modules() -> set[str]:
    """bench/'s modules that can be run (`python -m bench.NAME`)."""
    return {p.stem for p in (REPO / "bench").glob("*.py") if p.stem not in PARTS}


def tiny_locomo(path: Path) -> Path:
    """A LoCoMo file of one short conversation (two sessions) and a question per category."""
    speakers = ("Ada", "Ben")
    said = [
        "I adopted a grey cat called Pixel last week.",
        "Lovely! I ran the city half marathon on Sunday.",
        "My sister Clara moved to Lisbon for work.",
        "I am learning to paint sunrises in watercolour.",
        "The boiler code for the cabin is 4471.",
        "We booked the ferry to the islands for June.",
    ]
    conversation: dict[str, Any] = {"speaker_a": speakers[0], "speaker_b": speakers[1]}
    for session in (1, 2):
        conversation[f"session_{session}_date_time"] = f"1:56 pm on {session} May, 2023"
        conversation[f"session_{session}"] = [
            {"speaker": speakers[n % 2], "dia_id": f"D{session}:{n + 1}", "text": text}
            for n, text in enumerate(said[(session - 1) * 3 : session * 3])
        ]
    qa: list[dict[str, Any]] = [
        {"question": "What is the cat called?", "answer": "Pixel", "evidence": ["D1:1"]},
        {"question": "Where did Clara move?", "answer": "Lisbon", "evidence": ["D1:3"]},
        {"question": "What does Ada paint?", "answer": "sunrises", "evidence": ["D2:1"]},
        {"question": "What is the boiler code?", "answer": "4471", "evidence": ["D2:2"]},
    ]
    for category, question in enumerate(qa, 1):
        question["category"] = category
    qa.append({"question": "Why?", "evidence": ["D2:3"], "category": 5, "adversarial_answer": "x"})
    sample = {"sample_id": "conv-1", "conversation": conversation, "qa": qa}
    path.write_text(json.dumps([sample]), encoding="utf-8")
    return path


class Scripted:
    """A scripted model for the model-driven benches: answers with the first line of its
    memory block (their code is under test, not a model's)."""

    name = "scripted"
    compact_prompt = False
    memory_budget = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def complete(
        self, messages: list[dict[str, Any]], on_token: Callable[[str], None] | None = None
    ) -> Completion:
        prompt = "\n".join(str(m.get("content", "")) for m in messages)
        memory = prompt.split("<memory>")[-1].strip().splitlines()
        return Completion(memory[0] if memory else "I do not know.", self.name, "test")


class Ran:
    """What a bench reported (`report(name, figures)` calls), by name."""

    def __init__(self) -> None:
        self.reports: dict[str, list[dict[str, Any]]] = {}


@pytest.fixture
def bench(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Ran]]:
    """Run `bench.NAME`'s main() with these arguments, its scratch files and figures under
    tmp_path; the environment (a bench sets MIND_NOW or MIND_HOME) is restored afterwards."""
    from bench import common

    saved = dict(os.environ)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.delenv("MIND_TEST_POSTGRES_DSN", raising=False)  # SQLite only: tiny and local
    out = tmp_path / "out"

    def run(name: str, *args: str | Path) -> Ran:
        module = importlib.import_module(f"bench.{name}")
        ran = Ran()

        def report(what: str, figures: dict[str, Any], folder: Path | None = None) -> None:
            ran.reports.setdefault(what, []).append(figures)
            common.report(what, figures, out)

        if hasattr(module, "report"):
            monkeypatch.setattr(module, "report", report)
        if hasattr(module, "OUT"):
            monkeypatch.setattr(module, "OUT", out)
        monkeypatch.setattr(sys, "argv", [f"bench.{name}", *map(str, args)])
        assert module.main() in (None, 0)
        return ran

    try:
        yield run
    finally:
        os.environ.clear()
        os.environ.update(saved)


def test_every_bench_module_has_a_smoke_run() -> None:
    smoked = {n.removeprefix("test_").split("_runs")[0] for n in globals() if "_runs" in n}
    missing = bench_modules() - smoked - set(ELSEWHERE)
    assert not missing, f"add a tiny run of each to {__file__}: {sorted(missing)}"


# In-process benches: a tiny ledger, the bench's own arguments.


def fewer(monkeypatch: pytest.MonkeyPatch, module: str, function: str, **kwargs: Any) -> None:
    """A bench's function with a smaller fixed count than its own (one its arguments do not
    reach), as `main()` calls it."""
    target = importlib.import_module(f"bench.{module}")
    original = getattr(target, function)
    monkeypatch.setattr(target, function, functools.partial(original, **kwargs))


def test_ledger_runs(bench: Callable[..., Ran], monkeypatch: pytest.MonkeyPatch) -> None:
    fewer(monkeypatch, "ledger", "status_cold_start", runs=1)
    ran = bench("ledger", "--commands", "20", "--rounds", "1", "--verify-events", "200")
    assert set(ran.reports) == {"append", "verify", "status"}


def test_export_roundtrip_runs(bench: Callable[..., Ran]) -> None:
    assert bench("export_roundtrip", "--sizes", "200").reports["export_roundtrip"]


def test_forget_runs(bench: Callable[..., Ran]) -> None:
    # Its smallest mind: a tenth of the size comes from `fill` in saves of 200 events.
    assert bench("forget", "--sizes", "400").reports["forget"]


def test_readmodel_size_runs(bench: Callable[..., Ran]) -> None:
    [figures] = bench("readmodel_size", "--turns", "4", "--every", "2").reports["readmodel_size"]
    assert [s["turns"] for s in figures["this"]["sizes"]] == [2, 4]


def test_forget_scale_runs(bench: Callable[..., Ran]) -> None:
    assert bench("forget_scale", "--sizes", "100", "--rounds", "1").reports["forget_scale"]


def test_projection_runs(bench: Callable[..., Ran], monkeypatch: pytest.MonkeyPatch) -> None:
    fewer(monkeypatch, "projection", "query_latency", runs=2)
    fewer(monkeypatch, "projection", "follow_lag", seconds=0.5)
    ran = bench("projection", "--sizes", "200")
    assert set(ran.reports) == {"projection", "follow"}


def test_threads_runs(bench: Callable[..., Ran]) -> None:
    assert bench("threads", "--threads", "20", "--runs", "1").reports["threads"]


@pytest.mark.slow
def test_turns_runs(bench: Callable[..., Ran], tmp_path: Path) -> None:
    args = ["--sizes", "50", "--turns", "2", "--process-turns", "1", "--served-gap", "0.01"]
    ran = bench("turns", *args, "--homes", str(tmp_path / "homes"))
    assert set(ran.reports) == {"turns", "turns_flatness"}
    assert [p.name for p in (tmp_path / "homes").iterdir()] == ["n50"]  # for the next run
    assert "served_turn_to_raw_floor_p50" in ran.reports["turns"][0]
    assert "turn_to_raw_floor_cpu_p50" in ran.reports["turns"][0]


def test_knowledge_runs(bench: Callable[..., Ran]) -> None:
    ran = bench("knowledge", "--items", "5", "--asks", "2", "--process-asks", "1")
    assert len(ran.reports) == 3


def test_locomo_runs(bench: Callable[..., Ran], tmp_path: Path) -> None:
    data = tiny_locomo(tmp_path / "locomo.json")
    assert bench("locomo", "--data", data, "--samples", "1").reports["locomo_summary"]


def test_recall_runs(bench: Callable[..., Ran], tmp_path: Path) -> None:
    data = tiny_locomo(tmp_path / "locomo.json")
    ran = bench("recall", "--sizes", "200", "--queries", "3", "--vectors", "--data", data)
    assert ran.reports["recall"] and ran.reports["recall_vectors"]


def test_vector_lag_runs(bench: Callable[..., Ran], tmp_path: Path) -> None:
    data = tiny_locomo(tmp_path / "locomo.json")
    ran = bench("vector_lag", "--size", "120", "--pairs", "1", "--data", data)
    assert ran.reports["vector_lag"]


def test_query_embed_runs(bench: Callable[..., Ran], tmp_path: Path) -> None:
    data = tiny_locomo(tmp_path / "locomo.json")
    ran = bench("query_embed", "--questions", "3", "--data", data)
    assert ran.reports["query_embed"]


def test_longmsg_runs(
    bench: Callable[..., Ran], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fewer(monkeypatch, "longmsg", "conversations", sessions=5, exchanges=6)
    bench("longmsg", "--conversations", "1")
    assert capsys.readouterr().out


def test_spans_cost_runs(
    bench: Callable[..., Ran], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mindledger.projections.retrieval import spans

    monkeypatch.setattr(spans, "SPAN_K", spans.SPAN_K)  # the bench sets it; restored after
    data = tiny_locomo(tmp_path / "locomo.json")
    args = ["--size", "200", "--queries", "3", "--data", data]
    assert bench("spans_cost", *args).reports["spans_cost"]


def test_windows_cost_runs(bench: Callable[..., Ran], tmp_path: Path) -> None:
    from mindledger.optional_parts import find

    if not find("embedding-weights").present:
        pytest.skip("the offline embedding weights are not installed (README, install)")
    data = tiny_locomo(tmp_path / "locomo.json")
    args = ["--size", "200", "--queries", "3", "--data", data]
    assert bench("windows_cost", *args).reports["windows_cost"]


def test_import_pmm_runs(bench: Callable[..., Ran], tmp_path: Path) -> None:
    folder = tmp_path / "pmm"
    folder.mkdir()
    (folder / "small.json").write_text(json.dumps(pmm_ledger(SMALL_PMM)), encoding="utf-8")
    assert bench("import_pmm", "--data", folder, "--repeat", "1").reports["import_pmm"]


def test_embeddings_runs(bench: Callable[..., Ran], tmp_path: Path) -> None:
    from mindledger.optional_parts import find

    if not find("embedding-weights").present:
        pytest.skip("the offline embedding weights are not installed (README, install)")
    data = tiny_locomo(tmp_path / "locomo.json")
    args = ["--items", "8", "--queries", "2", "--singles", "1"]
    assert set(bench("embeddings", "--data", data, *args).reports) == {
        "embeddings",
        "semantic_lookup",
    }


def test_answers_runs(
    bench: Callable[..., Ran], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import bench.answers as answers

    monkeypatch.setattr(answers, "build_model", lambda home, spec: Scripted())
    bench("answers", "--smoke", "--json")
    assert json.loads(capsys.readouterr().out)["answers"]


def test_embedded_settings_runs(
    bench: Callable[..., Ran], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import bench.embedded_settings as embedded

    monkeypatch.setattr(embedded, "EmbeddedModel", Scripted)  # the model is not under test
    bench("embedded_settings", "--profiles", "after", "--questions", "1", "--json")
    out = capsys.readouterr().out  # a line per question, then the rows
    assert [row["turns"] for row in json.loads(out[out.index("\n[") :])] == [1]


def test_fuzz_runs(bench: Callable[..., Ran], monkeypatch: pytest.MonkeyPatch) -> None:
    """bench.fuzz runs tests/fuzz (which the suite runs anyway) with more examples: what is
    checked here is the command it builds."""
    import bench.fuzz as fuzz

    calls: list[tuple[list[str], dict[str, str]]] = []
    monkeypatch.setattr(
        fuzz.subprocess, "call", lambda command, cwd, env: calls.append((command, env)) or 0
    )
    bench("fuzz", "--examples", "2", "--", "-x")
    [(command, env)] = calls
    assert command[-2:] == ["tests/fuzz", "-x"] and env["MIND_FUZZ_EXAMPLES"] == "2"


# Benches that start processes (a server, `mind` commands): each pays a process's start-up
# (marked slow: `-m "not slow"` leaves them out of a quick local run; the suite runs them).


@pytest.mark.slow
def test_encryption_runs(
    bench: Callable[..., Ran], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both sides are this tree (a previous release's is the real run's `--base`), so its
    worker script runs in this process rather than in one per tree and job."""
    import bench.encryption as encryption

    def worker(tree: Path, job: dict[str, Any]) -> dict[str, Any]:
        assert tree == REPO
        out = io.StringIO()
        monkeypatch.setattr(sys, "argv", ["-c", json.dumps(job)])
        with contextlib.redirect_stdout(out):
            exec(compile(encryption.WORKER, "<worker>", "exec"), {"__name__": "__main__"})
        result: dict[str, Any] = json.loads(out.getvalue().strip().splitlines()[-1])
        return result

    monkeypatch.setattr(encryption, "worker", worker)
    args = ["--base", REPO, "--sizes", "50", "--catch-up", "0", "--pairs", "1", "--turns", "1"]
    ran = bench("encryption", *args, "--root", tmp_path / "enc")
    assert len(ran.reports["encryption"]) == 2 and ran.reports["encryption_summary"]


@pytest.mark.slow
def test_catchup_runs(bench: Callable[..., Ran], tmp_path: Path) -> None:
    """Both sides are this tree (a previous release's is the real run's `--base`)."""
    args = ["--base", REPO, "--size", "200", "--pairs", "1", "--replay", "--root", tmp_path]
    assert len(bench("catchup", *args).reports["catchup"]) == 4


@pytest.mark.slow
def test_mcp_start_runs(bench: Callable[..., Ran]) -> None:
    assert bench("mcp_start", "--runs", "1").reports["mcp_start"]


@pytest.mark.slow
def test_serve_runs(bench: Callable[..., Ran], tmp_path: Path) -> None:
    bench("serve", "--runs", "1")
    assert json.loads((tmp_path / "out" / "serve.json").read_text())["figures"]


@pytest.mark.slow
def test_serve_load_runs(bench: Callable[..., Ran], tmp_path: Path) -> None:
    bench("serve_load", "--ops", "2", "--clients", "1")
    assert json.loads((tmp_path / "out" / "serve_load.json").read_text())["results"]


@pytest.mark.slow
def test_warm_turn_runs(bench: Callable[..., Ran]) -> None:
    assert bench("warm_turn", "--rounds", "1", "--vectors", "off").reports["warm_turn"]


@pytest.mark.slow
def test_serve_stop_runs(bench: Callable[..., Ran]) -> None:
    assert bench("serve_stop", "--runs", "1").reports["serve_stop"]


@pytest.mark.slow
def test_startup_runs(bench: Callable[..., Ran]) -> None:
    assert bench("startup", "--runs", "1", "--events", "50", "--no-mcp").reports["startup"]


@pytest.mark.slow
def test_web_runs(bench: Callable[..., Ran], monkeypatch: pytest.MonkeyPatch) -> None:
    import bench.web as web

    if not (shutil.which("chromium") and shutil.which("chromedriver")):
        pytest.skip("Debian's chromium and chromium-driver are not installed")
    monkeypatch.setattr(web, "TURNS", 1)
    assert bench("web", "--events", "50", "--loads", "1", "--calls", "1").reports["web"]
