"""Making a new mind (`mind init`): a fresh ledger with its own genesis hash, in SQLite or
PostgreSQL, undone file by file when it fails."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from mindledger.compose import Home, open_mind, open_reader
from mindledger.domain.errors import AlreadyInitialisedError, InvalidInputError, MindError
from mindledger.domain.private_files import private_folder, write_private_text
from mindledger.home_creation import Creation


def init_mind(
    home: Home, name: str = "Mind", dsn: str | None = None, schema: str = ""
) -> dict[str, Any]:
    """Create a mind named `name` in the home folder (what `mind init --json` prints); `dsn`:
    keep its ledger in PostgreSQL (in `schema`, default public), else a SQLite file there."""
    from mindledger.domain.identity import clean_name

    name = clean_name(name)  # a refused name creates nothing
    if home.path.exists() and not home.path.is_dir():
        raise InvalidInputError(
            f"{home.path} is a file, not a folder; give `home` (or MIND_HOME) a folder path"
        )
    created = Creation(home)
    derived = _derived_files(home)  # noted before: if the init makes a ledger, they are stale
    try:
        if dsn:
            private_folder(home.path)
            write_private_text(  # the DSN may carry a password
                home.config_file,
                json.dumps(
                    {
                        **home.config(),
                        "backend": "postgres",
                        "postgres_dsn": dsn,
                        "postgres_schema": schema,
                    },
                    indent=2,
                ),
            )
            # The settings this process read before config.json said postgres: the new mind is
            # made where the arguments say, as every later command will look for it.
            home = home.with_flags(
                backend=("`dsn`", "postgres"),
                postgres_dsn=("`dsn`", dsn),
                postgres_schema=("`schema`", schema),
            )
        app = open_mind(home, create=True)
        try:
            with contextlib.closing(open_reader(home)) as reader:
                ledger_id = reader.meta()[0]
            app.init(name, ledger_id)
        finally:
            app.close()  # its connections go before a failed init's files do
    except AlreadyInitialisedError:
        raise  # the mind that is there is someone's: leave it
    except BaseException as e:
        created.undo()
        if isinstance(e, OSError):
            raise MindError(f"cannot create a mind at {home.path} ({e.strerror or e})") from None
        raise
    for path in derived:
        # Derived from a ledger no longer in this home (its files deleted, the home re-made):
        # kept, the new mind showed the old one's commitments, and its own first events took
        # positions the read model had projected already, so no read showed them.
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    if derived:
        from mindledger.projections.engine.projector import forget_reached

        forget_reached(home.readmodel)  # this process's note of the old one's position
    _project(home)
    return {"name": name, "home": str(home.path), "backend": home.backend(), "ledger_id": ledger_id}


def _derived_files(home: Home) -> list[Path]:
    """The read models, their summary and the vectors in the home (rebuilt from the ledger)."""
    from mindledger.adapters.vector_store import FILE as VECTORS
    from mindledger.projections.engine.summary import summary_path

    files = [home.readmodel, home.published, summary_path(home.readmodel)]
    files += [Path(f"{p}.wal") for p in (home.readmodel, home.published)]
    files += [Path(f"{home.path / VECTORS}{s}") for s in ("", "-wal", "-shm", "-journal")]
    return [p for p in files if p.exists()]


def _project(home: Home) -> None:
    """Build the new mind's read model and its summary, so the first `mind status` or `mind
    commitments` prints from the summary without loading DuckDB (decision 0024). The mind is
    made by now, and the read model is derived: a failure here leaves it to the next read
    (which builds it), rather than failing an init whose retry would find the mind there."""
    from mindledger.projection import catch_up

    with contextlib.suppress(MindError, OSError):
        catch_up(home, publish=False)
