"""Test-only, for a follower projector process started with this folder first on PYTHONPATH:
each publish waits a little first, so the published read model lags the ledger. The product
has no such setting; tests/service/test_read_your_writes.py uses it."""

from __future__ import annotations

import time

from mindledger.projections.engine.projector import Projector

DELAY_S = 0.25
_publish = Projector.publish


def _slow_publish(self: Projector, target: object) -> None:
    time.sleep(DELAY_S)
    _publish(self, target)  # type: ignore[arg-type]


Projector.publish = _slow_publish  # type: ignore[method-assign]
