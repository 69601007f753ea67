"""Property: any sequence of commands, exported as jsonl and imported into a new home, gives a
mind with the same genesis, the same head hash and identical read models (the comparison
`mind replay --check` makes)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mindledger.cli.main import mind
from mindledger.projections.engine.replay import differences

WORDS = st.text("abcdefgh xyz", min_size=1, max_size=12).map(str.strip).filter(bool)
TOKENS = st.sampled_from(["user.report", "project.alpha", "team.billing"])
REPLIES = st.sampled_from(
    [
        "Sure.\nCOMMIT: {w}",
        "Done.\nCLOSE: {cid} finished",
        "Noted.\nCONCEPT: user.{t} = {w}",
        "Linked.\nRELATE: user.report -> part-of -> project.alpha",
        'Hmm.\nTHREAD: {{"label": "{w}", "content": "why {w}?"}}',
        'Thinking.\nREFLECT: {w}\nCLAIM: note={{"x": 1}}',
        "plain reply with no control line",
        "COMMIT:\nCLOSE: nothing",
    ]
)
STEPS = st.one_of(
    st.tuples(st.just("commit"), WORDS),
    st.tuples(st.just("close"), st.integers(0, 5)),
    st.tuples(st.just("define"), TOKENS, WORDS),
    st.tuples(st.just("alias"), TOKENS, WORDS),
    st.tuples(st.just("relate"), TOKENS, TOKENS),
    st.tuples(st.just("thread open"), WORDS),
    st.tuples(st.just("thread resolve"), st.integers(0, 5)),
    st.tuples(st.just("turn"), WORDS, REPLIES, st.integers(0, 5)),
    st.tuples(st.just("import chat"), st.lists(WORDS, min_size=1, max_size=3)),
)


class Home:
    """One home driven through the CLI, remembering the ids its commands printed."""

    def __init__(self, path: Path) -> None:
        self.path, self.cids, self.threads = path, [], []  # type: list[str]
        self.runner = CliRunner()

    def run(self, *args: str) -> Any:
        r = self.runner.invoke(mind, ["--home", str(self.path), *args], catch_exceptions=False)
        assert r.exit_code in (0, 1), r.output  # a refusal is fine; a usage error is not
        return r

    def step(self, step: tuple[Any, ...], scratch: Path) -> None:
        kind = step[0]
        if kind == "commit":
            r = self.run("commit", step[1])
            if r.exit_code == 0:
                self.cids.append(r.stdout.split()[0])
        elif kind == "close" and self.cids:
            self.run("close", self.cids[step[1] % len(self.cids)], "--reason", "done")
        elif kind == "define":
            self.run("concept", "define", step[1], step[2])
        elif kind == "alias":
            self.run("concept", "alias", step[1], step[2])
        elif kind == "relate":
            self.run("concept", "relate", step[1], step[2], "--as", "related-to")
        elif kind == "thread open":
            r = self.run("thread", "open", step[1], "--content", f"about {step[1]}", "--json")
            if r.exit_code == 0:
                self.threads.append(json.loads(r.stdout)["id"])
        elif kind == "thread resolve" and self.threads:
            thread = self.threads[step[1] % len(self.threads)]
            self.run("thread", "resolve", thread, "--as", "dissolved", "--reason", "moot")
        elif kind == "turn":
            cid = self.cids[step[3] % len(self.cids)] if self.cids else "c0000000000"
            reply = step[2].format(w=step[1], cid=cid, t=step[1].replace(" ", ""))
            self.run("turn", step[1], "--model", "mock", "--mock-reply", reply)
        elif kind == "import chat":
            path = scratch / "chat.jsonl"
            lines = [json.dumps({"role": "user", "content": text}) for text in step[1]]
            path.write_text("\n".join(lines) + "\n")
            self.run("import", "chat", str(path))


@pytest.fixture(autouse=True)
def fixed_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIND_NOW", "2026-05-01T09:00:00Z")
    monkeypatch.delenv("MIND_BACKEND", raising=False)
    monkeypatch.delenv("MIND_HOME", raising=False)


@settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(steps=st.lists(STEPS, min_size=1, max_size=7))
def test_export_then_import_gives_the_same_head_and_read_models(
    steps: list[tuple[Any, ...]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        source = Home(root / "source")
        source.run("init", "--name", "Echo")
        for step in steps:
            source.step(step, root)
        exported = source.run("export", str(root / "out"), "--format", "jsonl", "--json")
        file = json.loads(exported.stdout)["file"]

        target = Home(root / "target")
        imported = target.run("import", "ledger", file, "--json")

        assert imported.exit_code == 0, imported.output
        heads = [json.loads(h.run("status", "--json").stdout)["head"] for h in (source, target)]
        assert heads[0] == heads[1]
        for home in (source, target):
            assert home.run("project").exit_code == 0
        published = [h.path / "readmodel.published.duckdb" for h in (source, target)]
        assert differences(*published) == []
