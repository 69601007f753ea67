"""Arbitrary bytes, JSON and near-valid exports given to `mind import pmm` and `chatgpt`: a clean
import or one `Error:` line, never a traceback, never a changed ledger on refusal."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.foreign_files import chatgpt_conversation, chatgpt_node, pmm_ledger
from tests.fuzz.harness import fuzz_step, json_values, texts

FUZZ = settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
PMM_KINDS = st.one_of(
    st.sampled_from(
        [
            "user_message",
            "assistant_message",
            "commitment_open",
            "commitment_close",
            "concept_define",
            "concept_alias",
            "concept_relate",
            "concept_bind_event",
            "identity_adoption",
            "claim",
        ]
    ),
    texts,
)
contents = st.one_of(texts, json_values.map(json.dumps))
metas = st.dictionaries(
    st.sampled_from(["cid", "origin", "text", "reason", "name", "role"]),
    st.one_of(texts, json_values),
    max_size=3,
)
pmm_chains = st.lists(st.tuples(PMM_KINDS, contents, metas), min_size=1, max_size=5).map(
    lambda events: json.dumps(pmm_ledger(events)).encode()
)


def _tampered(ledger: list[dict[str, Any]], field: str, value: Any) -> bytes:
    ledger[0][field] = value
    return json.dumps(ledger).encode()


tampered_pmm = st.builds(
    _tampered,
    st.lists(st.tuples(PMM_KINDS, contents, metas), min_size=1, max_size=3).map(pmm_ledger),
    st.sampled_from(["id", "ts", "kind", "content", "meta", "prev_hash", "hash"]),
    json_values,
)
nodes = st.lists(
    st.builds(
        chatgpt_node,
        st.sampled_from(["a", "b", "c"]),
        st.one_of(st.none(), st.sampled_from(["a", "b", "c"])),
        st.just([]),
        st.one_of(st.none(), st.sampled_from(["user", "assistant", "system", "tool"]), texts),
        st.lists(st.one_of(texts, json_values), max_size=2),
        st.one_of(st.none(), st.floats(allow_nan=True), st.integers()),
    ),
    max_size=4,
)
chatgpt_files = st.lists(
    st.builds(chatgpt_conversation, texts, nodes, st.sampled_from(["a", "b", "c"])),
    max_size=2,
).map(lambda c: json.dumps(c).encode())


def zipped(data: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("conversations.json", data)
    return buffer.getvalue()


@FUZZ
@given(
    kind=st.sampled_from(["pmm", "chatgpt"]),
    content=st.one_of(
        st.binary(max_size=120),
        json_values.map(lambda v: json.dumps(v).encode()),
        pmm_chains,
        tampered_pmm,
        chatgpt_files,
        chatgpt_files.map(zipped),
        st.binary(max_size=60).map(lambda b: b"PK\x03\x04" + b),
    ),
)
def test_any_foreign_file_ends_in_success_or_one_line(
    kind: str, content: bytes, mind_home: Path, tmp_path: Path
) -> None:
    source = tmp_path / "export.json"
    source.write_bytes(content)

    fuzz_step(mind_home, ["import", kind, str(source)])


@FUZZ
@given(
    st.integers(min_value=3, max_value=12).flatmap(
        lambda n: st.tuples(st.just(n), st.lists(st.integers(0, n - 1), min_size=1, max_size=3))
    ),
    st.sampled_from(["delete", "swap", "cut"]),
)
def test_any_deleted_swapped_or_cut_event_is_found_by_the_chain_check(
    plan: tuple[int, list[int]], how: str
) -> None:
    from mindledger.adapters.pmm_import import parse_pmm, verify_chain

    n, places = plan
    ledger = pmm_ledger([("user_message", f"message {i}", {}) for i in range(n)])
    first = places[0]
    if how == "delete":
        changed = [e for i, e in enumerate(ledger) if i not in places]
    elif how == "swap":
        other = (first + 1 + places[-1] % (n - 1)) % n
        changed = list(ledger)
        changed[first], changed[other] = changed[other], changed[first]
    else:
        changed = ledger[max(first, 1) :]
    assume(changed)  # every event deleted: refused as "no events" elsewhere

    report = verify_chain(parse_pmm(json.dumps(changed).encode(), "f"))

    # Deleting only the last events leaves a valid (shorter) chain: nothing to find.
    untouched = how == "delete" and changed == ledger[: len(changed)]
    assert bool(report.link_breaks) != untouched
    assert report.breaks == ()
