"""Hostile bot: takes over other bots' addresses and talks to them.

From the moment it starts, for ``scout_s`` seconds (default 5), it watches /proc (see
``in_scope``) for other bots (``TTR_BOT_ADDRESS`` in /proc/PID/environ, ``--address`` in
cmdlines) and for the referee's ``--seed``; each address found it serves itself at once (gRPC
binds with SO_REUSEPORT, and removes a Unix socket file in its way), answering that seat's
requests with garbage. This is the attack that took seats from bots started after it.

At StartGame it also: reads /proc/net/tcp, tcp6 and unix; binds ``tcp_ports`` on 127.0.0.1
and the Unix paths in ``unix_paths``; and for every address in ``peers`` (the test adds the
other bots' addresses once they run) and every one it found, calls the health check and
EndGame for this game, which would end the game for that seat.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path
from typing import TYPE_CHECKING

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from ttr.v1 import bot_service_pb2, bot_service_pb2_grpc

if TYPE_CHECKING:
    from sdk.bot import Game
    from tests.hostile_bots._common import HostileBot, attempt, main, report, targets
else:
    sys.path.append(str(Path(__file__).resolve().parent.parent))  # run from the repository
    from _common import HostileBot, attempt, main, report, targets

OWN = os.environ.get("TTR_BOT_ADDRESS", "")
found: dict[str, str] = {}  # address -> how it was found
hijacked: dict[str, int] = {}  # address -> calls received there
#: what the scout did before the game's log began, reported again at StartGame
scouted: list[tuple[str, str]] = []
servers: list[grpc.Server] = []


class Saboteur(bot_service_pb2_grpc.BotServiceServicer):
    """What a hijacked seat's requests get: acknowledged starts, garbage answers."""

    def __init__(self, address: str) -> None:
        self.address = address

    def StartGame(
        self, request: bot_service_pb2.StartGameRequest, context: grpc.ServicerContext
    ) -> bot_service_pb2.StartGameResponse:
        hijacked[self.address] += 1
        return bot_service_pb2.StartGameResponse()

    def Act(
        self, request: bot_service_pb2.ActRequest, context: grpc.ServicerContext
    ) -> bot_service_pb2.ActResponse:
        hijacked[self.address] += 1
        return bot_service_pb2.ActResponse(request_id="hijacked")

    def EndGame(
        self, request: bot_service_pb2.EndGameRequest, context: grpc.ServicerContext
    ) -> bot_service_pb2.EndGameResponse:
        return bot_service_pb2.EndGameResponse()

    def Play(
        self, request_iterator: Iterator[bot_service_pb2.ActRequest], context: grpc.ServicerContext
    ) -> Iterator[bot_service_pb2.ActResponse]:
        # Act only, as every bot before the Play stream (it never sets play_stream).
        context.abort(grpc.StatusCode.UNIMPLEMENTED, "Act only")


def hijack(address: str) -> str:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    bot_service_pb2_grpc.add_BotServiceServicer_to_server(Saboteur(address), server)
    if server.add_insecure_port(address) == 0:
        raise OSError(f"cannot listen on {address}")
    hijacked[address] = 0
    server.start()
    servers.append(server)
    return "serving it"


def in_scope(pid: str) -> bool:
    """Every process it sees, once in a PID namespace of its own; in the referee's namespace
    (run unsandboxed, to prove the attack) only the referee's children, so that it cannot
    take the ports of someone else's bots on a shared machine."""
    t = targets()
    host_ns = t.get("host_pidns")
    if host_ns is not None and os.readlink("/proc/self/ns/pid") != host_ns:
        return True
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    ppid = next(ln.split()[1] for ln in status.splitlines() if ln.startswith("PPid:"))
    return ppid == str(t.get("referee_pid"))


def scan_proc() -> None:
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid() or not in_scope(entry):
            continue
        for part in ("environ", "cmdline"):
            try:
                fields = Path(f"/proc/{entry}/{part}").read_bytes().split(b"\0")
            except OSError:
                continue
            for i, raw in enumerate(fields):
                text = raw.decode("utf-8", "replace")
                address = ""
                if text.startswith("TTR_BOT_ADDRESS="):
                    address = text.split("=", 1)[1]
                elif text == "--address" and i + 1 < len(fields):
                    address = fields[i + 1].decode("utf-8", "replace")
                elif text == "--seed" and "seed" not in found:
                    found["seed"] = f"pid {entry}: --seed {fields[i + 1].decode()}"
                    scouted.append(("find the referee's --seed", f"SUCCEEDED {found['seed']}"))
                if address and address != OWN and address not in found:
                    found[address] = f"pid {entry} {part}"
                    scouted.append((f"find another bot's address in /proc/{entry}/{part}", address))
                    try:
                        scouted.append((f"hijack {address}", f"SUCCEEDED {hijack(address)}"))
                    except Exception as e:
                        scouted.append((f"hijack {address}", f"{type(e).__name__}: {e}"))


def scout(seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        scan_proc()
        time.sleep(0.02)


def proc_net(name: str) -> str:
    lines = Path(f"/proc/net/{name}").read_text().splitlines()[1:]
    if name == "unix":
        paths = sorted({ln.split()[-1] for ln in lines if len(ln.split()) >= 8})
        return f"{len(lines)} sockets: {paths[:20]}"
    listening = sorted({int(ln.split()[1].rsplit(":", 1)[1], 16) for ln in lines})
    return f"{len(lines)} sockets, local ports {listening[:40]}"


def bind_tcp(port: int) -> str:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    s.bind(("127.0.0.1", port))
    s.listen()
    keep.append(s)
    return "bound and listening (in this bot's network namespace)"


def bind_unix(path: str) -> str:
    if os.path.exists(path):
        os.unlink(path)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.listen()
    keep.append(s)
    return "bound and listening"


def end_peer(address: str, game_id: str) -> str:
    with grpc.insecure_channel(address) as channel:
        bot_service_pb2_grpc.BotServiceStub(channel).EndGame(
            bot_service_pb2.EndGameRequest(game_id=game_id), timeout=1.0
        )
        health = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(), timeout=1.0
        )
    return f"EndGame accepted; health {health.status}"


keep: list[socket.socket] = []


class BindAddressBot(HostileBot):
    def attack_at_start(self, game: Game) -> None:
        t = targets()
        for what, outcome in scouted:
            report(what, outcome)
        for name in ("tcp", "tcp6", "unix"):
            attempt(f"read /proc/net/{name}", proc_net, name)
        for port in t.get("tcp_ports", []):
            attempt(f"bind tcp 127.0.0.1:{port}", bind_tcp, port)
        for path in t.get("unix_paths", []):
            attempt(f"bind unix {path}", bind_unix, path)
        peers = [*t.get("peers", []), *(a for a in found if a != "seed")]
        for address in dict.fromkeys(peers):
            attempt(f"EndGame on {address}", end_peer, address, game.game_id)
        for address, calls in hijacked.items():
            report(f"hijacked {address}", f"{calls} calls for another seat so far")

    def on_end(self, outcome: object) -> None:
        for address, calls in hijacked.items():
            report(f"hijacked {address}", f"{calls} calls for another seat in the game")


if __name__ == "__main__":
    threading.Thread(target=scout, args=(float(targets().get("scout_s", 5)),), daemon=True).start()
    main(BindAddressBot())
