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
from collections.abc import Callable, Iterator

import uvicorn


class ListeningServer(uvicorn.Server):
    """uvicorn's server that knows its URL once listening (the real port when asked for 0)
    and tells ``ready`` of it: the one place that reads the bound address."""

    def __init__(self, config: uvicorn.Config, ready: Callable[[str], None] | None = None) -> None:
        super().__init__(config)
        self.ready = ready
        self.url = ""

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.should_exit or not self.servers:
            return
        host, port = self.servers[0].sockets[0].getsockname()[:2]
        self.url = f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"
        if self.ready is not None:
            self.ready(self.url)


class _ThreadServer(ListeningServer):
    """Leaves signals alone: on a thread they belong to whoever runs the main thread (the
    CLI handles Ctrl-C)."""

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
