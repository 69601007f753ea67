"""A vector thread whose pass fails says so in one warning line, capped as every warning that
quotes a cause is (`domain.errors.cause_line`): a dependency's error may be pages long or hold
a traceback. The whole of it goes to the home's errors log under the id the warning names."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import mindledger
from mindledger import notices, vector_projection
from mindledger.compose import Home
from mindledger.domain.errors import CAUSE_CHARS
from mindledger.vector_projection import VectorFollower

# A provider's error as some arrive: a long first line, then its own traceback.
LONG = "the embedding server said: " + "overloaded " * 400
TRACE = 'Traceback (most recent call last):\n  File "/srv/x.py", line 3, in <module>'


def test_a_failed_vector_pass_is_one_capped_warning_naming_its_logged_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "mind"
    mindledger.init(home, "Echo")
    follower = VectorFollower(Home(home), poll_s=0)
    heard: list[str] = []

    def failing(*args: Any, **kwargs: Any) -> dict[str, Any]:
        follower.stopping.set()  # one pass: the loop ends after it
        raise RuntimeError(f"{LONG}\n{TRACE}")

    monkeypatch.setattr(vector_projection, "catch_up", failing)
    token = notices.notice_sink.set(heard.append)
    try:
        follower._run()
    finally:
        notices.notice_sink.reset(token)

    [line] = heard
    assert line.startswith("Warning: the vector projection failed (RuntimeError: the embedding")
    assert "\n" not in line and "Traceback" not in line and len(line) < CAUSE_CHARS + 150
    error_id = line.split("; error ")[1].split(" ")[0]
    assert line.endswith(
        f"...; error {error_id} in logs/errors.log); recall runs on what is embedded"
    )
    logged = (home / "logs" / "errors.log").read_text()
    assert f"error {error_id}" in logged and LONG.strip() in logged and "/srv/x.py" in logged
