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
    """At most `arenas` malloc arenas from now on (call before request threads start)."""
    lib = _glibc()
    if lib is not None:
        lib.mallopt(ctypes.c_int(M_ARENA_MAX), ctypes.c_int(arenas))


def release_freed_memory() -> None:
    """Hand the allocator's free pages back to the system (every arena's, not only the
    top of the heap); a few milliseconds."""
    lib = _glibc()
    if lib is not None:
        lib.malloc_trim(ctypes.c_size_t(0))
