"""The floor (`mindledger.MindLedger`) for the command's home, opened once per command and
closed when the command ends."""

from __future__ import annotations

from mindledger.application import MindLedger
from mindledger.compose import Home, command_scope


def opened(home: Home) -> MindLedger:
    """The mind at the command's home, as the floor gives it; closed with the command."""
    mind = MindLedger(home)
    scope = command_scope.get()
    if scope is not None:
        scope.callback(mind.close)
    return mind
