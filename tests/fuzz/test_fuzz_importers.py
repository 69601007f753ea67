"""Arbitrary bytes, JSON and near-valid transcripts given to `mind import chat` and `locomo`."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz.harness import fuzz_step, json_values, texts

FUZZ = settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
lines_of_chat = st.lists(
    st.one_of(
        st.fixed_dictionaries(
            {
                "role": st.one_of(st.sampled_from(["user", "assistant", "system"]), texts),
                "content": st.one_of(texts, json_values),
            },
            optional={"time": st.one_of(texts, json_values)},
        ),
        json_values,
    ).map(json.dumps),
    max_size=5,
).map("\n".join)
locomo_files = st.lists(
    st.fixed_dictionaries(
        {
            "sample_id": texts,
            "conversation": st.fixed_dictionaries(
                {
                    "speaker_a": texts,
                    "speaker_b": texts,
                    "session_1_date_time": st.one_of(st.just("1:56 pm on 8 May, 2023"), texts),
                    "session_1": st.lists(
                        st.fixed_dictionaries(
                            {"speaker": texts, "text": texts, "dia_id": texts},
                            optional={"blip_caption": texts},
                        ),
                        max_size=3,
                    ),
                }
            ),
        },
    ),
    max_size=2,
).map(json.dumps)


@FUZZ
@given(
    kind=st.sampled_from(["chat", "locomo"]),
    content=st.one_of(
        st.binary(max_size=120),
        json_values.map(lambda v: json.dumps(v).encode()),
        lines_of_chat.map(str.encode),
        locomo_files.map(str.encode),
    ),
)
def test_any_import_file_ends_in_success_or_one_line(
    kind: str, content: bytes, mind_home: Path, tmp_path: Path
) -> None:
    source = tmp_path / "history.jsonl"
    source.write_bytes(content)
    args = ["import", kind, str(source)]

    fuzz_step(mind_home, args)
