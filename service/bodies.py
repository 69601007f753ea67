"""The /v1 routes' request bodies as pydantic models: each route checks its body with its model
(`service.body_check`) and the OpenAPI document publishes the model's JSON schema, so what a
client is shown is what the server enforces. Every model refuses fields it does not define
(`additionalProperties: false`) and takes JSON types strictly (`true` is not a number, `"1"` is
not an integer). What only the floor can know (an unknown id, a verdict without its reason)
the floor checks."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from mindledger.domain.budgets import DEFAULT_BUDGET, MAX_BUDGET, TURN_BUDGET_FLOOR
from mindledger.domain.choices import FRESHNESS, POLICIES, STATES, VERDICTS
from mindledger.service.sampling_fields import SAMPLING_HELP, SYSTEM_HELP, Sampling

SELECTORS = ("turn", "conversation", "speaker", "commitment", "concept", "thread", "knowledge")


class Body(BaseModel):
    """A request body: unknown fields refused, JSON types taken strictly, no NaN or infinity."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, frozen=True)


class NoBody(Body):
    """A route that takes no body: nothing, or an empty JSON object."""


class TurnOptions(Body):
    """What a turn and an ask share: the model, its test double, its server, memory's budget."""

    model: str | None = Field(None, description="A model spec; default: the mind's model.")
    mock_reply: str | None = Field(None, description="With model `mock`: the scripted reply.")
    api_base: str | None = Field(
        None,
        description="An OpenAI-compatible server's base URL (unless it is the home's configured "
        "one, it gets no stored provider key).",
    )
    budget: int | None = Field(
        None,
        ge=TURN_BUDGET_FLOOR,
        le=MAX_BUDGET,
        description=f"Token budget for memory (default {DEFAULT_BUDGET}).",
    )


class TurnBody(TurnOptions):
    """`POST /v1/minds/{name}/turns`."""

    text: str = Field(description="What the user says (an empty text runs an autonomy cycle).")
    stream: bool | None = Field(
        None, description="Answer as server-sent events (delta, turn, error)."
    )
    system: str | None = Field(None, description=SYSTEM_HELP)
    sampling: Sampling | None = Field(None, description=SAMPLING_HELP)


class AskBody(TurnOptions):
    """`POST /v1/minds/{name}/ask`."""

    question: str = Field(description="The question.")
    current: bool | None = Field(None, description="Current data wanted: revalidate.")


class QueryBody(Body):
    """`POST /v1/minds/{name}/query`."""

    sql: str = Field(description="One read-only SQL statement.")
    params: dict[str, str] | None = Field(None, description="Named parameters ($NAME): strings.")


class RememberBody(Body):
    """`POST /v1/minds/{name}/knowledge`."""

    text: str = Field(description="The answer to keep.")
    question: str | None = Field(None, description="The question it answers (TEXT).")
    about: list[str] | None = Field(None, description="Concept names.")
    state: Literal[STATES] | None = Field(None, description="Its validation state.")  # type: ignore[valid-type]
    confidence: float | None = Field(None, ge=0, le=1, description="0 to 1 (default 0.5).")
    freshness: Literal[FRESHNESS] | None = Field(None, description="How soon it goes stale.")  # type: ignore[valid-type]
    reuse: Literal[POLICIES] | None = Field(None, description="When it may be reused.")  # type: ignore[valid-type]


class NoteBody(Body):
    """An owner's decision on a knowledge item (verify, dispute, retract, delete)."""

    note: str | None = Field(None, description="Why (kept with the decision).")


class EditBody(Body):
    """`POST /v1/minds/{name}/knowledge/{ref}/edit`."""

    answer: str = Field(description="The new answer.")


class ForgetBody(Body):
    """`POST /v1/minds/{name}/forget`."""

    selector: Literal[(*SELECTORS, "before")] = Field(  # type: ignore[valid-type]
        description="What `value` names (before: everything recorded before a time)."
    )
    value: str = Field(description="The id, name, CID, token or ISO-8601 time.")
    dry_run: bool | None = Field(None, description="Count what would go; change nothing.")


class CloseBody(Body):
    """`POST /v1/minds/{name}/commitments/{cid}/close`."""

    reason: str | None = Field(None, description="Why it is closed (done, dropped...).")


class ResolveBody(Body):
    """`POST /v1/minds/{name}/threads/{thread}/resolve`."""

    verdict: Literal[VERDICTS] = Field(description="How the thread ended.")  # type: ignore[valid-type]
    reason: str | None = Field(None, description="Required for dissolved and abandoned.")
    artifact: str | None = Field(None, description="Required for answered and superseded.")
    by: str | None = Field(None, description="The superseding thread id (superseded).")


class DefineBody(Body):
    """`POST /v1/minds/{name}/concepts/{token}/define`."""

    definition: str = Field(description="What the token means.")


class AliasBody(Body):
    """`POST /v1/minds/{name}/concepts/{token}/aliases`."""

    alias: str = Field(description="Another name for the concept.")
