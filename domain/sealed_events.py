"""Every event type that seals a field, registered (in `domain.events.EVENT_TYPES`) by importing
its module here. The adapters that seal, open and forget events look their sealed fields up in
that registry, so they must know every such type whichever commands ran before: an event whose
type is missing would be shown as its envelopes and, worse, its keys left out of a forget.
"""

from __future__ import annotations

from mindledger.domain import (  # noqa: F401  (imported to register their events)
    ask,
    commitment,
    concept,
    conversation,
    foreign_import,
    identity,
    knowledge,
    thread,
    turn,
)
