"""``ttr leaderboard serve``: the league page over HTTP, read-only, from the standard library.

What is served is a short, fixed list (docs/league-page.md): ``/`` (the page),
``/api/league.json`` (its data, which the page polls), ``/games/<game id>.html`` (a game's
replay, rendered from the record file the store names for that id) and
``/games/<game id>/seat<N>.log`` (that seat's bot log, where one was kept). A URL never names
a file: the game id is looked up in the store, exactly, and only the paths the store holds
for it are read, and only when they lie inside the tournament's records folder
(:func:`ttr_arena.pages.league.data.servable`). Anything else is a 404; methods other than GET and
HEAD are a 405.

The store is opened read-only (``Store(readonly=True)``, SQLite ``mode=ro``) once per request,
so a tournament writing to it meanwhile is never blocked and never written to: WAL lets the
reader see each committed game as it lands.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import sys
import threading
import time
import urllib.parse
from collections import OrderedDict
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from leaderboard.store import Store, StoreError
from ttr_arena.pages.league import PageError
from ttr_arena.pages.league.data import GAME_ID, RECENT, league_json, records_roots, servable
from ttr_arena.pages.league.page import REFRESH_S, page_html

#: The pages may run their own inline script and style and talk to this server, nothing else:
#: even a bot name that slipped past textContent could not load or send anything.
PAGE_POLICY = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'"
)
#: A bot's log is whatever the bot printed: shown as inert text.
LOG_POLICY = "default-src 'none'; sandbox"
REPLAYS_CACHED = 16  #: rendered replays kept in memory (by game id, until the file changes)


class NotFound(Exception):
    """A 404, with the one line the client is told."""


class LeagueSite:
    """What the server answers, apart from HTTP: the page, its data and the replays of one
    results store. Thread-safe; the data is recomputed only when the store has changed
    (:meth:`Store.revision`), so many open pages polling cost one computation per game.
    ``logs=False``: the data names no seat logs and the replays hold none of the lines bots
    wrote (the competition server's public page; its authors see their own bots' logs on
    their own pages)."""

    def __init__(
        self, db: Path, *, refresh_s: float = REFRESH_S, recent: int = RECENT, logs: bool = True
    ) -> None:
        self.db = db
        self.refresh_s = refresh_s
        self.recent = recent
        self.logs = logs
        self._lock = threading.Lock()
        self._league: tuple[tuple[int, ...], dict[str, Any], bytes] | None = None
        self._replay_lock = threading.Lock()
        self._replays: OrderedDict[str, tuple[tuple[str, int, int], bytes]] = OrderedDict()

    def open(self) -> Store:
        return Store(self.db, readonly=True)

    def league(self) -> tuple[dict[str, Any], bytes]:
        """The league data and its JSON bytes, from cache while the store is unchanged and
        each unfinished tournament still judged as it was (running, or stopped: its
        heartbeat gone stale, with no write to the store to say so)."""
        with self._lock, self.open() as store:
            now = store.clock()
            with store.snapshot():
                running = tuple(t.running(now) for t in store.tournaments())
                revision = (*store.revision(), *running)
            if self._league is None or self._league[0] != revision:
                data = league_json(store, self.recent, logs=self.logs, now=now)
                body = json.dumps(data, separators=(",", ":"), allow_nan=False).encode()
                self._league = (revision, data, body)
            return self._league[1], self._league[2]

    def page(self) -> bytes:
        data, _ = self.league()
        return page_html(data, live=True, refresh_s=self.refresh_s).encode()

    def _stored_file(self, game_id: str, seat: int | None) -> Path:
        """The record (``seat`` None) or seat log of the stored game ``game_id``, if it may
        be served; NotFound otherwise."""
        if GAME_ID.fullmatch(game_id) is None:
            raise NotFound("no such game")
        with self.open() as store:
            game = store.game(game_id)
            if game is None:
                raise NotFound(f"no game {game_id} in this store")
            root = records_roots(store).get(game.tournament_id)
        if seat is None:
            path = servable(game.record_path, root)
            what = "record"
        else:
            seats = [s for s in game.seats if s.seat == seat]
            path = servable(seats[0].log_path, root) if seats else None
            what = f"seat {seat} log"
        if path is None:
            raise NotFound(f"game {game_id}: no {what} kept (or its file is gone)")
        return path

    def replay(self, game_id: str) -> bytes:
        """The game's replay page, rendered from its record (cached until the file changes)."""
        path = self._stored_file(game_id, None)
        try:
            stat = path.stat()
        except OSError as e:
            raise NotFound(f"game {game_id}: record unreadable ({e.strerror or e})") from None
        key = (str(path), stat.st_mtime_ns, stat.st_size)
        with self._replay_lock:
            cached = self._replays.get(game_id)
            if cached is not None and cached[0] == key:
                self._replays.move_to_end(game_id)
                return cached[1]
        body = render_replay(path, output=self.logs).encode()
        with self._replay_lock:
            self._replays[game_id] = (key, body)
            self._replays.move_to_end(game_id)
            while len(self._replays) > REPLAYS_CACHED:
                self._replays.popitem(last=False)
        return body

    def log(self, game_id: str, seat: int) -> bytes:
        path = self._stored_file(game_id, seat)
        try:
            return path.read_bytes()
        except OSError as e:
            raise NotFound(f"game {game_id}: log unreadable ({e.strerror or e})") from None


