"""What a page served by uvicorn holds against clients that hold connections instead of using
them (issue 34): uvicorn closes an idle keep-alive connection, but not one that never sends a
request, nor one whose request never ends, nor one whose client stops reading its answer, and
it accepts as many as are opened. So one client with a loop of 64 idle connections, reopened
every 10 s, kept the league page from everyone.

:func:`limited_protocol` is uvicorn's HTTP/1.1 protocol (h11) with four limits
(:class:`ConnectionLimits`), set in ``uvicorn.Config(http=...)`` whatever the app:

- a request's headers must have arrived within ``header_timeout_s`` of the connection opening
  (or of the previous answer on it), else the connection is closed: an idle connection, or a
  request sent a byte at a time, costs its client a reconnect every ``header_timeout_s``;
- a request's body may stop for at most ``body_timeout_s`` between two parts of it, else the
  connection is dropped and the app told the client left (issue 35: an upload that stops
  half-way held its spooled part for ever); the server not reading, because the app is busy
  with what came, is never counted against the client;
- an answer its client stops reading for ``send_timeout_s`` is hung up on;
- at most ``per_address`` connections from one client address (an IPv6 client: its /64, which
  is what one host is given): the address's oldest connection waiting for a request makes
  room for its new one, so a browser behind a busy address still gets in, while the address
  never holds more than its share; a reverse proxy named in ``proxies`` carries everyone's
  requests, so its connections count against ``total`` only;
- at most ``total`` connections at once, so the server never runs out of descriptors: when
  full, a newcomer takes the place of a connection waiting for a request from an address
  holding more than it would, else it is closed at once.

A connection refused or made room for is closed, never answered: it has asked nothing yet. A
request being answered is never cut short by another client. A request answered before its
body came (a 405, or an upload refused from its headers) is not waited for: the answer is
sent, the sending side shut, and what the client still sends is read and thrown away for at
most ``linger_s`` before the connection is dropped. Closing at once, with the client's bytes
unread, would make the system reset the connection, and a reset can reach the client before
it has read the answer (RFC 9112, 9.6: a server "reads and discards" before closing). When
the server stops, each connection still answering gets ``stop_s`` to finish, then is hung up
on, so a client that does not read cannot hold the stop.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import ipaddress
import socket
import struct
from dataclasses import dataclass
from typing import Any

import h11
from uvicorn.config import Config
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    """The limits of :func:`limited_protocol`; the defaults suit a page that polls every few
    seconds (a browser keeps one or two connections to it and sends its headers at once)."""

    header_timeout_s: float = 10.0  #: a request's headers, from opening or the last answer
    body_timeout_s: float = 10.0  #: the longest pause between two parts of a request's body
    send_timeout_s: float = 10.0  #: an answer its client does not read, then hung up on
    per_address: int = 16  #: connections open from one client address (IPv6: its /64)
    total: int = 64  #: connections open at once, from everyone
    stop_s: float = 2.0  #: how long an answer under way may take once the server stops
    linger_s: float = 2.0  #: a body sent after its answer is read and thrown away this long
    #: addresses or networks of reverse proxies ("10.0.0.2", "fd00::/64"): held to ``total``
    proxies: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("header_timeout_s", "body_timeout_s", "send_timeout_s", "stop_s"):
            if not getattr(self, name) > 0:
                raise ValueError(f"ConnectionLimits.{name} must be positive")
        if self.linger_s < 0:
            raise ValueError("ConnectionLimits.linger_s must not be negative")
        if not 1 <= self.per_address <= self.total:
            raise ValueError("ConnectionLimits: need 1 <= per_address <= total")
        proxy_networks(self.proxies)  # a ValueError naming a malformed one

    def is_proxy(self, host: str) -> bool:
        """Whether ``host`` (a connection's peer address) is one of the ``proxies``."""
        return is_in(host, proxy_networks(self.proxies))


@functools.cache
def proxy_networks(proxies: tuple[str, ...]) -> tuple[IPNetwork, ...]:
    """``proxies`` as networks (an address is its own network); a ValueError names a
    malformed one."""
    networks = []
    for proxy in proxies:
        try:
            networks.append(ipaddress.ip_network(proxy.strip(), strict=False))
        except ValueError:
            raise ValueError(
                f"proxy {proxy!r}: expected an IP address or network (10.0.0.2, fd00::/64)"
            ) from None
    return tuple(networks)


def is_in(host: str, networks: tuple[IPNetwork, ...]) -> bool:
    """Whether the address ``host`` (IPv4 seen through IPv6 as itself) is in ``networks``."""
    if not networks:
        return False
    try:
        ip = ipaddress.ip_address(host.partition("%")[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return any(ip in network for network in networks)


def address_key(host: str) -> str:
    """The client a connection is counted against: its IP address, an IPv4 client seen through
    an IPv6 socket as itself, and an IPv6 client as its /64 (one host may use any address of
    it, so counting addresses would count nothing)."""
    try:
        ip = ipaddress.ip_address(host.partition("%")[0])
    except ValueError:
        return host  # not an IP (a Unix socket's peer): all such clients count as one
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


class _Open:
    """The connections of one server, by client, oldest first. Touched only from the server's
    event loop, so it needs no lock."""

    def __init__(self) -> None:
        self.by_client: dict[str, list[LimitedH11Protocol]] = {}

    def room_for(self, client: str, limits: ConnectionLimits, proxy: bool = False) -> bool:
        """Whether a new connection from ``client`` may open, making room if need be; a
        ``proxy`` is held to the total only."""
        self._forget_closed()
        mine = self.by_client.get(client, [])
        if len(mine) >= limits.per_address and not proxy:
            return _close_one_waiting(mine)
        if sum(map(len, self.by_client.values())) < limits.total:
            return True
        # Full: an address holding more than ``client`` would after this one gives one up,
        # the one holding most first; last of all, the client's own.
        heavier = [c for c in self.by_client.values() if len(c) > len(mine) + 1]
        heavier.sort(key=len, reverse=True)
        return any(_close_one_waiting(c) for c in (*heavier, mine))

    def add(self, client: str, protocol: LimitedH11Protocol) -> None:
        self.by_client.setdefault(client, []).append(protocol)

    def remove(self, client: str, protocol: LimitedH11Protocol) -> None:
        mine = self.by_client.get(client, [])
        if protocol in mine:
            mine.remove(protocol)
        if not mine:
            self.by_client.pop(client, None)

    def _forget_closed(self) -> None:
        """Drop the connections being closed: a burst of new ones is accepted before the
        closed ones are told they are lost, and each of the burst must see room made."""
        for client, connections in list(self.by_client.items()):
            connections[:] = [p for p in connections if not p.transport.is_closing()]
            if not connections:
                del self.by_client[client]


def _close_one_waiting(connections: list[LimitedH11Protocol]) -> bool:
    """Close the oldest of ``connections`` that waits for a request; False if every one has a
    request under way (an answer is never cut short for another client)."""
    for protocol in connections:
        if protocol.waiting():
            protocol.hang_up()
            return True
    return False


class _Connection(h11.Connection):
    """h11's server side, which marks an answer sent before its request's body came with
    ``Connection: close`` (RFC 9110, 15: a server answering before it has read the content
    says whether it will go on reading it; a client that took the connection for kept alive
    would send its next request into the close). Only the bytes say it: told through its
    state, h11 would have uvicorn close at once, with the body unread, where the protocol
    lingers (:meth:`LimitedH11Protocol.linger`)."""

    def send_with_data_passthrough(self, event: h11.Event) -> list[bytes] | None:
        early = isinstance(event, h11.Response) and self.their_state is h11.SEND_BODY
        data = super().send_with_data_passthrough(event)
        if early and data and self.our_state is not h11.MUST_CLOSE:
            data.insert(-1, b"connection: close\r\n")  # before the head's blank line
        return data


class LimitedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol under :class:`ConnectionLimits`: made by :func:`limited_protocol`,
    which gives each server's class its own limits and its own count of open connections."""

    limits = ConnectionLimits()
    _open = _Open()
    #: headers added to the answers uvicorn makes itself (a 400 for a malformed request)
    answer_headers: tuple[tuple[bytes, bytes], ...] = ()

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        size = config.h11_max_incomplete_event_size
        self.conn = _Connection(h11.SERVER) if size is None else _Connection(h11.SERVER, size)
        self._client = ""
        self._admitted = False
        self._headers_timer: asyncio.TimerHandle | None = None
        self._body_timer: asyncio.TimerHandle | None = None
        self._send_timer: asyncio.TimerHandle | None = None
        self._abort_timer: asyncio.TimerHandle | None = None
        self._lingering = False  #: answered; what the client still sends is thrown away

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        peer = transport.get_extra_info("peername")
        host = str(peer[0]) if isinstance(peer, tuple) else ""
        self._client = address_key(host)
        if not self._open.room_for(self._client, self.limits, self.limits.is_proxy(host)):
            transport.close()  # never registered with uvicorn: nothing else to undo
            return
        self._admitted = True
        super().connection_made(transport)
        self._open.add(self._client, self)
        self._wait_for_headers()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self._admitted:
            return
        self._admitted = False
        self._open.remove(self._client, self)
        for timer in (self._headers_timer, self._body_timer, self._send_timer, self._abort_timer):
            if timer is not None:
                timer.cancel()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._lingering:
            return  # the body of a request already answered: thrown away
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE and self._headers_timer is not None:
            self._headers_timer.cancel()  # the request's headers are in: it is being answered
            self._headers_timer = None
        if self.conn.their_state is h11.SEND_BODY and not self._lingering:
            self._wait_for_body()
        elif self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.transport.is_closing():
            return
        if self.conn.their_state is h11.SEND_BODY and self.cycle.response_complete:
            self.linger()  # answered before its body came (a 405, say): not waited for
        elif self.conn.their_state is h11.IDLE:
            self._wait_for_headers()

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to a malformed request, with :attr:`answer_headers`: the only
        answer the app does not make, so the only one that would go without them."""
        if not self.answer_headers:
            super().send_400_response(msg)
            return
        headers = [
            (b"content-type", b"text/plain; charset=utf-8"),
            (b"connection", b"close"),
            *self.answer_headers,
        ]
        for event in (
            h11.Response(status_code=400, headers=headers, reason=b"Bad Request"),
            h11.Data(data=msg.encode("ascii")),
            h11.EndOfMessage(),
        ):
            self.transport.write(self.conn.send(event) or b"")
        self.transport.close()

    def pause_writing(self) -> None:
        super().pause_writing()
        if self._send_timer is None:
            timeout = self.limits.send_timeout_s
            self._send_timer = self.loop.call_later(timeout, self.drop)

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._send_timer is not None:
            self._send_timer.cancel()
            self._send_timer = None

    def shutdown(self) -> None:
        """uvicorn's, which closes the connection unless an answer is under way, and then a
        hang-up after ``stop_s`` whatever its client does (a close waits for the client to
        read what is left to send, and one that does not read never lets it); at once where
        the client is already not reading."""
        super().shutdown()
        if self.flow.write_paused:
            self.drop()
        else:
            self._abort_after(self.limits.stop_s)

    def waiting(self) -> bool:
        """Whether the connection waits for a request: none under way or being answered."""
        return self.conn.their_state is h11.IDLE and (
            self.cycle is None or self.cycle.response_complete
        )

    def hang_up(self) -> None:
        """Close the connection: what is left of an answer is still sent to a client that
        reads it within ``send_timeout_s``, then the connection is dropped anyway."""
        self.transport.close()
        self._abort_after(self.limits.send_timeout_s)

    def drop(self) -> None:
        """Hang up at once, what is left to send thrown away, the system's copy too (a reset,
        not a close: a closed socket would go on sending it, in the system's memory, to a
        client that does not read)."""
        sock = self.transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.transport.abort()

    def linger(self) -> None:
        """End a connection whose request was answered before its body came: the answer is
        sent, then the sending side shut (the client reads the answer, then the end), and
        whatever the client still sends is read and thrown away, for ``linger_s`` at most.
        Closing with its bytes unread would reset the connection, and the reset may cost the
        client the answer it has not read yet."""
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None
        if self.limits.linger_s == 0 or not self.transport.can_write_eof():
            self.hang_up()
            return
        self._lingering = True
        try:
            self.transport.write_eof()
        except OSError:  # the client is gone already
            self.drop()
            return
        self.transport.resume_reading()  # uvicorn pauses it while a body waits to be read
        self._abort_after(self.limits.linger_s)  # the client's end (EOF) closes it sooner

    def _abort_after(self, seconds: float) -> None:
        if self._abort_timer is None:
            self._abort_timer = self.loop.call_later(seconds, self.drop)

    def _wait_for_headers(self) -> None:
        if self._headers_timer is not None:
            self._headers_timer.cancel()
        timeout = self.limits.header_timeout_s
        self._headers_timer = self.loop.call_later(timeout, self._headers_too_slow)

    def _headers_too_slow(self) -> None:
        self._headers_timer = None
        if self.waiting():
            self.hang_up()

    def _wait_for_body(self) -> None:
        if self._body_timer is not None:
            self._body_timer.cancel()
        self._body_timer = self.loop.call_later(self.limits.body_timeout_s, self._body_too_slow)

    def _body_too_slow(self) -> None:
        """No part of the body for ``body_timeout_s``: drop the connection (the app reading it
        is told the client left), unless it is this server that has stopped reading."""
        self._body_timer = None
        if self.conn.their_state is not h11.SEND_BODY or self.transport.is_closing():
            return
        if self.flow.read_paused:
            self._wait_for_body()  # the app has not taken what came: not the client's fault
            return
        self.drop()


def limited_protocol(
    limits: ConnectionLimits | None = None, answer_headers: dict[str, str] | None = None
) -> type[LimitedH11Protocol]:
    """An HTTP protocol class for ``uvicorn.Config(http=...)`` under ``limits``, counting its
    own connections: make one per server (two servers sharing one would share the counts).
    ``answer_headers``: what the answers uvicorn makes itself carry besides its own (the app's
    security headers: a malformed request's 400 is never the app's)."""
    attributes = {
        "limits": limits or ConnectionLimits(),
        "_open": _Open(),
        "answer_headers": tuple(
            (name.lower().encode("latin-1"), value.encode("latin-1"))
            for name, value in (answer_headers or {}).items()
        ),
    }
    return type("LimitedH11Protocol", (LimitedH11Protocol,), attributes)
