"""A web app served by uvicorn on a thread of this process, for as long as a ``with`` block.

Both pages that are served while something else runs in the main thread use it: the human
seat's page (``ttr play --human``, the referee plays the game meanwhile) and the competition
server's app in tests (``ttr_arena.server.app.running``). One place knows how to learn the
port uvicorn bound, to give up on a server that never comes up, and to stop and join it.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator

import uvicorn


class _ThreadServer(uvicorn.Server):
    """uvicorn's server that tells its URL once listening, and leaves signals alone: on a
    thread they belong to whoever runs the main thread (the CLI handles Ctrl-C)."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.url = ""

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.should_exit or not self.servers:
            return
        host, port = self.servers[0].sockets[0].getsockname()[:2]
        self.url = f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"

    def install_signal_handlers(self) -> None:
        pass


@contextlib.contextmanager
def serving(config: uvicorn.Config, name: str, timeout_s: float = 30.0) -> Iterator[str]:
    """Serve ``config``'s app on a thread called ``name``; yields its base URL (ending in
    ``/``, with the port really bound when ``config.port`` is 0). An OSError if it is not
    listening within ``timeout_s``; stopped, and the thread joined, when the block ends."""
    server = _ThreadServer(config)
    thread = threading.Thread(target=server.run, name=name, daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout_s
    while not server.url:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            raise OSError(f"the web server ({name}) did not start")
        time.sleep(0.01)
    try:
        yield server.url
    finally:
        server.should_exit = True
        thread.join(timeout_s)
