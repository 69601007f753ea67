"""A turn process for concurrency tests: runs turns with scripted replies, one JSON line each.

Its first turn proposes the name TAG; every later turn tries to ratify the name OTHER."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mindledger.adapters.scripted_model import ScriptedModel
from mindledger.compose import Home, turn_service


def reply(i: int, tag: str, other: str) -> str:
    if i == 0:
        return f'Hello.\nCLAIM:identity_proposal={{"name": "{tag}"}}'
    return f'Hello again.\nCLAIM:identity_ratify={{"name": "{other}"}}'


def main() -> None:
    home, tag, other, count = Path(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
    for i in range(count):
        model = ScriptedModel(reply(i, tag, other))  # no LiteLLM import: seconds per process
        with turn_service(Home(home)) as service:
            outcome = service.run(f"{tag} message {i}", model)
        print(json.dumps({"seq": outcome.seq, "identity": outcome.identity}), flush=True)


if __name__ == "__main__":
    main()
