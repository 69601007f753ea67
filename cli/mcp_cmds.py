"""`mind mcp`: the mind as an MCP server over stdio, for agents and MCP clients."""

from __future__ import annotations

import click

from cli.compose import Home


@click.command("mcp")
@click.pass_obj
def mcp(home: Home) -> None:
    """Serve this mind to an MCP client over stdin/stdout (until the client closes it).

    Tools: turn (a pmm_turn-shaped result), recall, commitments, threads, query; resources:
    mind://identity, mind://commitments/open. Stdout carries only the protocol; messages go
    to stderr. Register it with an MCP client as the command `mind mcp --home DIR` (README).
    """
    home.require()
    from service.mcp_server import serve_stdio

    serve_stdio(home)


def register(group: click.Group) -> None:
    """Add `mcp` to the `mind` group."""
    group.add_command(mcp)
