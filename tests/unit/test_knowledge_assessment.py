"""The knowledge assessment: every row of the issue's table, in its order, with its reason names."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from mindledger.domain.knowledge_assessment import assess

NOW = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Facts:
    """An item's facts as the assessment reads them."""

    state: str = "verified"
    confidence_ppm: int = 950_000
    freshness: str = "stable"
    max_age_days: int | None = 30
    reuse: str = "reuse-unless-stale"
    validated_at: datetime | None = NOW - timedelta(days=1)
    deleted: bool = False


OLD = NOW - timedelta(days=31)

TABLE = [
    ("fresh verified item", Facts(), False, "reuse", []),
    ("current data required", Facts(), True, "revalidate", ["current-data-requested"]),
    ("stale", Facts(validated_at=OLD), False, "revalidate", ["stale"]),
    ("disputed", Facts(state="disputed"), False, "reject", ["disputed"]),
    ("retracted", Facts(state="retracted", confidence_ppm=0), False, "reject", ["retracted"]),
    ("never-direct", Facts(reuse="never-direct"), False, "reject", ["never-direct"]),
    (
        "unverified at 990,000 ppm",
        Facts(state="unverified", confidence_ppm=990_000),
        False,
        "revalidate",
        ["validation-insufficient"],
    ),
    (
        "supported at 700,000 ppm",
        Facts(state="supported", confidence_ppm=700_000),
        False,
        "revalidate",
        ["confidence-below-threshold"],
    ),
    (
        "immutable verified, current required",
        Facts(freshness="immutable", max_age_days=None, validated_at=OLD),
        True,
        "reuse",
        [],
    ),
    (
        "immutable but only supported, current required",
        Facts(state="supported", freshness="immutable", max_age_days=None),
        True,
        "revalidate",
        ["current-data-requested"],
    ),
    ("stale with policy always", Facts(reuse="always", validated_at=OLD), False, "reuse", []),
    (
        "every reason, in order",
        Facts(state="plausible", confidence_ppm=500_000, validated_at=OLD),
        True,
        "revalidate",
        [
            "validation-insufficient",
            "confidence-below-threshold",
            "stale",
            "current-data-requested",
        ],
    ),
    (
        "disputed comes before never-direct",
        Facts(state="disputed", reuse="never-direct"),
        False,
        "reject",
        ["disputed"],
    ),
    (
        "volatile after two days",
        Facts(freshness="volatile", max_age_days=1, validated_at=NOW - timedelta(days=2)),
        False,
        "revalidate",
        ["stale"],
    ),
    ("deleted", Facts(deleted=True), False, "miss", []),
]


@pytest.mark.parametrize(
    ("case", "facts", "current", "decision", "reasons"), TABLE, ids=[row[0] for row in TABLE]
)
def test_the_assessment_table(
    case: str, facts: Facts, current: bool, decision: str, reasons: list[str]
) -> None:
    result = assess(facts, NOW, current)

    assert (result.decision, result.reasons) == (decision, reasons)


def test_an_unknown_question_is_a_miss() -> None:
    assert assess(None, NOW).decision == "miss"


def test_the_minimum_confidence_is_750000_ppm_by_default() -> None:
    at_minimum = Facts(confidence_ppm=750_000)
    below = Facts(confidence_ppm=749_999)

    assert assess(at_minimum, NOW).decision == "reuse"
    assert assess(below, NOW).reasons == ["confidence-below-threshold"]
