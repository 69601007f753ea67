"""A writer process for concurrency and crash tests: opens commitments and acknowledges each."""

from __future__ import annotations

import sys
from pathlib import Path

from mindledger.compose import Home, open_mind


def main() -> None:
    home, tag, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    app = open_mind(Home(home))
    for i in range(count):
        outcome = app.open_commitment(f"{tag} promise {i}")
        # Printed only after the save returned: an acknowledged command must survive a crash.
        print(outcome.cid, flush=True)


if __name__ == "__main__":
    main()
