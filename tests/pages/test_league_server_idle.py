"""The league page server against clients that hold connections instead of using them (issue
34, item 6): 64 idle connections from one client, reopened every 10 s, kept the page from
everyone (3 of 3 requests refused while they held). Now one client address holds at most its
share of the connections, a connection that sends no whole request within the header timeout
is closed, and an answer its client does not read is hung up on.

Every client is on this machine, so the attacker connects from 127.0.0.2 and everyone else
from 127.0.0.1 (all of 127.0.0.0/8 is loopback): two client addresses, one server bound to
127.0.0.1. Idle attackers send nothing, so a socket of theirs that turns readable has been
closed by the server.
"""

from __future__ import annotations

import contextlib
import http.client
import select
import socket
import time
from collections.abc import Iterator

import pytest

from leaderboard.store import Store, TournamentSpec
from ttr_arena.pages.league.server import LeagueSite, running
from ttr_arena.pages.web.limits import ConnectionLimits, address_key

ATTACKER = "127.0.0.2"
VICTIM = "127.0.0.1"
#: long enough that only the limits under test close anything while a test looks
HELD_S = 60.0


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> LeagueSite:
    db = tmp_path_factory.mktemp("league") / "league.db"
    with Store(db) as store:
        store.begin_tournament(TournamentSpec("night", "usa@1", 2, 1, 0, {}))
    return LeagueSite(db)


@contextlib.contextmanager
def _served(site: LeagueSite, limits: ConnectionLimits) -> Iterator[tuple[str, int]]:
    with running(site, "127.0.0.1", limits) as base:
        host, port = base.removeprefix("http://").rstrip("/").split(":")
        yield host, int(port)


@contextlib.contextmanager
def _connections(source: str, address: tuple[str, int], n: int) -> Iterator[list[socket.socket]]:
    """``n`` connections to ``address`` from the local address ``source``, closed on leaving."""
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


def _is_closed(s: socket.socket) -> bool:
    """Whether the server has closed ``s`` (an idle client is sent nothing else)."""
    if not select.select([s], [], [], 0)[0]:
        return False
    try:
        return s.recv(1) == b""
    except ConnectionResetError:
        return True


def _open_after(sockets: list[socket.socket], expected: int, wait_s: float = 10.0) -> int:
    """How many of ``sockets`` are still open once ``expected`` are, or ``wait_s`` passed."""
    closed: set[socket.socket] = set()
    deadline = time.monotonic() + wait_s
    while len(sockets) - len(closed) > expected and time.monotonic() < deadline:
        closed.update(s for s in sockets if s not in closed and _is_closed(s))
        time.sleep(0.02)
    return len(sockets) - len(closed)


def _ended(s: socket.socket, wait_s: float = 10.0) -> bool:
    """Read ``s`` until the server closes or resets it (True), or ``wait_s`` passed (False)."""
    deadline = time.monotonic() + wait_s
    while (left := deadline - time.monotonic()) > 0:
        s.settimeout(left)
        try:
            if not s.recv(1 << 16):
                return True
        except ConnectionResetError:
            return True
        except TimeoutError:
            return False
    return False


def _get(address: tuple[str, int], source: str = VICTIM) -> int:
    """One request on a new connection from ``source``: its status."""
    conn = http.client.HTTPConnection(*address, timeout=10, source_address=(source, 0))
    try:
        conn.request("GET", "/api/league.json")
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def test_sixty_four_idle_connections_from_one_address_hold_only_its_share(
    site: LeagueSite,
) -> None:
    limits = ConnectionLimits(header_timeout_s=HELD_S)  # the default caps: 16 of 64
    with (
        _served(site, limits) as address,
        _connections(ATTACKER, address, 64) as idle,
    ):
        assert _open_after(idle, limits.per_address) == limits.per_address
        statuses = [_get(address) for _ in range(10)]
        assert statuses == [200] * 10
        # the attacker still held its share meanwhile: the victim was not served by luck
        assert sum(not _is_closed(s) for s in idle) == limits.per_address
        # a new connection from a full address takes the place of its oldest idle one
        with _connections(ATTACKER, address, 1) as (newest,):
            assert _open_after(idle, limits.per_address - 1) == limits.per_address - 1
            assert _is_closed(idle[-1]) is False and _is_closed(newest) is False


