"""The embedded model's server process: llama.cpp (xllamacpp) serving an OpenAI-compatible API on
127.0.0.1 only. It exits after `--idle-timeout` seconds without a request (the client touches
the idle file on every call) or on SIGTERM.

Run by adapters/local_model.py as
`python -m mindledger.adapters.local_server MODEL PORT IDLE_FILE TIMEOUT`.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path


def main() -> None:
    model, port, idle_file, timeout = (
        sys.argv[1],
        int(sys.argv[2]),
        Path(sys.argv[3]),
        float(sys.argv[4]),
    )
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = model
    params.n_ctx = 4096
    params.port = port
    params.hostnames = ["127.0.0.1"]  # never listen beyond loopback
    server = xllamacpp.Server(params)
    stopping = False

    def stop(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    idle_file.touch(mode=0o600)
    while not stopping:
        time.sleep(0.5)
        try:
            idle = time.time() - idle_file.stat().st_mtime
        except FileNotFoundError:
            break
        if idle > timeout:
            break
    del server
    os._exit(0)


if __name__ == "__main__":
    main()
