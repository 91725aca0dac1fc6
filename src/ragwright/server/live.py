"""A live server on a background thread (tests, benchmarks, notebooks): ``with serve_in_thread(app) as url``."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ragwright._deps import require


@contextmanager
def serve_in_thread(
    app: Any, host: str = "127.0.0.1", port: int = 0, *, start_timeout_s: float = 30.0
) -> Iterator[str]:
    """Run *app* with uvicorn on *host* (a free port when ``port=0``) until the block ends; yields its URL."""
    uvicorn = require("uvicorn", "server", "running the HTTP server")
    # uvicorn binds the port itself (port 0: the OS picks one): a socket handed in from outside would
    # lack TCP_NODELAY on its connections and pay a ~40 ms delayed-ACK stall per response.
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, name="ragwright-server", daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + start_timeout_s
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the live server did not start (see the log above)")
            time.sleep(0.02)
        bound_port = server.servers[0].sockets[0].getsockname()[1]
        shown = f"[{host}]" if ":" in host else host
        yield f"http://{shown}:{bound_port}"
    finally:
        server.should_exit = True
        thread.join(start_timeout_s)
