"""The competition server's web app: the league page and replays for everyone, the API and
the pages of authors (docs/server.md, "API" and "Author pages").

:func:`make_app` builds the Starlette app over a :class:`~leaderboard.ladder.model.Backend`;
:func:`serve` runs it on uvicorn in the calling (main) thread until SIGINT or SIGTERM;
:func:`running` runs it in a thread on a free loopback port, for tests. The backend's methods
are synchronous (SQLite, the disk): every call goes through Starlette's thread pool, so a slow
one never holds the event loop.

Public: ``/`` (the league page), ``/api/league.json`` (its data, computed at most once per
``refresh_s`` however many read it), ``/games/<id>.html`` (a replay), ``/api/season`` and
``/api/openapi.json``. A seat's log is never public: the league data names none and no public
route serves one; an author reads their own bots' logs through the API or their pages.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator

import uvicorn
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from leaderboard.ladder.model import Backend
from leaderboard.store import StoreError
from ttr_arena.pages.league.server import PAGE_POLICY, NotFound
from ttr_arena.pages.web.limits import limited_protocol
from ttr_arena.pages.web.threaded import serve_until_signal, serving
from ttr_arena.server import api, pages
from ttr_arena.server.api import ApiError, error_response
from ttr_arena.server.core import (
    API_POLICY,
    GAME_ID,
    SECURITY_HEADERS,
    Web,
    WebSettings,
)

__all__ = ["WebSettings", "make_app", "running", "serve"]

TEXT = "text/plain; charset=utf-8"
#: what answers without a policy of its own get (errors, redirects): nothing at all
DEFAULT_POLICY = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"


class SecurityHeaders:
    """Every answer gets :data:`~ttr_arena.server.core.SECURITY_HEADERS`, and a
    Content-Security-Policy (:data:`DEFAULT_POLICY` where the route set none); :class:`_App`
    puts it outside everything, so a 500 gets them too."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    headers[name] = value
                if "content-security-policy" not in headers:
                    headers["Content-Security-Policy"] = DEFAULT_POLICY
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _web(request: Request) -> Web:
    web: Web = request.app.state.web
    return web


def _html(body: bytes) -> Response:
    return Response(
        body,
        headers={"Content-Security-Policy": PAGE_POLICY},
        media_type="text/html; charset=utf-8",
    )


async def league_page(request: Request) -> Response:
    _, body = await _web(request).league.get()
    return _html(body)


async def league_data(request: Request) -> Response:
    body, _ = await _web(request).league.get()
    return Response(
        body, headers={"Content-Security-Policy": API_POLICY}, media_type="application/json"
    )


async def replay(request: Request) -> Response:
    game_id: str = request.path_params["game_id"]
    if GAME_ID.fullmatch(game_id) is None:
        raise NotFound("no such game")
    return _html(await run_in_threadpool(_web(request).site.replay, game_id))


async def favicon(request: Request) -> Response:
    return Response(status_code=204)


def _is_api(request: Request) -> bool:
    return request.url.path.startswith("/api/")


async def _on_api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    if _is_api(request):
        return error_response(exc.status, str(exc), exc.headers)
    return Response(f"{exc.status} {exc}\n", exc.status, exc.headers, media_type=TEXT)


