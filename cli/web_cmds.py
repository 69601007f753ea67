"""`mind open`: the web page of the server that serves this mind, logged in by a one-time link."""

from __future__ import annotations

import json
import os
from typing import Any

import click

from mindledger.cli.output import echo, emit_json
from mindledger.compose import Home
from mindledger.domain.errors import MindError


class NoServerError(MindError):
    """Raised when no running `mind serve` serves this home (or it cannot be reached)."""


def running_server(home: Home) -> dict[str, Any]:
    """The server this home's `server.json` names, when its process is alive."""
    path = home.path / "server.json"
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
        pid, url = int(info["pid"]), str(info["url"])
    except FileNotFoundError:
        info = None
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as e:
        raise NoServerError(f"{path} cannot be read ({e}); restart `mind serve`") from None
    if info is None or not url:
        raise NoServerError(f"no server serves {home.path}; start one with `mind serve`")
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        raise NoServerError(
            f"the server that served {home.path} (pid {pid}) is gone; start `mind serve`"
        ) from None
    except PermissionError:
        pass  # alive, under another user
    from mindledger.server_files import is_server_process

    if not is_server_process(info, alive=lambda _: True):  # a reused pid: the token stays here
        raise NoServerError(
            f"{path} is stale (pid {pid} is not the server that wrote it); start `mind serve`"
        )
    return {**info, "url": url.rstrip("/")}


def _call(url: str, token: str, method: str = "GET") -> Any:
    import urllib.error
    import urllib.request

    # Straight to the loopback server: an http_proxy in the environment must not see the token.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    request = urllib.request.Request(
        url,
        method=method,
        headers={"Authorization": f"Bearer {token}"},
        data=b"" if method == "POST" else None,
    )
    try:
        with opener.open(request, timeout=10) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as e:
        raise NoServerError(f"the server at {url} refused: HTTP {e.code}") from None
    except (urllib.error.URLError, OSError, ValueError) as e:
        raise NoServerError(f"cannot reach the server at {url} ({e}); is it running?") from None


def login_url(home: Home) -> str:
    """A one-time login link to the page of this home's mind (valid once, for two minutes)."""
    import urllib.parse

    from mindledger.server_files import read_token

    server = running_server(home)
    token = read_token(home.path)
    minds = _call(f"{server['url']}/v1/minds", token)
    listed = minds.get("minds", []) if isinstance(minds, dict) else minds
    if not listed:
        raise NoServerError(f"the server at {server['url']} does not serve this mind")
    first = listed[0]
    name = first if isinstance(first, str) else first["name"]
    quoted = urllib.parse.quote(name, safe="")
    link = _call(f"{server['url']}/ui/api/minds/{quoted}/login-link", token, "POST")
    return f"{server['url']}{link['path']}"


@click.command(name="open")
@click.option("--print-url", is_flag=True, help="Print the link instead of opening a browser.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON ({url}); opens no browser.")
@click.pass_obj
def open_page(home: Home, print_url: bool, as_json: bool) -> None:
    """Open the mind's web page in a browser, logged in by a one-time link.

    Needs a running `mind serve` for this home. The link works once, within two minutes; the
    page then keeps the session for that browser tab only.

    Example:

        mind open

        mind open --print-url
    """
    home.require()
    url = login_url(home)
    if as_json:
        emit_json({"url": url})
        return
    if print_url:
        echo(url)
        return
    import webbrowser

    if not webbrowser.open(url):
        echo(f"No browser could be started; open this link (valid once): {url}")


def register(group: click.Group) -> None:
    """Add this command to the `mind` group."""
    group.add_command(open_page)
