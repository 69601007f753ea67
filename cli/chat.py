"""`mind chat`: an interactive REPL over turns, with slash commands and streamed replies."""

from __future__ import annotations

import contextlib
import io
import json
import sys
from typing import TYPE_CHECKING, Any

import click

from mindledger.cli.floor import opened
from mindledger.cli.options import NO_SERVER_HELP
from mindledger.cli.output import echo, json_text, table, write_out
from mindledger.compose import Home
from mindledger.domain.errors import InvalidInputError, MindError

if TYPE_CHECKING:
    from mindledger.application import MindLedger

HELP = """/help                this list
/commitments         open commitments
/threads             live threads
/concepts            concepts
/identity            name and model
/model SPEC          switch the model (recorded in the ledger)
/context             what the last turn saw and why
/raw                 the last reply as the model wrote it
/prompt              the exact messages the model was sent in the last turn
/verify              check the ledger's hash chain
/export FOLDER [jsonl|md]  write the ledger (jsonl) or a transcript (md) into FOLDER
/exit, /quit         leave (Ctrl-D too)"""


class Session:
    """State of one chat: the model in use and the last turn."""

    def __init__(
        self, home: Home, spec: str | None, api_base: str | None, mock_reply: str | None = None
    ) -> None:
        self.home, self.api_base = home, api_base
        self.floor: MindLedger = opened(home)
        self.spec = spec or self.floor.current_identity()["model"]
        self.mock_reply, self.no_server = mock_reply, False
        self.system: str | None = None  # `--system`: the session's own system prompt
        # `--model mock` with no script: only what knowledge answers (without a model) works.
        scripted = self.spec != "mock" or mock_reply is not None
        self.model = self.floor.model_for(self.spec, mock_reply, api_base) if scripted else None
        self.last: Any = None
        self.as_json = False  # each turn printed as `mind turn --json` prints it, one per line

    def slash(self, line: str) -> bool:
        """Run a slash command; returns False when the session should end."""
        command, _, arg = line[1:].partition(" ")
        if command in ("exit", "quit"):
            return False
        if command == "help":
            echo(HELP)
        elif command == "commitments":
            rows = self.floor.commitments().model_dump(mode="json")
            table(rows, ["cid", "text"], "No commitments.")
        elif command == "threads":
            rows = self.floor.threads().model_dump(mode="json")
            table(rows, ["id", "tension", "status", "label"], "No threads.")
        elif command == "concepts":
            table(
                self.floor.concepts().model_dump(mode="json"),
                ["token", "definition"],
                "No concepts.",
            )
        elif command == "identity":
            ident = self.floor.identity()
            echo(f"{ident.name} on {ident.model}")
        elif command == "model":
            if not arg.strip():
                echo(f"model: {self.spec}")
            else:
                spec = self.floor.set_model(arg.strip()).model
                self.spec, self.mock_reply = spec, None
                scripted = spec != "mock"
                self.model = self.floor.model_for(spec, None, self.api_base) if scripted else None
                echo(f"now using {self.spec} (recorded)")
        elif command == "context":
            if self.last is None:
                echo("no turn yet")
            else:
                table(
                    self.last.context,
                    ["id", "kind", "channel", "score", "tokens", "reason"],
                    "The last turn saw no memory.",
                )
        elif command == "raw":
            echo(self.last.reply_raw if self.last else "no turn yet")
        elif command == "prompt":
            from mindledger.cli.turn_prompt import echo_prompt

            if self.last is None:
                echo("no turn yet")
            else:  # read back from the ledger: what was recorded, not what is in memory
                prompt = self.floor.turn_prompt(self.last.turn_id.hex)
                echo_prompt(prompt.model_dump(mode="json"))
        elif command == "verify":
            echo(json.dumps(self.floor.verify().model_dump(mode="json")))
        elif command == "export":
            self.export(arg)
        else:
            echo(f"unknown command /{command}; /help lists them")
        return True

    def export(self, arg: str) -> None:
        """`/export FOLDER [jsonl|md]`: what `mind export FOLDER --format ...` does."""
        from pathlib import Path

        from mindledger.cli.export_cmds import echo_export

        folder, _, fmt = arg.strip().rpartition(" ")
        if fmt not in ("jsonl", "md"):
            folder, fmt = arg.strip(), "jsonl"
        if not folder.strip():
            echo("usage: /export FOLDER [jsonl|md]")
            return
        echo_export(self.floor.export(Path(folder.strip()), fmt).model_dump(mode="json"))

    def say(self, text: str) -> None:
        """One turn: through the home's server when it may take it, else in this process."""
        server = self.server()
        if server is not None:
            from mindledger.cli.server_client import ServerUnavailable

            try:
                self.say_via_server(server, text)
                return
            except ServerUnavailable:
                pass  # refused before the turn was accepted: nothing recorded, run it here
        if self.as_json:
            self.say_json(text)
            return
        from mindledger.cli.turn_cmds import echo_effects

        def show(piece: str) -> None:
            echo(piece, nl=False)

        outcome = self.run_here(text, show)
        echo()
        self.last = outcome
        if outcome.status == "failed":
            assert outcome.failure is not None  # a failed turn always says why
            echo(
                f"[generation failed ({outcome.failure['kind']}): {outcome.failure['message']}]",
                err=True,
            )
        echo_effects(outcome)

    def run_here(self, text: str, on_reply: Any = None) -> Any:
        """The turn in this process, routed as `mind turn` routes it: a message that
        exact-matches reusable knowledge is answered from it without the model; `on_reply`
        hears the visible reply as it comes (it adds up to the recorded reply)."""
        return self.floor.chat_turn(text, self.completion_model, on_reply, self.system).outcome

    def completion_model(self) -> Any:
        if self.model is None:
            raise InvalidInputError("--model mock needs --mock-reply TEXT (or @FILE)")
        return self.model

    def server(self) -> Any:
        """The home's server when it may take this session's turns (the fast path's rules,
        `cli.server_client.find_server`), else None."""
        from mindledger import server_files
        from mindledger.cli import server_client

        env = server_files.startup_environment()
        if self.no_server or server_client.no_server(env):
            return None
        if self.spec == "mock" and self.mock_reply is None:
            return None  # the server refuses a mock with no script; here knowledge may answer
        return server_client.find_server(self.home.path.absolute(), env)

    def say_via_server(self, server: Any, text: str) -> None:
        """One turn on the server: the visible reply printed as its `delta` events come, then
        the change lines of the final `turn` event (as `mind turn` prints them). A server that
        fails after it took the turn is reported; the turn is not run again."""
        from mindledger.cli.server_client import ServerLost, stream_mind

        body: dict[str, Any] = {"text": text, "model": self.spec, "stream": True}
        if self.mock_reply is not None:
            body["mock_reply"] = self.mock_reply
        if self.api_base is not None:
            body["api_base"] = self.api_base
        if self.system is not None:
            body["system"] = self.system
        events = stream_mind(server, "turns", body)  # ServerUnavailable: nothing was accepted
        shown = False
        try:
            for kind, data in events:
                if kind == "delta" and not self.as_json:
                    echo(str(data.get("text", "")), nl=False)
                    shown = True
                elif kind in ("turn", "error"):
                    self.served(kind, data)
                    return
            raise ServerLost("the server ended the stream before the turn")
        except ServerLost as e:
            if shown:
                echo()
            detail = "whether it was recorded is unknown, so it was not run again; see `mind log`"
            echo(f"Error: {e}; {detail}", err=True)

    def served(self, kind: str, data: Any) -> None:
        """Print the end of a served turn: its JSON line, or the line end and change lines."""
        from mindledger.cli.turn_lines import effect_lines

        turn = data if kind == "turn" else data.get("mind_turn", data.get("turn"))
        if turn is None:  # refused or broken after acceptance, with nothing to show
            if not self.as_json:
                echo()
            error = data.get("error")
            echo(f"Error: {error.get('message') if isinstance(error, dict) else error}", err=True)
            return
        self.last = _ServedTurn(turn)
        if self.as_json:
            write_out(json_text(turn, indent=None))
            return
        echo()
        if turn["status"] == "failed":
            failure = turn["failure"]
            echo(f"[generation failed ({failure['kind']}): {failure['message']}]", err=True)
        for line in effect_lines(turn):
            echo(line, err=True)

    def say_json(self, text: str) -> None:
        """One turn, printed as one line of JSON (the fields of `mind turn --json`)."""
        done = self.floor.chat_turn(text, self.completion_model, system=self.system)
        self.last = done.outcome
        data = done.data
        write_out(json_text(data, indent=None))  # json_text escapes what a terminal would obey


