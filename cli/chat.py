"""`mind chat`: an interactive REPL over turns, with slash commands and streamed replies."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import click

from cli.compose import Home, build_model, open_mind, open_reader, read_model
from cli.output import table

HELP = """/help                this list
/commitments         open commitments
/threads             live threads
/concepts            concepts
/identity            name and model
/model SPEC          switch the model (recorded in the ledger)
/context             what the last turn saw and why
/raw                 the last reply as the model wrote it
/verify              check the ledger's hash chain
/exit                leave (Ctrl-D too)"""


class Session:
    """State of one chat: the model in use and the last turn."""

    def __init__(
        self, home: Home, spec: str | None, api_base: str | None, mock_reply: str | None = None
    ) -> None:
        self.home, self.api_base = home, api_base
        self.spec = spec or open_mind(home).identity().model
        self.model = build_model(home, self.spec, mock_reply, api_base)
        self.last: Any = None

    def slash(self, line: str) -> bool:
        """Run a slash command; returns False when the session should end."""
        from cli.compose import clock_from_env
        from projections import queries, thread_queries

        command, _, arg = line[1:].partition(" ")
        if command in ("exit", "quit"):
            return False
        if command == "help":
            click.echo(HELP)
        elif command in ("commitments", "threads", "concepts", "identity"):
            with read_model(self.home) as con:
                if command == "commitments":
                    table(queries.commitments(con, False), ["cid", "text"], "No commitments.")
                elif command == "threads":
                    table(
                        thread_queries.threads_by_tension(con, clock_from_env()()),
                        ["id", "tension", "status", "label"],
                        "No threads.",
                    )
                elif command == "concepts":
                    table(queries.concepts(con), ["token", "definition"], "No concepts.")
                else:
                    ident = queries.identity(con)
                    click.echo(f"{ident.get('name')} on {ident.get('model')}")
        elif command == "model":
            if not arg.strip():
                click.echo(f"model: {self.spec}")
            else:
                mind = open_mind(self.home)
                try:
                    mind.set_model(arg.strip())
                finally:
                    mind.close()
                self.spec = arg.strip()
                self.model = build_model(self.home, self.spec, None, self.api_base)
                click.echo(f"now using {self.spec} (recorded)")
        elif command == "context":
            if self.last is None:
                click.echo("no turn yet")
            else:
                table(
                    self.last.context,
                    ["id", "kind", "channel", "score", "tokens", "reason"],
                    "The last turn saw no memory.",
                )
        elif command == "raw":
            click.echo(self.last.reply_raw if self.last else "no turn yet")
        elif command == "verify":
            from adapters.hash_chain import verify_chain

            reader = open_reader(self.home)
            try:
                result = verify_chain(
                    reader.meta()[2], reader.rows(), reader.orphans, reader.find_content
                )
            finally:
                reader.close()
            click.echo(
                json.dumps(
                    {
                        "ok": result.ok,
                        "events": result.events,
                        "first_bad": result.first_bad,
                        "reason": result.reason,
                    }
                )
            )
        else:
            click.echo(f"unknown command /{command}; /help lists them")
        return True

    def say(self, text: str) -> None:
        """One streamed turn."""
        from cli.compose import turn_service
        from cli.turn_cmds import echo_effects
        from domain.control_lines import VisibleStream

        visible = VisibleStream()

        def show(token: str) -> None:
            click.echo(visible.feed(token), nl=False)

        with turn_service(self.home) as service:
            outcome = service.run(text, self.model, on_token=show)
        click.echo(visible.flush())
        self.last = outcome
        if outcome.status == "failed":
            assert outcome.failure is not None  # a failed turn always says why
            click.echo(
                f"[generation failed ({outcome.failure['kind']}): {outcome.failure['message']}]",
                err=True,
            )
        echo_effects(outcome)


@click.command()
@click.option("--model", "spec", metavar="SPEC", help="Model for this session (see `mind turn`).")
@click.option("--api-base", metavar="URL", help="An OpenAI-compatible server's base URL.")
@click.option(
    "--mock-reply",
    metavar="TEXT|@FILE",
    help="With --model mock: the scripted reply to every message (demos, tests).",
)
@click.pass_obj
def chat(home: Home, spec: str | None, api_base: str | None, mock_reply: str | None) -> None:
    """Talk with the mind interactively; /help lists the slash commands.

    Replies stream as they arrive; control lines are applied, not shown.

    Example:

        mind chat --model ollama/llama3.2
    """
    from cli.turn_cmds import reply_text
    from domain.errors import InvalidInputError

    if (spec == "mock") != (mock_reply is not None):
        raise InvalidInputError("use --model mock together with --mock-reply TEXT")
    history = _history(home)
    session = Session(home, spec, api_base, reply_text(mock_reply))
    name = open_mind(home).identity().name
    click.echo(f"Talking with {name} on {session.spec}. /help for commands, /exit to leave.")
    while True:
        try:
            line = input("you> ").strip()
        except EOFError:
            click.echo()
            break
        if not line:
            continue
        if line.startswith("/"):
            if not session.slash(line):
                break
            continue
        click.echo(f"{name}> ", nl=False)
        session.say(line)
    history()


def _history(home: Home) -> Any:
    """Line editing with a history file in the home folder; returns the function that saves it."""
    try:
        import readline
    except ImportError:
        return lambda: None
    path = home.path / "chat_history"
    with contextlib.suppress(OSError):
        readline.read_history_file(path)
    readline.set_history_length(1000)

    def save() -> None:
        with contextlib.suppress(OSError):
            readline.write_history_file(path)

    return save