async def _on_http(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404:
        message = (
            "not found: see /api/openapi.json for the API"
            if _is_api(request)
            else ("not found: this server has /, /games/<id>.html, /login, /me and /api/")
        )
    elif exc.status_code == 405:
        message = "method not allowed"
    else:
        message = str(exc.detail)
    headers = dict(exc.headers or {})
    if _is_api(request):
        return error_response(exc.status_code, message, headers)
    return Response(f"{exc.status_code} {message}\n", exc.status_code, headers, media_type=TEXT)


async def _on_crash(request: Request, exc: Exception) -> Response:
    """A 500, in the shape of the route's other errors (uvicorn logs the traceback): never a
    word of the exception to the client. It says ``Connection: close``: uvicorn closes the
    connection after an exception, and a client told nothing would send its next request
    into the close."""
    message = "internal error: the organiser has the details"
    close = {"Connection": "close"}
    if _is_api(request):
        return error_response(500, message, close)
    return Response(f"500 {message}\n", 500, close, media_type=TEXT)


class _App(Starlette):
    """Starlette with :class:`SecurityHeaders` outside its whole stack: the middleware an app
    is given runs inside Starlette's error middleware, whose 500s went without the headers
    (issue 35, item 9)."""

    def build_middleware_stack(self) -> ASGIApp:
        return SecurityHeaders(super().build_middleware_stack())


async def _on_not_found(request: Request, exc: Exception) -> Response:
    status = 404 if isinstance(exc, NotFound) else 503
    if _is_api(request):
        return error_response(status, str(exc))
    return Response(f"{status} {exc}\n", status, media_type=TEXT)


def make_app(backend: Backend, settings: WebSettings | None = None) -> Starlette:
    """The app over ``backend``: public league, the authors' API and pages."""
    settings = settings or WebSettings()
    routes = [
        Route("/", league_page, methods=["GET"]),
        Route("/api/league.json", league_data, methods=["GET"]),
        Route("/games/{game_id}.html", replay, methods=["GET"]),
        Route("/favicon.ico", favicon, methods=["GET"]),
        *api.ROUTES,
        *pages.ROUTES,
    ]
    app = _App(
        routes=routes,
        exception_handlers={
            ApiError: _on_api_error,
            HTTPException: _on_http,
            NotFound: _on_not_found,
            StoreError: _on_not_found,
            500: _on_crash,
        },
    )
    app.state.web = Web(backend, settings)
    return app


# running it ----------------------------------------------------------------------------------


def _config(app: Starlette, host: str, port: int, settings: WebSettings) -> uvicorn.Config:
    """uvicorn under :func:`~ttr_arena.pages.web.limits.limited_protocol`'s limits (issue 35:
    600 idle connections, never sending a byte, held uvicorn's ``limit_concurrency`` of 512
    and every other request was a 503 for as long as they stayed). Now a connection must send
    its headers within ``header_timeout_s`` and its body without a pause of
    ``body_timeout_s``, one address holds at most ``connections_per_address``, and a full
    server makes room from the address holding most: nothing is refused with a 503 any more.

    Proxy headers (``X-Forwarded-For``) are believed only from the proxies the organiser
    named (uvicorn's default believes them from loopback, so a client behind any loopback
    hop was whoever it said, a new address per request, past every per-address limit); the
    client is then the last address in the header that is not one of them."""
    limits = settings.connection_limits()
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http=limited_protocol(
            limits, {**SECURITY_HEADERS, "Content-Security-Policy": DEFAULT_POLICY}
        ),
        ws="none",
        log_level="warning",
        access_log=False,
        lifespan="off",
        server_header=False,
        proxy_headers=bool(settings.proxies),
        forwarded_allow_ips=list(settings.proxies),
        timeout_graceful_shutdown=settings.shutdown_s + 1,  # the protocol hangs up first
        timeout_keep_alive=max(1, math.ceil(settings.header_timeout_s)),
        limit_concurrency=None,  # the connection limits hold it: one request per connection
        h11_max_incomplete_event_size=64 << 10,
    )


def serve(
    backend: Backend,
    host: str = "127.0.0.1",
    port: int = 8080,
    settings: WebSettings | None = None,
    ready: Callable[[str], None] | None = None,
) -> None:
    """Serve the app in this (the main) thread until SIGINT or SIGTERM, then return once open
    requests have finished (at most ``settings.shutdown_s``). ``ready(url)`` is called once
    listening (with the real port when ``port`` is 0). A port that cannot be bound is an
    OSError (uvicorn also logs why on stderr), never a SystemExit."""
    settings = settings or WebSettings()
    serve_until_signal(_config(make_app(backend, settings), host, port, settings), ready)


@contextlib.contextmanager
def running(app: Starlette, host: str = "127.0.0.1", timeout_s: float = 30.0) -> Iterator[str]:
    """``app`` served by a real uvicorn server in a thread on a free port of ``host``; its
    base URL (ending in ``/``). Stopped, and the thread joined, on leaving."""
    web: Web | None = getattr(app.state, "web", None)
    settings = web.settings if web is not None else WebSettings()
    with serving(_config(app, host, 0, settings), "ttr-web", timeout_s) as url:
        yield url
