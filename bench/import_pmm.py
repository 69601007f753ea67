"""Import rate of the four real PMM ledgers, next to the raw rate of reading and hashing them.

For each file, in the same run: the raw rate (read the file, parse the JSON, recompute every
PMM hash: what any importer must do at least), then `import_pmm` into a fresh SQLite mind
(verify, map, append in batches through `Mind`), then the catch-up of the read model.

Run: .venv/bin/python -m bench.import_pmm [--data ../shared/data/pmm] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

from bench.common import new_mind, report, timed
from mindledger.adapters.pmm_import import import_pmm, parse_pmm, pmm_hash
from mindledger.compose import Home, open_reader
from mindledger.projections.engine.projector import Projector

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data" / "pmm"


def raw_rate(path: Path) -> tuple[int, float]:
    """Events and seconds to read, parse and re-hash a file (no mapping, no writes)."""

    def read_and_hash() -> int:
        items = json.loads(path.read_bytes())
        for e in items:
            meta = json.loads(e["meta"]) if isinstance(e["meta"], str) else e["meta"]
            pmm_hash(e["kind"], e["content"], meta, e["prev_hash"])
        return len(items)

    seconds, events = timed(read_and_hash)
    return events, seconds


def import_rate(path: Path, folder: Path) -> tuple[int, float, float, int]:
    """Events, seconds to import, seconds to project, and ledger events written."""
    app = new_mind(folder)
    before = app.recorder.max_notification_id() or 0
    seconds, done = timed(lambda: import_pmm(app, path))
    written = (app.recorder.max_notification_id() or 0) - before
    home = Home(folder)
    projector = Projector(home.readmodel)
    projecting, _ = timed(lambda: projector.catch_up(open_reader(home)))
    projector.close()
    return int(done["events"]), seconds, projecting, written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--repeat", type=int, default=3, help="Runs per file (median kept).")
    args = parser.parse_args()
    for path in sorted(args.data.glob("*.json")):
        raw, imported, projected = [], [], []
        events = written = 0
        for _ in range(args.repeat):
            events, seconds = raw_rate(path)
            raw.append(seconds)
            with tempfile.TemporaryDirectory() as folder:
                events, seconds, projecting, written = import_rate(path, Path(folder))
            imported.append(seconds)
            projected.append(projecting)
        parse_pmm(path.read_bytes(), path.name)  # the file is a PMM export (raises otherwise)
        raw_s, import_s = statistics.median(raw), statistics.median(imported)
        report(
            "import_pmm",
            {
                "file": path.name,
                "bytes": path.stat().st_size,
                "pmm_events": events,
                "ledger_events_written": written,
                "raw_read_and_hash_events_per_s": round(events / raw_s),
                "import_events_per_s": round(events / import_s),
                "import_over_raw": round(raw_s / import_s, 3),
                "projection_events_per_s": round(written / statistics.median(projected)),
            },
        )


if __name__ == "__main__":
    main()