def render_replay(path: Path, *, output: bool) -> str:
    """A record's replay page (ttr_arena.pages.viewer), or NotFound saying why there is none;
    with the lines the bots wrote only where their logs are public too (``output``)."""
    try:
        from ttr_arena.pages.viewer import render_html
    except ImportError:
        raise NotFound(
            "replays need ttr_arena.pages.viewer, which this installation lacks"
        ) from None
    from referee.replay import RecordError
    from ttr_arena.pages.show import ShowError

    try:
        return render_html(path, output=output)
    except (RecordError, ShowError, OSError) as e:
        raise NotFound(f"this game's record cannot be replayed: {e}") from None


_REPLAY = re.compile(r"/games/([^/]+)\.html")
_LOG = re.compile(r"/games/([^/]+)/seat(\d{1,2})\.log")


#: seconds a connection may sit idle, or take to send a request's headers, before it is
#: closed: a page polling every two seconds never waits that long, a slow or idle client does
IDLE_S = 10.0
#: connections served at once; one more is closed as soon as it is accepted, so the server
#: never runs out of descriptors (and never spins on a failing ``accept``)
MAX_CONNECTIONS = 64
#: seconds :meth:`LeagueServer.stop` waits, once it has hung up on every open connection, for
#: their threads to finish what they were doing (rendering a replay, say); past that they are
#: left to end with the process (daemon threads)
STOP_S = 2.0


