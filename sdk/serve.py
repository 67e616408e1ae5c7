"""Run a :class:`~sdk.bot.Bot` as a gRPC server: ``run(MyBot())`` at the end of ``bot.py``.

The address comes from ``--address HOST:PORT`` (or ``unix:/path/to.sock``), else the
``TTR_BOT_ADDRESS`` environment variable (what the launcher sets: a Unix socket in the
sandbox, a loopback port without it), else ``127.0.0.1:50051``; port 0 picks a free port. Once
bound, the server prints one line ``listening on ADDRESS`` to stdout. It serves
``ttr.v1.BotService``, gRPC health checking (``""`` and ``ttr.v1.BotService`` SERVING) and
server reflection, and stops cleanly on SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent import futures
from dataclasses import dataclass
from types import FrameType

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from sdk.bot import Bot, BotServicer
from ttr.v1 import bot_service_pb2, bot_service_pb2_grpc

__all__ = [
    "ADDRESS_ENV",
    "DEFAULT_ADDRESS",
    "SERVICE_NAME",
    "RunningBot",
    "resolve_address",
    "run",
    "serve",
    "start_server",
]

ADDRESS_ENV = "TTR_BOT_ADDRESS"
DEFAULT_ADDRESS = "127.0.0.1:50051"
SERVICE_NAME: str = bot_service_pb2.DESCRIPTOR.services_by_name["BotService"].full_name


@dataclass
class RunningBot:
    """A bot server started in this process."""

    server: grpc.Server
    host: str  #: for a Unix socket: ``unix``
    port: int  #: for a Unix socket: 0
    servicer: BotServicer
    health: health.HealthServicer
    unix_path: str = ""

    @property
    def address(self) -> str:
        return f"unix:{self.unix_path}" if self.unix_path else f"{self.host}:{self.port}"

    def stop(self, grace: float | None = 1.0) -> None:
        """Mark the server NOT_SERVING and stop it, waiting up to ``grace`` seconds."""
        self.health.enter_graceful_shutdown()
        self.server.stop(grace).wait()


def _split(address: str) -> tuple[str, int]:
    """``(host, port)``; ``("unix", 0)`` for ``unix:/absolute/path``."""
    if address.startswith("unix:"):
        if not address[len("unix:") :].startswith("/"):
            raise ValueError(f"address {address!r}: a Unix socket needs an absolute path")
        return "unix", 0
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ValueError(f"address {address!r} is not HOST:PORT")
    return host, int(port)


def resolve_address(address: str | None = None) -> str:
    """The address to listen on: the argument, else $TTR_BOT_ADDRESS, else the default."""
    chosen = address or os.environ.get(ADDRESS_ENV) or DEFAULT_ADDRESS
    _split(chosen)
    return chosen


def start_server(bot: Bot, address: str = "127.0.0.1:0", max_workers: int = 8) -> RunningBot:
    """Start serving ``bot`` in this process (port 0: a free port) and return at once."""
    host, _ = _split(address)
    unix_path = address[len("unix:") :] if host == "unix" else ""
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=max_workers))
    servicer = BotServicer(bot)
    bot_service_pb2_grpc.add_BotServiceServicer_to_server(servicer, server)
    health_servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    for name in ("", SERVICE_NAME):
        health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    reflection.enable_server_reflection(
        (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server
    )
    port = server.add_insecure_port(address)
    if port == 0:
        raise OSError(f"cannot listen on {address}")
    server.start()
    if unix_path:
        port = 0
    return RunningBot(server, host, port, servicer, health_servicer, unix_path)


def serve(bot: Bot, address: str | None = None) -> None:
    """Serve ``bot`` until SIGTERM or SIGINT; prints ``listening on ADDRESS`` once bound."""
    running = start_server(bot, resolve_address(address))
    stopped = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stopped.set()

    previous: dict[int, Callable[[int, FrameType | None], object] | int | None] = {}
    for sig in (signal.SIGTERM, signal.SIGINT):
        previous[sig] = signal.signal(sig, on_signal)
    print(f"listening on {running.address}", flush=True)
    try:
        while not stopped.wait(0.5):
            pass
    finally:
        running.stop(grace=2.0)
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def run(bot: Bot, argv: Sequence[str] | None = None) -> None:
    """The entry point of a bot script: ``run(MyBot())`` (reads ``--address``)."""
    parser = argparse.ArgumentParser(description="Serve a TTR Arena bot over gRPC.")
    parser.add_argument(
        "--address",
        help=f"HOST:PORT or unix:/PATH to listen on "
        f"(default: ${ADDRESS_ENV}, else {DEFAULT_ADDRESS})",
    )
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    try:
        serve(bot, args.address)
    except (ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(2) from None
