"""The web page served at `/` by `mind serve` (routes, reads and static assets)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mindledger.compose import Home
    from mindledger.service.app import Extension
    from mindledger.service.minds import Minds


class ServedTokens:
    """The server's own token check: a mind's token opens that mind only."""

    def __init__(self, minds: Minds) -> None:
        self.minds = minds

    def home_for(self, name: str, token: str) -> Home | None:
        """The home of mind `name` when `token` opens it, else None."""
        return next((m.home for m in self.minds.for_token(token) if m.name == name), None)


def extension(minds: Minds) -> Extension:
    """What `build_app` adds for the page: its routes (they check tokens themselves)."""
    from mindledger.service.app import Extension
    from mindledger.service.web.app import web_routes

    return Extension(mounts=web_routes(ServedTokens(minds)))