class _Handler(BaseHTTPRequestHandler):
    site: LeagueSite  # set on the subclass made by make_server
    server_version = "ttr-league"
    protocol_version = "HTTP/1.1"  # keep-alive: a polling page reuses its connection
    timeout = IDLE_S  # on every read: idle keep-alive connections and slow headers alike

    def version_string(self) -> str:
        return self.server_version  # no Python version: nothing for a scanner to go on

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: a page polling every two seconds would bury the terminal."""

    def do_GET(self) -> None:
        self._answer(send_body=True)

    def do_HEAD(self) -> None:
        self._answer(send_body=False)

    def _not_allowed(self) -> None:
        self.close_connection = True  # the request's body, if any, is not read
        self._send(
            HTTPStatus.METHOD_NOT_ALLOWED,
            "text/plain; charset=utf-8",
            b"405 method not allowed: this server only reads (GET, HEAD)\n",
            extra={"Allow": "GET, HEAD"},
        )

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_TRACE = do_CONNECT = _not_allowed

    def _route(self) -> tuple[str, bytes, str]:
        """(content type, body, Content-Security-Policy) for the request; NotFound else."""
        path = self.path.split("?", 1)[0].split("#", 1)[0]
        if path == "/":
            return "text/html; charset=utf-8", self.site.page(), PAGE_POLICY
        if path == "/api/league.json":
            return "application/json", self.site.league()[1], PAGE_POLICY
        match = _REPLAY.fullmatch(path)
        if match:
            game_id = urllib.parse.unquote(match[1])
            return "text/html; charset=utf-8", self.site.replay(game_id), PAGE_POLICY
        match = _LOG.fullmatch(path)
        if match:
            game_id = urllib.parse.unquote(match[1])
            body = self.site.log(game_id, int(match[2]))
            return "text/plain; charset=utf-8", body, LOG_POLICY
        raise NotFound("not found: this server has /, /api/league.json and /games/<id>.html")

    def _answer(self, *, send_body: bool) -> None:
        try:
            if self.path == "/favicon.ico":  # asked for by browsers: none, and no error
                self._send(HTTPStatus.NO_CONTENT, None, b"", send_body=send_body)
                return
            try:
                kind, body, policy = self._route()
            except NotFound as e:
                message = f"404 {e}\n".encode()
                self._send(HTTPStatus.NOT_FOUND, "text/plain; charset=utf-8", message, send_body)
                return
            except StoreError as e:  # the store was removed or replaced while serving
                message = f"503 {e}\n".encode()
                self._send(
                    HTTPStatus.SERVICE_UNAVAILABLE, "text/plain; charset=utf-8", message, send_body
                )
                return
            self._send(
                HTTPStatus.OK, kind, body, send_body, extra={"Content-Security-Policy": policy}
            )
        except (ConnectionError, TimeoutError):
            self.close_connection = True  # the client went away: nothing to report

    def _send(
        self,
        status: HTTPStatus,
        kind: str | None,
        body: bytes,
        send_body: bool = True,
        extra: dict[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        if kind is not None:
            self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if send_body and body:
            self.wfile.write(body)


class LeagueServer(ThreadingHTTPServer):
    daemon_threads = True  # Ctrl-C does not wait for a browser's idle keep-alive connection
    block_on_close = False  # :meth:`stop` hangs up and waits, boundedly, itself
    #: the listen backlog: socketserver's 5 drops the handshakes of a burst of clients (each
    #: then waits a second or more to retry) faster than the loop accepts and sheds them
    request_queue_size = 128

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        #: the connections being served. A socket leaves this set, under its lock, before it
        #: is closed, so :meth:`stop` never shuts down a descriptor another socket reuses.
        self._open: set[socket.socket] = set()
        self._open_changed = threading.Condition()

    def process_request(self, request: Any, client_address: Any) -> None:
        """A thread per connection, at most :data:`MAX_CONNECTIONS` at once; past that the
        connection is closed at once (the page's next poll gets through)."""
        if not self._slots.acquire(blocking=False):
            self.shutdown_request(request)
            return
        with self._open_changed:
            self._open.add(request)
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._forget(request)
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def shutdown_request(self, request: Any) -> None:
        self._forget(request)
        super().shutdown_request(request)

    def _forget(self, request: Any) -> None:
        with self._open_changed:
            self._open.discard(request)
            self._open_changed.notify_all()

    def stop(self, wait_s: float = STOP_S) -> None:
        """Stop listening, hang up on every open connection (a thread blocked reading an idle
        keep-alive connection or a slow request, or writing to a client that does not read,
        returns at once) and wait up to ``wait_s`` seconds for their threads to close them.
        Never longer, whatever the clients do: Ctrl-C and SIGTERM stop the server promptly."""
        self.server_close()
        deadline = time.monotonic() + wait_s
        with self._open_changed:
            for connection in self._open:
                with contextlib.suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)
            while self._open and (left := deadline - time.monotonic()) > 0:
                self._open_changed.wait(left)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """One line, never a traceback: a client that hung up is not the server's problem."""
        error = sys.exc_info()[1]
        if isinstance(error, ConnectionError | TimeoutError):
            return
        print(f"ttr: request from {client_address[0]} failed: {error!r}", file=sys.stderr)


def make_server(site: LeagueSite, host: str = "127.0.0.1", port: int = 8080) -> LeagueServer:
    """A server bound to ``host:port`` (port 0: a free one), not yet serving."""
    handler = type("LeagueHandler", (_Handler,), {"site": site})
    server_class: Callable[..., LeagueServer] = LeagueServer
    if ":" in host:
        server_class = type("LeagueServer6", (LeagueServer,), {"address_family": socket.AF_INET6})
    return server_class((host, port), handler)


def url_of(server: ThreadingHTTPServer) -> str:
    host, port = server.server_address[:2]
    shown = host if isinstance(host, str) else host.decode()
    return f"http://[{shown}]:{port}/" if ":" in shown else f"http://{shown}:{port}/"


def serve(
    db: Path,
    host: str = "127.0.0.1",
    port: int = 8080,
    *,
    refresh_s: float = REFRESH_S,
    recent: int = RECENT,
) -> None:
    """Serve the league page of ``db`` until Ctrl-C. The store is checked first, so a wrong
    file is reported before anything listens; the URL is printed once listening."""
    site = LeagueSite(db, refresh_s=refresh_s, recent=recent)
    with site.open():
        pass  # StoreError: a missing, foreign or too old store, said in one line
    try:
        server = make_server(site, host, port)
    except OSError as e:
        raise PageError(f"cannot listen on {host}:{port} ({e.strerror or e})") from None
    print(f"serving {url_of(server)} (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    print("stopped", flush=True)
