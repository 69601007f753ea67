"""`mind serve` (the mind as an HTTP service) and `mind server status|stop`."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import click

from mindledger.cli.arguments import GivenPath
from mindledger.cli.output import echo, emit_json
from mindledger.compose import Home

_STALE_NOTE = " (server.json is stale: its process is not this home's server)"


def _homes(ctx_home: Home, given: tuple[Path, ...]) -> list[Home]:
    """The homes to serve, each once (a folder named twice, however spelled, is one home)."""
    if not given:
        return [ctx_home]
    seen: dict[Path, Home] = {}
    for path in given:
        seen.setdefault(path.expanduser().resolve(), Home.from_option(path, "--home"))
    return list(seen.values())


@click.command()
@click.option(
    "--home",
    "homes",
    multiple=True,
    type=GivenPath(file_okay=False, path_type=Path),
    help="A mind's folder to serve (repeat to serve several; default: $MIND_HOME).",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="The TCP address.")
@click.option(
    "--port",
    default=8421,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="The TCP port (0: any free one; the URL is printed).",
)
@click.option(
    "--allow-remote",
    is_flag=True,
    help="Allow a --host other machines can reach (tokens are required either way).",
)
@click.option(
    "--idle-exit",
    "idle_minutes",
    default=0.0,
    type=click.FloatRange(0),
    metavar="MINUTES",
    help="Exit after this long without a request (0: never).",
)
@click.option(
    "--max-body",
    default=1024 * 1024,
    show_default=True,
    type=click.IntRange(1024),
    help="Refuse request bodies larger than this many bytes (413).",
)
@click.option(
    "--cors",
    "origins",
    multiple=True,
    metavar="ORIGIN",
    help="Let web pages from this origin call the server (repeat for several; default: none).",
)
@click.option("--print-token", is_flag=True, help="Print the home's token (made if need be); exit.")
@click.option("--json", "as_json", is_flag=True, help="Print the ready line as JSON.")
@click.pass_obj
def serve(
    home: Home,
    homes: tuple[Path, ...],
    host: str,
    port: int,
    allow_remote: bool,
    idle_minutes: float,
    max_body: int,
    origins: tuple[str, ...],
    print_token: bool,
    as_json: bool,
) -> None:
    """Serve the mind over HTTP (JSON API under /v1, OpenAPI at /openapi.json) on a TCP port
    and on the home's Unix socket (HOME/server.sock, mode 0600), until SIGTERM or Ctrl-C.

    Every request needs the mind's bearer token (HOME/server-token, mode 0600, made on first
    use; `--print-token` prints it). Several minds: repeat --home; each is addressed by its
    name (/v1/minds/NAME/...) and each token opens its own mind only. Listens on 127.0.0.1
    unless --host says otherwise; an address other machines can reach needs --allow-remote.
    Writes HOME/server.json when ready (removed on exit) and logs each request to
    HOME/logs/server.log (rotated; never bodies or tokens). A turn's `api_base` other than the
    home's configured one is called without the home's provider keys. Browsers: no page of
    another site may call the server unless --cors names its origin (scheme://host[:port]).
    Answered without a token: /healthz, /openapi.json, the page (/, /static/...) and its login
    exchange. SIGTERM: running requests and turns get 0.5 s, then a turn still waiting on its
    model is recorded interrupted and the server exits.

    Example:

        mind serve --port 0 --json

        curl -H "Authorization: Bearer $(mind serve --print-token)" http://127.0.0.1:8421/v1/minds

        mind serve --cors http://localhost:5173
    """
    from mindledger.server_files import ensure_token

    targets = _homes(home, homes)
    for target in targets:
        target.require()
    if print_token:
        tokens = {str(t.path): ensure_token(t.path) for t in targets}
        if as_json:
            emit_json({"tokens": tokens})
        elif len(tokens) == 1:
            echo(next(iter(tokens.values())))
        else:
            for path, token in tokens.items():
                echo(f"{path}\t{token}")
        return
    hand_over(
        "serve",
        {
            "homes": [str(t.path) for t in targets],
            "host": host,
            "port": port,
            "idle_s": idle_minutes * 60,
            "allow_remote": allow_remote,
            "max_body": max_body,
            "cors": list(origins),
            "json": as_json,
        },
    )


def hand_over(command: str, spec: dict[str, Any]) -> None:
    """Replace this process by the server's own entry (`python -m mindledger.service COMMAND
    SPEC`): the same pid, streams and signals, and the command line never imports the server."""
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(
        sys.executable, [sys.executable, "-m", "mindledger.service", command, json.dumps(spec)]
    )


@click.group()
def server() -> None:
    """The home's running server (`mind serve`): status and stop.

    Example:

        mind server status --json

        mind server stop
    """


@server.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def status(home: Home, as_json: bool) -> None:
    """Is a server serving this home? Its pid, URL, socket, minds and uptime.

    Example:

        mind server status --json
    """
    from datetime import UTC, datetime

    from mindledger.server_files import server_record, serves_this_home

    data, stale = server_record(home.path)
    if data is not None and not serves_this_home(home.path, data):
        data, stale = None, True  # it names a server that does not serve this home
    if data is None:
        if as_json:
            emit_json(
                {"running": False, "home": str(home.path)} | ({"stale_file": True} if stale else {})
            )
        else:
            echo(f"no server is serving {home.path}{_STALE_NOTE if stale else ''}")
        return
    started = datetime.fromisoformat(data["started"])
    uptime = (datetime.now(UTC) - started).total_seconds()
    shown = {"running": True, "home": str(home.path), **data, "uptime_s": round(uptime)}
    if as_json:
        emit_json(shown)
        return
    echo(f"serving {', '.join(data.get('minds', []))} at {data.get('url')} (pid {data['pid']})")
    echo(f"  socket  {data.get('socket') or '-'}")
    echo(f"  uptime  {round(uptime)} s; idle exit {data.get('idle_exit_s') or 'never'}")


@server.command()
@click.option(
    "--timeout",
    default=90.0,
    show_default=True,
    type=click.FloatRange(0.1),
    help="Seconds to wait for it to exit.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def stop(home: Home, timeout: float, as_json: bool) -> None:
    """Stop the server serving this home (SIGTERM: it finishes running turns, then exits).

    Example:

        mind server stop
    """
    from mindledger import stop_server

    done = stop_server(home, timeout)
    if as_json:
        emit_json(done.model_dump(mode="json"))
    elif done.stopped:
        echo(f"stopped the server (pid {done.pid})")
    else:
        removed = " (removed a stale server.json: its process is not this home's server)"
        echo(f"no server is serving {home.path}{removed if done.stale_file_removed else ''}")


def register(group: click.Group) -> None:
    """Add these commands to the `mind` group."""
    group.add_command(serve)
    group.add_command(server)
