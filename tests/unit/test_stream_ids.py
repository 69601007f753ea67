"""A derived stream id is uuid5 of its parts in the mind's namespace: the ids a ledger holds
must not move when `stream_id` is computed another way."""

from __future__ import annotations

from uuid import uuid5

from hypothesis import given
from hypothesis import strategies as st

from mindledger.domain.commitment import episode_id
from mindledger.domain.events import MIND_NAMESPACE, stream_id

PARTS = st.lists(st.text(st.characters(blacklist_categories=("Cs",))), min_size=1, max_size=3)


@given(PARTS)
def test_a_stream_id_is_uuid5_of_its_joined_parts(parts: list[str]) -> None:
    derived = stream_id(*parts)

    assert derived == uuid5(MIND_NAMESPACE, "/".join(parts))
    assert (derived.version, derived.variant) == (5, "specified in RFC 4122")


def test_a_commitment_episode_keeps_the_id_its_ledger_recorded() -> None:
    assert episode_id("c5a25f457f6", 1).hex == "c8b789859224587c83724dda38488a32"
