"""The `mind` program: a plain `mind mcp` becomes the server's entry at once (`cli.mcp_entry`);
a call a running server can take goes there (`cli.fast_path`, standard library
only); `status` and `commitments` print from the read model's summary when it is current
(`cli.quick_path`); anything else loads the whole command tree (`cli.group`).

Nothing heavy may be imported at module level here: `python -X importtime -c 'import cli.main'`
shows what the fast path pays before it decides."""

from __future__ import annotations

import sys
from typing import Any


def main() -> None:
    """Console-script entry point."""
    import mindledger.startup_env  # noqa: F401  the environment as it starts, before any change

    _skip_collection_at_exit()
    _collect_young_objects_less_often()

    try:
        _run()
    except OSError as e:  # a write our printing did not catch: click's own (--help)
        if not _click_wrote_stdout(e):
            raise
        from mindledger.cli.output import OutputFailedError, abandon_stdout

        abandon_stdout()
        failed = OutputFailedError(e)
        failed.show()
        raise SystemExit(failed.exit_code) from None


def _skip_collection_at_exit() -> None:
    """At exit, leave what the command built to the operating system instead of to the cycle
    collector: the interpreter's teardown collected the ~300k objects of the imported modules
    (pydantic's and the event classes, DuckDB's bindings) several times over, ~70 ms of CPU
    (over 2x `python -c pass`) after a one-shot command had printed its answer. Objects are
    still freed when their last reference goes; files, connections and the standard streams
    are closed or flushed as before, the atexit handlers all run (this one among them)."""
    import atexit
    import gc

    atexit.unregister(gc.freeze)  # once, however often a program calls `main`
    atexit.register(gc.freeze)


# Young objects the cycle collector lets pile up before it looks at them (Python's default: 700).
YOUNG_OBJECTS = 100_000


def _collect_young_objects_less_often() -> None:
    """A command's start-up (the modules it imports, the classes and schemas they build)
    allocates ~60k objects that live until exit; with the default threshold the collector
    looked at them ~90 times on the way (~15 ms of CPU in a mock turn, half `python -c
    pass`), finding nothing to free. The young generation now holds up to `YOUNG_OBJECTS`
    before a collection: cyclic garbage is still collected, later (at most that many objects
    wait), and what is not cyclic is freed by reference count as before. The server and
    `mind mcp` are processes of their own (`python -m mindledger.service`): Python's defaults
    there."""
    import gc

    gc.set_threshold(YOUNG_OBJECTS, *gc.get_threshold()[1:])


def _click_wrote_stdout(e: OSError) -> bool:
    tb = e.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return False
    frame = tb.tb_frame
    return (
        frame.f_globals.get("__name__") == "click.utils"
        and frame.f_code.co_name == "echo"
        and not frame.f_locals.get("err")
    )


def _run() -> None:
    from mindledger.cli.fast_path import run_via_server
    from mindledger.cli.mcp_entry import hand_over_plain_mcp

    hand_over_plain_mcp(sys.argv[1:])  # a plain `mind mcp` never returns from here
    code = run_via_server(sys.argv[1:])
    if code is None:
        from mindledger.cli.quick_path import run_quick

        code = run_quick(sys.argv[1:])  # status, commitments: from the read model's summary
    if code is not None:
        raise SystemExit(code)
    from mindledger.cli.group import command_tree

    command_tree(sys.argv[1:])(prog_name="mind")


def __getattr__(name: str) -> Any:
    """`from mindledger.cli.main import mind` (tests, scripts) loads the command tree on use."""
    if name in ("mind", "MindGroup"):
        from mindledger.cli import group

        group.command_tree()  # every command
        return getattr(group, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
