"""Provider variables (OPENAI_API_KEY, OPENAI_API_BASE, ...): LiteLLM reads them from the
environment, and MIND_HOME/.env may supply them. Where each came from matters: a base URL
from a home file would receive a key from the user's own environment (issue 12, security 3).
"""

from __future__ import annotations

import os
import re
from typing import NamedTuple

from mindledger.settings import mask_url
from mindledger.settings_sources import LoadedSettings

# The names LiteLLM's providers read keys and endpoints from (OPENAI_API_KEY, AZURE_API_BASE,
# OLLAMA_API_BASE, AWS_SECRET_ACCESS_KEY, HF_TOKEN, ...).
KEY = re.compile(r"(_API_KEY|_API_TOKEN|_SECRET_ACCESS_KEY)$|^HF_TOKEN$")
BASE = re.compile(r"(_API_BASE|_BASE_URL|_API_URL|_ENDPOINT)$")
# A proxy or a certificate bundle set by a home file redirects (or opens) the same requests.
ROUTE = re.compile(
    r"^(HTTPS?_PROXY|ALL_PROXY|REQUESTS_CA_BUNDLE|SSL_CERT_FILE|SSL_CERT_DIR)$", re.IGNORECASE
)
# Names this process put into os.environ from a .env; they did not come from the user's shell.
_EXPORTED: set[str] = set()


class ProviderVariable(NamedTuple):
    """One key or base URL a provider may read, with where it came from."""

    name: str
    kind: str  # key, base_url, or route (a proxy or certificate bundle)
    value: str  # masked for keys
    source: str  # environment, .env or config.json
    where: str  # the file, or "your environment"


def export_dotenv(loaded: LoadedSettings) -> None:
    """Put the .env's non-MIND lines into the environment for LiteLLM (existing values win).

    Keys stay in the process: nothing of them goes into events or logs."""
    for name, value in loaded.dotenv.items():
        if name.upper().startswith("MIND_") or name in os.environ:
            continue
        os.environ[name] = value
        _EXPORTED.add(name)


def provider_variables(loaded: LoadedSettings) -> list[ProviderVariable]:
    """Every key, base URL, proxy and certificate bundle in the environment or the home's .env
    (the model's own base URL, MIND_API_BASE, is a setting: `model_details` lists it once)."""
    found: list[ProviderVariable] = []
    names = {n for n in (*os.environ, *loaded.dotenv) if not n.upper().startswith("MIND_")}
    for name in sorted(names):
        kind = "key" if KEY.search(name) else "base_url" if BASE.search(name) else None
        kind = "route" if kind is None and ROUTE.search(name) else kind
        from_shell = name in os.environ and name not in _EXPORTED
        if kind is None or not (from_shell or name in loaded.dotenv):
            continue
        value = os.environ[name] if from_shell else loaded.dotenv[name]
        shown = "****" if kind == "key" else mask_url(value)
        if from_shell:
            found.append(ProviderVariable(name, kind, shown, "environment", "your environment"))
        else:
            found.append(ProviderVariable(name, kind, shown, ".env", str(loaded.dotenv_path)))
    return found


def _model_base_from_file(loaded: LoadedSettings) -> list[ProviderVariable]:
    """The model base URL setting, when a home file (.env, config.json) set it."""
    origin = loaded.origins["api_base"]
    if not loaded.values.api_base or origin.path is None:
        return []
    shown = mask_url(loaded.values.api_base)
    return [ProviderVariable(origin.name, "base_url", shown, origin.source, str(origin.path))]


def redirect_warnings(loaded: LoadedSettings) -> list[str]:
    """One warning per base URL a home file set while a key comes from the user's environment:
    the file can send that key anywhere."""
    variables = provider_variables(loaded) + _model_base_from_file(loaded)
    keys = [v.name for v in variables if v.kind == "key" and v.source == "environment"]
    if not keys:
        return []
    return [
        f"{v.name}={v.value} comes from {v.where} while {', '.join(keys)} comes from your "
        f"environment: the model call may send the key there; remove {v.name} from that file "
        "unless you put it there"
        for v in variables
        if v.kind in ("base_url", "route") and v.source != "environment"
    ]
