"""`mind mcp`: the mind as an MCP server over stdio, for agents and MCP clients."""

from __future__ import annotations

import click

from mindledger.compose import Home


@click.command("mcp")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Accepted like every command's; the protocol on stdout is JSON-RPC either way.",
)
@click.pass_obj
def mcp(home: Home, as_json: bool) -> None:
    """Serve this mind to an MCP client over stdin/stdout (until the client closes it).

    Tools: turn (a pmm_turn-shaped result), recall, commitments, threads, concepts, identity,
    query; resources: mind://identity, mind://commitments/open. Stdout carries only the
    protocol; messages go to stderr. Register it with an MCP client as the command `mind mcp
    --home DIR` (README).

    Example:

        mind mcp --home /home/me/.mind
    """
    home.require()
    from mindledger.cli.serve_cmds import hand_over

    hand_over("mcp", {"home": str(home.path)})


def register(group: click.Group) -> None:
    """Add `mcp` to the `mind` group."""
    group.add_command(mcp)
