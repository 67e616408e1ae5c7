"""``ttr leaderboard serve``: the league page over HTTP, read-only, on the competition server's
web stack (a Starlette app on uvicorn, ``ttr_arena.pages.web.threaded``).

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

Its connections are held to :class:`~ttr_arena.pages.web.limits.ConnectionLimits` (issue 34):
one client that opens connections and sends nothing holds at most its share of them, and only
until the header timeout, so the page stays up for everyone else.
"""

from __future__ import annotations

import contextlib
import json
import math
import socket
import sys
import threading
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from leaderboard.store import Store, StoreError
from ttr_arena.pages.league import PageError
from ttr_arena.pages.league.data import GAME_ID, RECENT, league_json, records_roots, servable
from ttr_arena.pages.league.page import REFRESH_S, page_html
from ttr_arena.pages.web.limits import ConnectionLimits, limited_protocol
from ttr_arena.pages.web.threaded import serve_until_signal, serving

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


# serving it ----------------------------------------------------------------------------------

TEXT = "text/plain; charset=utf-8"
HTML = "text/html; charset=utf-8"
#: what every answer carries: never cached (the data changes as games land), its type never
#: guessed, and no page of this server named to another site
HEADERS = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
#: the listen backlog: a burst of clients waits in it instead of having its handshakes dropped
#: (each such client waits a second or more to retry)
BACKLOG = 128


def _answer(
    body: bytes,
    status: int = 200,
    kind: str | None = TEXT,
    policy: str | None = None,
    extra: dict[str, str] | None = None,
) -> Response:
    headers = dict(HEADERS)
    if policy is not None:
        headers["Content-Security-Policy"] = policy
    headers.update(extra or {})
    return Response(body, status, headers, media_type=kind)


def _site(request: Request) -> LeagueSite:
    site: LeagueSite = request.app.state.site
    return site


# The store and the records are read on Starlette's thread pool: a replay being rendered never
# holds the event loop, and so never the other clients.


async def _page(request: Request) -> Response:
    body = await run_in_threadpool(_site(request).page)
    return _answer(body, kind=HTML, policy=PAGE_POLICY)


async def _data(request: Request) -> Response:
    _, body = await run_in_threadpool(_site(request).league)
    return _answer(body, kind="application/json", policy=PAGE_POLICY)


async def _replay(request: Request) -> Response:
    game_id: str = request.path_params["game_id"]
    body = await run_in_threadpool(_site(request).replay, game_id)
    return _answer(body, kind=HTML, policy=PAGE_POLICY)


async def _log(request: Request) -> Response:
    game_id: str = request.path_params["game_id"]
    seat: int = request.path_params["seat"]
    body = await run_in_threadpool(_site(request).log, game_id, seat)
    return _answer(body, policy=LOG_POLICY)


async def _favicon(request: Request) -> Response:
    """Asked for by browsers: none, and no error."""
    return _answer(b"", 204, kind=None)


async def _on_not_found(request: Request, exc: Exception) -> Response:
    return _answer(f"404 {exc}\n".encode(), 404)


async def _on_store_error(request: Request, exc: Exception) -> Response:
    """The store was removed or replaced while serving."""
    return _answer(f"503 {exc}\n".encode(), 503)


async def _on_http(request: Request, exc: Exception) -> Response:
    """Starlette's 404 and 405, said as this server says them; a method other than GET and
    HEAD is a 405 whatever the path."""
    if request.method not in ("GET", "HEAD"):
        message = b"405 method not allowed: this server only reads (GET, HEAD)\n"
        return _answer(message, 405, extra={"Allow": "GET, HEAD"})
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404:
        message = b"404 not found: this server has /, /api/league.json and /games/<id>.html\n"
        return _answer(message, 404)
    return _answer(f"{exc.status_code} {exc.detail}\n".encode(), exc.status_code)