class _ServedTurn:
    """What the slash commands read of the last turn, when the server ran it."""

    def __init__(self, turn: dict[str, Any]) -> None:
        from uuid import UUID

        self.turn_id = UUID(turn["turn"])
        self.context = turn["context"]
        self.reply_raw = turn["reply_raw"]


@click.command()
@click.option("--model", "spec", metavar="SPEC", help="Model for this session (see `mind turn`).")
@click.option("--api-base", metavar="URL", help="An OpenAI-compatible server's base URL.")
@click.option(
    "--mock-reply",
    metavar="TEXT|@FILE",
    help="With --model mock: the scripted reply to every message (demos, tests).",
)
@click.option(
    "--system",
    metavar="TEXT",
    help="Your system prompt for every turn of this session (see `mind turn`; e.g. "
    "--system 'Answer in one sentence.').",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print each turn as one line of JSON, no greeting."
)
@click.option("--no-server", is_flag=True, help=NO_SERVER_HELP)
@click.pass_obj
def chat(
    home: Home,
    spec: str | None,
    api_base: str | None,
    mock_reply: str | None,
    system: str | None,
    as_json: bool,
    no_server: bool,
) -> None:
    """Talk with the mind interactively; /help lists the slash commands.

    Replies stream as they arrive; control lines are applied, not shown.

    Example:

        mind chat --model ollama/llama3.2

        mind chat --system "Answer in one sentence."
    """
    from mindledger.cli.turn_cmds import reply_text

    if mock_reply is not None and spec != "mock":
        raise InvalidInputError("use --model mock together with --mock-reply TEXT")
    history = _history(home)
    session = Session(home, spec, api_base, reply_text(mock_reply))
    session.no_server, session.system = no_server, system
    if not no_server:
        _start_background_server(home)
    session.as_json = as_json
    name = session.floor.current_identity()["name"]
    if not as_json:
        echo(f"Talking with {name} on {session.spec}. /help for commands, /exit to leave.")
    _tolerate_undecodable_input()
    while True:
        try:
            line = input("" if as_json else "you> ").strip()
        except EOFError:
            echo()
            break
        if not line:
            continue
        history()
        try:
            if not _one_line(session, name, line):
                break
        except MindError as e:  # this line is refused; the session goes on
            echo(f"Error: {e}", err=True)


