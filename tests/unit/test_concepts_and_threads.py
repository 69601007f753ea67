"""Concepts (versions, aliases, relations) and threads (lifecycle, verdicts, tombstones)."""

from __future__ import annotations

import pytest

from mindledger.domain.application import Mind
from mindledger.domain.errors import (
    InvalidInputError,
    ResolutionError,
    ThreadResolvedError,
    UnknownConceptError,
)


def test_redefining_a_concept_records_a_new_version(app: Mind) -> None:
    assert app.define_concept("project.alpha", "The billing rewrite") == 1

    assert app.define_concept("Project.Alpha", "The billing rewrite, phase 2") == 2

    concept = app.concept("project.alpha")
    assert (concept.definition, concept.definition_version) == ("The billing rewrite, phase 2", 2)


def test_aliases_and_relations_are_recorded_once(app: Mind) -> None:
    app.define_concept("project.alpha", "The billing rewrite")
    app.define_concept("team.billing", "The billing team")

    assert app.alias_concept("project.alpha", "billing rewrite") is True
    assert app.alias_concept("project.alpha", "billing rewrite") is False
    assert app.relate_concepts("project.alpha", "team.billing", "owned-by") is True
    assert app.relate_concepts("project.alpha", "team.billing", "owned-by") is False

    concept = app.concept("project.alpha")
    assert concept.aliases == ["billing rewrite"]
    assert concept.relations == [("team.billing", "owned-by")]


def test_relating_to_an_undefined_concept_is_rejected(app: Mind) -> None:
    app.define_concept("project.alpha", "The billing rewrite")

    with pytest.raises(UnknownConceptError, match=r"team\.ghost"):
        app.relate_concepts("project.alpha", "team.ghost", "owned-by")


@pytest.mark.parametrize("token", ["", "Has Space", "-dash", "a..b", "x" * 101])
def test_malformed_tokens_are_rejected(app: Mind, token: str) -> None:
    with pytest.raises(InvalidInputError, match="not valid"):
        app.define_concept(token, "anything")


def test_a_thread_label_over_120_characters_is_rejected(app: Mind) -> None:
    with pytest.raises(InvalidInputError, match="limit is 120"):
        app.open_thread("x" * 121, "content")


def test_a_thread_content_over_800_characters_is_rejected(app: Mind) -> None:
    with pytest.raises(InvalidInputError, match="limit is 800"):
        app.open_thread("label", "x" * 801)


@pytest.mark.parametrize(
    ("verdict", "details", "message"),
    [
        ("answered", {"reason": "because"}, "needs an artifact"),
        ("superseded", {"artifact": "notes.md"}, "superseding thread"),
        ("dissolved", {}, "needs a reason"),
        ("abandoned", {"artifact": "x"}, "needs a reason"),
        ("forgotten", {"reason": "x"}, "unknown verdict"),
    ],
)
def test_each_verdict_requires_what_it_names(
    app: Mind, verdict: str, details: dict[str, str], message: str
) -> None:
    thread_id = app.open_thread("Why did the import fail?", "It failed on 3 May")

    with pytest.raises(ResolutionError, match=message):
        app.resolve_thread(thread_id, verdict, **details)

    assert app.thread(thread_id).status == "open"


def test_a_resolved_thread_is_a_frozen_tombstone(app: Mind) -> None:
    thread_id = app.open_thread("Why did the import fail?", "It failed on 3 May")
    app.resolve_thread(thread_id, "answered", artifact="postmortem.md")

    with pytest.raises(ThreadResolvedError, match="frozen"):
        app.resolve_thread(thread_id, "dissolved", reason="again")

    thread = app.thread(thread_id)
    assert (thread.status, thread.verdict, thread.artifact) == (
        "resolved",
        "answered",
        "postmortem.md",
    )
