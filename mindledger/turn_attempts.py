"""A client's retries never record a second turn.

A client that did not hear an answer sends the same request again: with the same
`Idempotency-Key`, or (the OpenAI SDKs, which send no key) marked as a retry with the same body.
The floor remembers, per mind and caller, the outcome of each keyed request and of the caller's
last request: a repeat of one that completed is answered from that record (nothing new is
written); a repeat of one whose model failed is another attempt of the same turn (`Turn.Retried`
on its stream, then the attempt's outcome), never a new turn. The memory is this process's,
bounded (`KEYS_KEPT` keys per mind, oldest dropped): clients retry within seconds.

`failure_class` tells a front-end whether a failed turn is worth retrying: `transient` (the
model server was unreachable, slow, rate limiting or failing: the same request may succeed
later), `refused` (the provider refused this request or key: retrying cannot help) or `failed`
(the model answered badly).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, NamedTuple
from uuid import UUID

from mindledger.domain.errors import InvalidInputError

if TYPE_CHECKING:
    from mindledger.application import TurnDone
    from mindledger.domain.model_port import CompletionModel
    from mindledger.domain.turns import TurnOutcome, TurnService

KEYS_KEPT = 1000  # keyed requests remembered per mind (the oldest is forgotten first)
KEY_LIMIT = 255  # the longest idempotency key taken (Stripe's and the IETF draft's practice)
TRANSIENT = frozenset({"connection", "timeout", "rate_limit", "server"})
REFUSED = frozenset({"auth", "bad_request", "context_too_long", "not_installed"})
FailureClass = Literal["transient", "refused", "failed"]


class IdempotencyKeyReusedError(InvalidInputError):
    """Raised when an idempotency key comes again with a different request."""


def failure_class(kind: str) -> FailureClass:
    """Whether a model failure of this kind may pass if the same request is sent again."""
    if kind in TRANSIENT:
        return "transient"
    return "refused" if kind in REFUSED else "failed"


class TurnRequest(NamedTuple):
    """How a client sent a turn: `caller`, who (a server's bearer token; kept only hashed);
    `body`, the request as sent (its fingerprint is compared); `key`, the client's idempotency
    key; `retry`, whether the client marked it as a retry of its previous request."""

    caller: str
    body: Mapping[str, Any]
    key: str | None = None
    retry: bool = False


class AttemptDone(NamedTuple):
    """A request's answer: the turn (`done`), and whether it is the record of an earlier
    attempt, answered again without running anything (`replayed`)."""

    done: TurnDone
    replayed: bool


@dataclass
class _Outcome:
    body: str  # the request's fingerprint
    done: TurnDone


def fingerprint(body: Mapping[str, Any]) -> str:
    """The request's identity: the same JSON, whatever its key order or spacing."""
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _caller(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


class RequestMemory:
    """What one mind remembers of its recent requests (thread-safe; callers hold the mind's
    write lock across a lookup and its turn, so a retry waits for the attempt it repeats)."""

    def __init__(self, limit: int = KEYS_KEPT) -> None:
        self._lock = threading.Lock()
        self._keyed: OrderedDict[tuple[str, str], _Outcome] = OrderedDict()
        self._last: OrderedDict[str, _Outcome] = OrderedDict()
        self.limit = limit

    def earlier(self, request: TurnRequest) -> TurnDone | None:
        """The outcome this request repeats, if it repeats one; a key reused for another
        request is refused."""
        body, caller = fingerprint(request.body), _caller(request.caller)
        with self._lock:
            if request.key is not None:
                found = self._keyed.get((caller, request.key))
                if found is not None and found.body != body:
                    raise IdempotencyKeyReusedError(
                        f"Idempotency-Key {request.key!r} was sent before with a different "
                        "request; send a new key with a new request",
                        param="Idempotency-Key",
                    )
                return found.done if found is not None else None
            last = self._last.get(caller)
            if request.retry and last is not None and last.body == body:
                return last.done
            return None

    def keep(self, request: TurnRequest, done: TurnDone) -> None:
        """Remember a request's outcome (its key's, and as the caller's last)."""
        outcome = _Outcome(fingerprint(request.body), done)
        caller = _caller(request.caller)
        with self._lock:
            self._last[caller] = outcome
            self._last.move_to_end(caller)
            if request.key is not None:
                self._keyed[(caller, request.key)] = outcome
                self._keyed.move_to_end((caller, request.key))
            for kept in (self._keyed, self._last):
                while len(kept) > self.limit:
                    kept.popitem(last=False)

    def clear(self) -> None:
        """Forget everything (a forget may have removed what an outcome quotes)."""
        with self._lock:
            self._keyed.clear()
            self._last.clear()


def checked_key(key: str | None) -> str | None:
    """An idempotency key as a client may send one: 1 to 255 printable ASCII characters."""
    if key is None:
        return None
    if not 0 < len(key) <= KEY_LIMIT or not all(0x20 < ord(c) < 0x7F for c in key):
        raise InvalidInputError(
            f"Idempotency-Key must be 1 to {KEY_LIMIT} printable ASCII characters",
            param="Idempotency-Key",
        )
    return key


class Reattempt(NamedTuple):
    """A failed turn's next attempt, asked for as `Asker.turn` asks for a turn (straight to the
    model: a failed turn went to it, so no stored answer could have answered it)."""

    service: TurnService
    turn_id: UUID

    def turn(self, text: str, model: Callable[[], CompletionModel], **settings: Any) -> TurnOutcome:
        """The attempt (`settings` as `TurnService.run` takes them)."""
        return self.service.run(text, model(), retry_of=self.turn_id, **settings)


def attempt_turn(
    memory: RequestMemory,
    request: TurnRequest,
    run: Callable[[UUID | None], TurnDone],
) -> AttemptDone:
    """Run a turn's request once: a repeat of a completed request is its earlier answer; a
    repeat of a failed one runs `run(turn_id)`, another attempt of that turn; anything else
    runs `run(None)`, a new turn. The caller holds the mind's write lock."""
    checked_key(request.key)
    earlier = memory.earlier(request)
    if earlier is not None and earlier.outcome.status != "failed":
        return AttemptDone(earlier, replayed=True)
    again = earlier.outcome.turn_id if earlier is not None else None
    done = run(again)
    memory.keep(request, done)
    return AttemptDone(done, replayed=False)
