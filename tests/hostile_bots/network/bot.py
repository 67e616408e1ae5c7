"""Hostile bot: reaches for the network at StartGame.

Targets (``targets.json``): ``tcp`` and ``udp`` -- ``[host, port]`` listeners the test opened
on the host; ``abstract`` -- the name of an abstract Unix socket the test listens on (those
belong to the network namespace); ``external`` -- ``[host, port]`` outside the machine;
``dns`` -- a name to resolve. In the sandbox there is no network: every try must fail or reach
nothing the test can see.
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sdk.bot import Game
    from tests.hostile_bots._common import HostileBot, attempt, main, targets
else:
    sys.path.append(str(Path(__file__).resolve().parent.parent))  # run from the repository
    from _common import HostileBot, attempt, main, targets

PAYLOAD = b"hello from a hostile bot\n"


def connect_tcp(host: str, port: int) -> str:
    with socket.create_connection((host, port), timeout=2.0) as s:
        s.sendall(PAYLOAD)
    return "connected and sent"


def send_udp(host: str, port: int) -> str:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        sent = s.sendto(PAYLOAD, (host, port))
    return f"sent {sent} bytes (no proof of delivery)"


def connect_abstract(name: str) -> str:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(2.0)
        s.connect("\0" + name)
        s.sendall(PAYLOAD)
    return "connected and sent"


class NetworkBot(HostileBot):
    def attack_at_start(self, game: Game) -> None:
        t = targets()
        attempt("list network interfaces", lambda: [n for _, n in socket.if_nameindex()])
        for host, port in t.get("tcp", []):
            attempt(f"connect tcp {host}:{port}", connect_tcp, host, port)
        for host, port in t.get("udp", []):
            attempt(f"send udp {host}:{port}", send_udp, host, port)
        if "abstract" in t:
            attempt(f"connect abstract unix @{t['abstract']}", connect_abstract, t["abstract"])
        for host, port in t.get("external", []):
            attempt(f"connect tcp {host}:{port}", connect_tcp, host, port)
        if "dns" in t:
            attempt(
                f"resolve {t['dns']}",
                lambda: sorted({a[4][0] for a in socket.getaddrinfo(t["dns"], 443)}),
            )


if __name__ == "__main__":
    main(NetworkBot())
