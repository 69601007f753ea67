"""A server hands back what its allocators freed: glibc's arenas capped, DuckDB's allocator
purging in the background, Arrow's pool released after a forget (measured in bench.soak)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# Run in a child process: both settings are global to the process that makes them.
PROBE = """
import sys
from mindledger.memory_release import cap_arenas, release_freed_memory
release_freed_memory()
assert "pyarrow" not in sys.modules, "imported Arrow only to release its pool"
cap_arenas()
import tempfile
from mindledger.projections.engine.duckdb_files import connect, close
con = connect(tempfile.mkdtemp() + "/read.duckdb")  # a file: attached to the one instance
((on,),) = con.execute("SELECT current_setting('allocator_background_threads')").fetchall()
close(con)
import pyarrow
release_freed_memory()
print(on)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc and DuckDB's jemalloc")
def test_a_server_purges_duckdbs_freed_pages_and_releases_arrows_pool() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=REPO,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "True"