class _OneLine:
    """A request that failed is one line on stderr and a 500, never a traceback (Starlette
    would answer, then raise the error again for uvicorn to log with its traceback)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = False

        async def send_noting_start(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, send_noting_start)
        except Exception as error:
            client = (scope.get("client") or ("?",))[0]
            print(f"ttr: request from {client} failed: {error!r}", file=sys.stderr)
            if not started:
                await _answer(b"500 this request failed\n", 500)(scope, receive, send)


def make_app(site: LeagueSite) -> Starlette:
    """The league page's routes (the module's docstring) over ``site``."""
    get = ["GET"]  # and HEAD, which Starlette adds to every GET route
    app = Starlette(
        routes=[
            Route("/", _page, methods=get),
            Route("/api/league.json", _data, methods=get),
            Route("/games/{game_id}.html", _replay, methods=get),
            Route("/games/{game_id}/seat{seat:int}.log", _log, methods=get),
            Route("/favicon.ico", _favicon, methods=get),
        ],
        exception_handlers={
            NotFound: _on_not_found,
            StoreError: _on_store_error,
            HTTPException: _on_http,
        },
    )
    app.router.redirect_slashes = False  # any other path is a 404, never a redirect
    app.add_middleware(_OneLine)
    app.state.site = site
    return app


def _config(
    site: LeagueSite, host: str, port: int, limits: ConnectionLimits | None
) -> uvicorn.Config:
    """uvicorn much as the competition server runs it (no access log, no Server header, a
    request's headers 64 KiB at most), quieter (a malformed request is answered, not logged),
    and under :func:`~ttr_arena.pages.web.limits.limited_protocol`'s limits: one client holds
    its share of the connections, and only while it uses them."""
    limits = limits or ConnectionLimits()
    return uvicorn.Config(
        make_app(site),
        host=host,
        port=port,
        http=limited_protocol(limits),
        ws="none",
        log_level="error",
        access_log=False,  # a page polling every two seconds would bury the terminal
        lifespan="off",
        server_header=False,  # nothing for a scanner to go on
        proxy_headers=False,
        backlog=BACKLOG,
        timeout_keep_alive=max(1, math.ceil(limits.header_timeout_s)),
        timeout_graceful_shutdown=math.ceil(limits.stop_s) + 1,  # the protocol hangs up first
        h11_max_incomplete_event_size=64 << 10,
    )


@contextlib.contextmanager
def running(
    site: LeagueSite,
    host: str = "127.0.0.1",
    limits: ConnectionLimits | None = None,
    timeout_s: float = 30.0,
) -> Iterator[str]:
    """``site`` served as :func:`serve` serves it, on a thread, on a free port of ``host``: its
    base URL (ending in ``/``). Stopped, and the thread joined, on leaving."""
    with serving(_config(site, host, 0, limits), "ttr-league", timeout_s) as url:
        yield url


def _listen(host: str, port: int) -> socket.socket:
    """The listening socket, bound here rather than by uvicorn, so that a port in use is one
    line saying why (uvicorn would log it too, and exit)."""
    try:
        if ":" in host:  # IPv6; "::" takes IPv4 clients too, as the system would by default
            dual = socket.has_dualstack_ipv6()
            family = socket.AF_INET6
            return socket.create_server(
                (host, port), family=family, backlog=BACKLOG, dualstack_ipv6=dual
            )
        return socket.create_server((host, port), backlog=BACKLOG)
    except OSError as e:
        raise PageError(f"cannot listen on {host}:{port} ({e.strerror or e})") from None


def serve(
    db: Path,
    host: str = "127.0.0.1",
    port: int = 8080,
    *,
    refresh_s: float = REFRESH_S,
    recent: int = RECENT,
    limits: ConnectionLimits | None = None,
) -> None:
    """Serve the league page of ``db`` until SIGINT or SIGTERM (Ctrl-C). The store is checked
    first, so a wrong file is reported before anything listens; the URL is printed once
    listening."""
    site = LeagueSite(db, refresh_s=refresh_s, recent=recent)
    with site.open():
        pass  # StoreError: a missing, foreign or too old store, said in one line
    listener = _listen(host, port)

    def ready(url: str) -> None:
        print(f"serving {url} (Ctrl-C stops)", flush=True)

    try:
        serve_until_signal(_config(site, host, port, limits), ready, [listener])
    except KeyboardInterrupt:  # a signal just before uvicorn took them, or just after
        pass
    except OSError as e:  # it did not start, though listening
        raise PageError(str(e)) from None
    finally:
        listener.close()
    print("stopped", flush=True)
