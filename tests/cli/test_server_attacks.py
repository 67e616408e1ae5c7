"""``ttr server run`` against the web-layer attacks of issue 35, over real HTTP against one real
server process (as tests/cli/test_server.py drives it): each test is one of the issue's items,
replayed as it was found, and asserts that everyone else is still served.

Every client is on this machine. All of 127.0.0.0/8 is loopback, so each test's clients come
from addresses of their own (the ``127.0.N.x`` of item N): the server counts failures and
connections per client address, and one test's attack must not be another's weather. The
server runs with short timeouts (``--header-timeout 2 --body-timeout 1``) so that the tests
that wait for one wait a second or two; nothing here times the server.
"""

from __future__ import annotations

import contextlib
import re
import select
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from tests.cli.test_server import Server

PROXY = "127.0.0.250"  #: the reverse proxy the server is told of (``--proxy``)
FLAGS = [
    "--no-sandbox",
    "--variant",
    "usa",
    "--players",
    "2",
    "--uploads-per-minute",
    "100",
    "--header-timeout",
    "2",
    "--body-timeout",
    "1",
    "--proxy",
    PROXY,
]
WRONG = {"Authorization": "Bearer " + "w" * 43}
_CSRF = re.compile(r'name="csrf" value="([^"]+)"')


@dataclass
class Site:
    server: Server
    ann: str  #: tokens
    bo: str

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.server.url.removeprefix("http://").rstrip("/").split(":")
        return host, int(port)

    def client(self, source: str, **kwargs: object) -> httpx.Client:
        """An HTTP client whose connections come from the local address ``source``."""
        return httpx.Client(
            base_url=self.server.url,
            transport=httpx.HTTPTransport(local_address=source),
            timeout=10,
            **kwargs,  # type: ignore[arg-type]
        )


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    server = Server(tmp_path_factory.mktemp("attacks") / "data", FLAGS).start()
    try:
        yield Site(server, server.author("ann"), server.author("bo"))
    finally:
        server.stop()


@contextlib.contextmanager
def connections(source: str, address: tuple[str, int], n: int) -> Iterator[list[socket.socket]]:
    """``n`` TCP connections to ``address`` from ``source`` that send nothing; closed on
    leaving."""
    sockets: list[socket.socket] = []
    try:
        for _ in range(n):
            s = socket.socket()
            sockets.append(s)
            s.bind((source, 0))
            s.settimeout(10)
            s.connect(address)
        yield sockets
    finally:
        for s in sockets:
            s.close()


def is_closed(s: socket.socket) -> bool:
    """Whether the server has closed ``s`` (an idle client is sent nothing else)."""
    if not select.select([s], [], [], 0)[0]:
        return False
    try:
        return s.recv(1) == b""
    except ConnectionResetError:
        return True


def open_after(sockets: list[socket.socket], expected: int, wait_s: float = 10.0) -> int:
    """How many of ``sockets`` are still open once ``expected`` are, or ``wait_s`` passed."""
    closed: set[socket.socket] = set()
    deadline = time.monotonic() + wait_s
    while len(sockets) - len(closed) > expected and time.monotonic() < deadline:
        closed.update(s for s in sockets if s not in closed and is_closed(s))
        time.sleep(0.05)
    return len(sockets) - len(closed)


# item 2 --------------------------------------------------------------------------------------


def test_600_idle_connections_of_one_client_leave_everyone_else_served(site: Site) -> None:
    """Item 2: 600 connections that never sent a byte held uvicorn's concurrency limit (512),
    and every other request was a 503 for as long as they stayed open. Now one address holds
    at most its share (64), and only for the header timeout."""
    with connections("127.0.2.1", site.address, 600) as idle:
        with site.client("127.0.2.2") as victim:
            statuses = [victim.get("/api/season").status_code for _ in range(5)]
        assert statuses == [200] * 5
        assert open_after(idle, 64) <= 64  # its share, the rest closed at once
        assert open_after(idle, 0) == 0  # and its share too, at the header timeout


# item 3 --------------------------------------------------------------------------------------


def test_forwarded_for_is_believed_from_the_named_proxy_only(site: Site) -> None:
    """Item 3: X-Forwarded-For was believed from loopback, so a client behind nothing but a
    loopback hop was a new address per request: 40 wrong tokens, no 429. Now the header is
    ignored from anyone but the proxy named with ``--proxy``; from the proxy, the client is
    the last address it forwarded."""
    with site.client("127.0.0.1") as spoofer:  # uvicorn believed loopback's 127.0.0.1
        statuses = [
            spoofer.get(
                "/api/submissions", headers={**WRONG, "X-Forwarded-For": f"10.3.0.{i}"}
            ).status_code
            for i in range(40)
        ]
    assert statuses == [401] * 10 + [429] * 30

    def through_proxy(client: httpx.Client, forwarded: str) -> int:
        headers = {**WRONG, "X-Forwarded-For": forwarded}
        return client.get("/api/submissions", headers=headers).status_code

    with site.client(PROXY) as proxy:
        assert [through_proxy(proxy, "10.3.1.1") for _ in range(11)] == [401] * 10 + [429]
        assert through_proxy(proxy, "10.3.1.2") == 401  # another client behind the proxy
        # a client's own X-Forwarded-For, which the proxy appends to, changes nothing
        assert through_proxy(proxy, "10.3.9.9, 10.3.1.1") == 429
