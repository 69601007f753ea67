"""A long-lived process gives back the memory its requests freed (Linux's glibc; elsewhere
nothing is done).

Measured in the soak (`bench/soak.py`, a served mind over ten minutes, glibc's `mallinfo2`
sampled in the server): memory in use stayed at 120-180 MB while memory freed but kept by the
allocator grew from 69 to 314 MB, and resident memory with it. DuckDB's own buffers
(`duckdb_memory()`) were under 60 MB in most samples and 120 MB at most, far below its
`memory_limit`, so lowering that would change nothing. glibc gives each thread that allocates
its own arena (up to eight per core) and returns an arena's free pages only from its top: a
server's request threads each kept the pages a forget's or a catch-up's batch had freed in
theirs. So a server caps the arenas, and hands free pages back after each forget, the request
that allocates the most (freed-but-kept memory then peaked at 147 MB in the same soak; resident
memory still rises there, in DuckDB's and Arrow's own allocators: BENCHMARKS.md, Soak).
Those two keep what they freed as well: DuckDB's jemalloc purges only while it allocates again
unless its background thread runs, and Arrow's mimalloc pool keeps its pages until asked. In a
served soak, probed from inside the server, jemalloc's resident memory ended at 43-56 MB for
10-40 MB allocated, and Arrow's pool's mappings at 38 MB for none in use; with the background
purge and the pool released after each forget, 26 MB and 0.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import sys
from typing import Any

M_ARENA_MAX = -8  # mallopt's parameter (malloc.h)
SERVER_ARENAS = 2  # a 4-minute served soak: 74 MB freed but kept, against 120 with the default


@functools.cache
def _glibc() -> Any | None:
    if not sys.platform.startswith("linux"):
        return None
    name = ctypes.util.find_library("c")
    try:
        lib = ctypes.CDLL(name or "libc.so.6")
        lib.malloc_trim, lib.mallopt  # noqa: B018  # musl has neither: nothing to do there
    except (OSError, AttributeError):
        return None
    return lib


def cap_arenas(arenas: int = SERVER_ARENAS) -> None:
    """At most `arenas` malloc arenas from now on (call before request threads start), and
    DuckDB's allocator purging the pages it freed in the background."""
    lib = _glibc()
    if lib is not None:
        lib.mallopt(ctypes.c_int(M_ARENA_MAX), ctypes.c_int(arenas))
    from mindledger.projections.engine.duckdb_files import purge_in_background

    purge_in_background()


def release_freed_memory() -> None:
    """Hand the allocator's free pages back to the system (every arena's, not only the
    top of the heap); a few milliseconds."""
    lib = _glibc()
    if lib is not None:
        lib.malloc_trim(ctypes.c_size_t(0))
    arrow = sys.modules.get("pyarrow")  # never imported for this: only if a request did
    if arrow is not None:
        arrow.default_memory_pool().release_unused()
