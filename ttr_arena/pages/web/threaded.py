"""A web app served by uvicorn in this process: on a thread for as long as a ``with`` block
(:func:`serving`), or in the main thread until SIGINT or SIGTERM (:func:`serve_until_signal`).

The pages served while something else runs in the main thread use the first: the human seat's
page (``ttr play --human``, the referee plays the game meanwhile) and the web apps in tests
(``ttr_arena.server.app.running``, ``ttr_arena.pages.league.server.running``). The commands
that only serve use the second: ``ttr server run`` and ``ttr leaderboard serve``. One place
knows how to learn the port uvicorn bound, to give up on a server that never comes up, to stop
and join it, and to stop on a signal.
"""

from __future__ import annotations

import contextlib
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from types import FrameType

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


class _MainThreadServer(ListeningServer):
    """The server :func:`serve_until_signal` runs in the main thread: stopped by a signal, it
    returns to its caller instead of raising the signal again (uvicorn's own habit: the callers
    here have more to do after it, a ladder to stop or a line to print)."""

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self.should_exit and sig == signal.SIGINT:
            self.force_exit = True  # a second Ctrl-C: stop waiting for open requests
        else:
            self.should_exit = True


def serve_until_signal(
    config: uvicorn.Config,
    ready: Callable[[str], None] | None = None,
    sockets: list[socket.socket] | None = None,
) -> None:
    """Serve ``config``'s app in this (the main) thread until SIGINT or SIGTERM, then return
    once open requests have finished (at most ``config.timeout_graceful_shutdown``).
    ``ready(url)`` is called once listening. ``sockets``: already bound and listening (then
    uvicorn binds nothing and closes them when it stops). A port that cannot be bound is an
    OSError (uvicorn also logs why on stderr), never a SystemExit."""
    server = _MainThreadServer(config, ready)
    where = f"{config.host}:{config.port}"
    try:
        server.run(sockets)
    except SystemExit:  # uvicorn's answer to a failed bind
        if server.started:
            raise
        raise OSError(f"cannot listen on {where}") from None
    if not server.started:
        raise OSError(f"cannot listen on {where}")