def _start_background_server(home: Home) -> None:
    """A chat runs in this process; with no server for the home it starts one (as `mind turn`
    does) for the `mind turn` and `mind recall` calls that follow, with the environment this
    process started with (not the .env lines settings put into os.environ since)."""
    import os

    from mindledger import server_files
    from mindledger.cli import server_client

    if not server_client.no_server(os.environ):
        server_client.start_server(home.path.absolute(), server_files.startup_environment())


def _one_line(session: Session, name: str, line: str) -> bool:
    """Handle one input line; returns False when the session should end."""
    from mindledger.cli.arguments import undecodable_part

    bad = undecodable_part(line)
    if bad is not None:
        raise InvalidInputError(f"that line is not valid UTF-8 ({bad}); nothing was recorded")
    if line.startswith("/"):
        return session.slash(line)
    from mindledger.domain.text import clean_text
    from mindledger.domain.turn import MESSAGE_LIMIT

    clean_text(line, "message", MESSAGE_LIMIT)  # refused before the reply's prompt is shown
    if not session.as_json:
        echo(f"{name}> ", nl=False)
    session.say(line)
    return True


def _tolerate_undecodable_input() -> None:
    """Read stdin with bad bytes kept as surrogates, so one bad line is refused on its own
    instead of a UnicodeDecodeError ending the session."""
    stdin = sys.stdin
    if isinstance(stdin, io.TextIOWrapper):
        with contextlib.suppress(ValueError, io.UnsupportedOperation):
            stdin.reconfigure(errors="surrogateescape")


HISTORY_LINES = 1000


def _history(home: Home) -> Any:
    """Line editing with a history file in the home folder; returns the function that saves
    the line just entered."""
    try:
        import readline
    except ImportError:
        return lambda: None
    path = home.path / "chat_history"
    with contextlib.suppress(OSError):
        readline.read_history_file(path)
        if readline.get_current_history_length() > HISTORY_LINES:  # trimmed before any new line
            readline.set_history_length(HISTORY_LINES)
            readline.write_history_file(path)

    def save() -> None:
        # Each line is appended as it is entered, never the whole history at the end: a
        # `mind forget` run while this chat is open scrubs the file, and must stay scrubbed.
        # Only a terminal's lines: input() adds to readline's history only on a terminal.
        if sys.stdin.isatty():
            with contextlib.suppress(OSError):
                path.touch(mode=0o600)  # readline appends only to a file that exists
                readline.append_history_file(1, path)

    return save