def test_when_full_an_address_holding_more_gives_way_to_one_holding_less(
    site: LeagueSite,
) -> None:
    limits = ConnectionLimits(header_timeout_s=HELD_S, per_address=4, total=8)
    with (
        _served(site, limits) as address,
        _connections(ATTACKER, address, 4) as first,
        _connections("127.0.0.3", address, 4) as second,
    ):
        assert _open_after(first + second, 8) == 8  # every connection the server has
        assert [_get(address) for _ in range(3)] == [200] * 3
        assert _open_after(first + second, 7) < 8  # one at least gave way to the victim


def test_a_connection_that_sends_no_whole_request_in_time_is_closed(site: LeagueSite) -> None:
    limits = ConnectionLimits(header_timeout_s=0.5)
    with _served(site, limits) as address:
        with _connections(VICTIM, address, 4) as (idle, unfinished, dribbling, answered):
            unfinished.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
            answered.sendall(b"GET /api/league.json HTTP/1.1\r\nHost: x\r\n\r\n")
            assert answered.recv(12) == b"HTTP/1.1 200"
            # A byte at a time, never a whole request: each byte would have reset a read
            # timeout; the deadline is the headers'.
            header = b"GET / HTTP/1.1\r\nHost: x\r\n" + b"X-Slow: 1\r\n" * 20
            for byte in header[:200]:
                if _is_closed(dribbling):
                    break
                with contextlib.suppress(OSError):
                    dribbling.send(bytes([byte]))
                time.sleep(0.02)
            else:
                pytest.fail("a request dribbled a byte at a time held its connection 4 s")
            assert _ended(answered)  # the rest of its answer, then closed: idle too long
            assert _open_after([idle, unfinished], 0) == 0

        # Headers that take a while, but less than the timeout, are answered.
        with _connections(VICTIM, address, 1) as (slow,):
            slow.sendall(b"GET /api/league.json HTTP/1.1\r\n")
            time.sleep(0.2)
            slow.sendall(b"Host: x\r\n\r\n")
            assert slow.recv(12) == b"HTTP/1.1 200"


def test_a_body_sent_after_its_answer_is_not_waited_for(site: LeagueSite) -> None:
    limits = ConnectionLimits(header_timeout_s=HELD_S)
    with _served(site, limits) as address, _connections(VICTIM, address, 1) as (s,):
        s.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\nab")
        assert s.recv(13) == b"HTTP/1.1 405 "
        assert _ended(s)  # closed, the rest of the body never waited for


def test_an_answer_its_client_does_not_read_is_hung_up_on(site: LeagueSite) -> None:
    limits = ConnectionLimits(header_timeout_s=HELD_S, send_timeout_s=0.5)
    with _served(site, limits) as address, _connections(VICTIM, address, 1) as (greedy,):
        greedy.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        greedy.settimeout(2)
        with contextlib.suppress(OSError):  # until the server stops reading it
            for _ in range(400):
                greedy.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        time.sleep(1.0)  # past the send timeout, reading nothing
        assert _ended(greedy)  # reset: its answers thrown away, the system's copy too
        assert _get(address) == 200


@pytest.mark.parametrize(
    ("peer", "client"),
    [
        ("203.0.113.9", "203.0.113.9"),
        ("::ffff:203.0.113.9", "203.0.113.9"),  # an IPv4 client on a dual-stack socket
        ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"),
        ("2001:db8:1:2:bbbb::7", "2001:db8:1:2::/64"),  # the same host, another address
        ("fe80::1%eth0", "fe80::/64"),
        ("", ""),
    ],
)
def test_a_client_is_its_address_or_its_ipv6_64(peer: str, client: str) -> None:
    assert address_key(peer) == client
