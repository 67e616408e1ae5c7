"""What the API and the author pages share: the settings, the one object that holds the
backend, the sessions and the rate limits, the upload read with a cap, the public league data
shared by every reader, and the headers every answer carries."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import asdict, dataclass
from typing import IO, Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.types import Message, Receive

from leaderboard.ladder.model import (
    Author,
    AuthorGame,
    Backend,
    PoolStanding,
    SeasonInfo,
    ValidationGame,
    VersionInfo,
)
from ttr_arena.pages.league.data import RECENT
from ttr_arena.pages.league.page import REFRESH_S, page_html
from ttr_arena.pages.league.server import LeagueSite
from ttr_arena.pages.web.limits import ConnectionLimits, address_key
from ttr_arena.server.auth import RateLimit, Session, Sessions

#: The API's JSON: nothing to run, nothing to frame.
API_POLICY = "default-src 'none'; frame-ancestors 'none'"
#: The author pages: their own inline style, forms posted to this server, no script at all.
AUTHOR_POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
#: A build log or a bot's log: whatever the bot printed, shown as inert text.
LOG_POLICY = "default-src 'none'; sandbox; frame-ancestors 'none'"
#: The headers every answer carries (with one of the policies above, or the league page's).
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
BUILD_LOG_TAIL = 8000  #: characters of the build log in a version's JSON (the rest: build-log)
SPOOL_IN_MEMORY = 8 << 20  #: an upload past this spills to an unnamed temporary file
FORM_OVERHEAD = 64 << 10  #: what a multipart form may add to an archive (boundaries, fields)
GAME_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,199}")  #: as ttr_arena.pages.league.data
MAX_SEAT = 99
MAX_ID_DIGITS = 9  #: an id in a URL (a version number, an index, a seat): below 10**9


def parse_id(text: str) -> int | None:
    """``text`` as an id: 1 to 9 ASCII digits, else None (issue 35, item 9: 2**63 overflowed
    SQLite's integers, and ``str.isdigit`` takes '²', which ``int`` refuses: 500s both)."""
    if 0 < len(text) <= MAX_ID_DIGITS and text.isascii() and text.isdigit():
        return int(text)
    return None


@dataclass(frozen=True, slots=True)
class WebSettings:
    """How the web layer behaves; every field has a default an organiser can keep."""

    session_hours: float = 12.0  #: a browser session (log in with the token) lasts this long
    #: cookies only over HTTPS (``Secure``): set it when a TLS proxy is in front
    secure_cookies: bool = False
    upload_per_minute: int = 6  #: uploads per author (API and form together), any 60 s
    uploads_at_once: int = 2  #: an author's uploads being received at once
    login_per_minute: int = 10  #: failed logins (or bad API tokens) per client address
    sessions_per_author: int = 10  #: browser sessions of one author; a new one ends the oldest
    refresh_s: float = REFRESH_S  #: the league data is recomputed at most this often
    recent: int = RECENT  #: recent games on the league page
    shutdown_s: int = 3  #: graceful shutdown: how long open requests may take to finish
    games_shown: int = 100  #: games listed per version on the author pages and by the API
    #: reverse proxies (addresses or networks) whose X-Forwarded-For names the client; from
    #: anyone else the header is ignored, and without one named it is ignored from everyone
    proxies: tuple[str, ...] = ()
    header_timeout_s: float = 10.0  #: a request's headers, from opening or the last answer
    body_timeout_s: float = 20.0  #: the longest pause between two parts of a request's body
    connections: int = 512  #: open at once, from everyone
    connections_per_address: int = 64  #: open from one client address (IPv6: its /64)

    def __post_init__(self) -> None:
        for name in (
            "session_hours",
            "upload_per_minute",
            "login_per_minute",
            "refresh_s",
            "header_timeout_s",
            "body_timeout_s",
        ):
            if not getattr(self, name) > 0:
                raise ValueError(f"WebSettings.{name} must be positive")
        for name in ("recent", "games_shown", "uploads_at_once", "sessions_per_author"):
            if getattr(self, name) < 1:
                raise ValueError(f"WebSettings.{name} must be at least 1")
        self.connection_limits()  # a ValueError naming what is wrong with them

    def connection_limits(self) -> ConnectionLimits:
        """What the server holds each connection to (``ttr_arena.pages.web.limits``)."""
        return ConnectionLimits(
            header_timeout_s=self.header_timeout_s,
            body_timeout_s=self.body_timeout_s,
            per_address=self.connections_per_address,
            total=self.connections,
            stop_s=self.shutdown_s,
            proxies=self.proxies,
        )


class TooLarge(Exception):
    """An upload past the season's cap (413), said in one line."""


class ApiError(Exception):
    """An answer other than success: its status, its one line, extra headers (JSON on the API,
    a page on the author pages)."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.headers = headers or {}


def size_text(n: int) -> str:
    """A byte count as people write it (64 MiB)."""
    for shift, unit in ((30, "GiB"), (20, "MiB"), (10, "KiB")):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} bytes"


def over_cap(cap: int) -> str:
    return f"the upload is over the {size_text(cap)} an upload may be"


def declared_length(request: Request) -> int | None:
    """The request's Content-Length, or None; a malformed one is a ValueError."""
    text = request.headers.get("content-length")
    if text is None:
        return None
    if not text.isdigit():
        raise ValueError(f"Content-Length {text[:40]!r} is not a number")
    return int(text)


async def read_capped(request: Request, cap: int) -> IO[bytes]:
    """The request body, spooled (memory, then an unnamed file), refused with
    :class:`TooLarge` as soon as it passes ``cap`` bytes: by its Content-Length before a byte
    is read, else while it streams in. The caller closes the file."""
    length = declared_length(request)
    if length is not None and length > cap:
        raise TooLarge(f"{over_cap(cap)} ({length} bytes)")
    spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_IN_MEMORY)  # noqa: SIM115 (returned)
    try:
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > cap:
                raise TooLarge(over_cap(cap))
            spool.write(chunk)
        spool.seek(0)
    except BaseException:
        spool.close()
        raise
    return spool


def capped_receive(receive: Receive, cap: int, message: str) -> Receive:
    """``receive`` that raises :class:`TooLarge` (``message``) once the body passes ``cap``
    bytes (a form is parsed from it: Starlette's parser has no cap on a file part)."""
    seen = 0

    async def wrapped() -> Message:
        nonlocal seen
        message = await receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > cap:
                raise TooLarge(message)
        return message

    return wrapped


class PublicLeague:
    """The league page and its data for everyone, from one computation per refresh interval,
    never on a reader's time but the first's: once computed, every reader gets the latest
    computed copy at once, and a reader who finds it older than ``refresh_s`` starts one
    recomputation in the background (stale while revalidating) that later readers get. With
    thousands of games a recomputation takes a good part of a second; 50 readers waiting on
    it were the ladder JSON's slowest answers (bench/server.py). Log links are left out."""

    def __init__(
        self,
        site: LeagueSite,
        refresh_s: float,
        season: Callable[[], SeasonInfo] | None = None,
    ) -> None:
        self.site = site
        self.refresh_s = refresh_s
        #: the ladder's state for the page (paused on a full disk, stopped), asked at each
        #: recomputation: the store cannot say it, the ladder thread can
        self.season = season
        self.computed = 0  #: how many times the data was computed (tests read it)
        self._lock: asyncio.Lock | None = None
        self._refreshing: asyncio.Task[None] | None = None
        self._at = -float("inf")
        self._json = b""
        self._page = b""

    async def get(self) -> tuple[bytes, bytes]:
        """(the JSON, the page)."""
        if not self._json:  # the very first: everyone waits for the one computation
            if self._lock is None:
                self._lock = asyncio.Lock()
            async with self._lock:
                if not self._json:
                    await self._refresh()
        elif time.monotonic() - self._at >= self.refresh_s and self._refreshing is None:
            self._refreshing = asyncio.create_task(self._refresh_later())
        return self._json, self._page

    async def _refresh(self) -> None:
        self._json, self._page = await run_in_threadpool(self._compute)
        self.computed += 1
        self._at = time.monotonic()

    async def _refresh_later(self) -> None:
        try:
            await self._refresh()
        except Exception:  # the store unreadable a moment: keep serving the last copy
            self._at = time.monotonic()
        finally:
            self._refreshing = None

    def _compute(self) -> tuple[bytes, bytes]:
        data, body = self.site.league()
        if self.season is not None:
            s = self.season()
            data = {**data, "ladder": {"state": s.state, "reason": s.reason, "since": s.since}}
            body = dumps(data)
        page = page_html(data, live=True, refresh_s=self.refresh_s).encode()
        return body, page


class Web:
    """Everything a request handler needs, made once per app.

    Its limits only ever turn a failure into a 429 (issue 35, item 1: 110 wrong tokens from 11
    addresses filled a limit shared by all, checked before the token, and every valid token
    was a 429 for a minute): a token is always checked, a valid one always passes, and a wrong
    one counts against its client's address only. The tokens are 256 random bits, so the
    limit is not what stops guessing; it tells a client that keeps failing (a wrong token
    file, a script gone astray) to stop, and never stops anyone else."""

    def __init__(self, backend: Backend, settings: WebSettings) -> None:
        self.backend = backend
        self.settings = settings
        self.sessions = Sessions(settings.session_hours, settings.sessions_per_author)
        self.uploads = RateLimit(settings.upload_per_minute)
        self.failed_logins = RateLimit(settings.login_per_minute)
        #: uploads being received, by author: touched from the event loop only
        self.receiving: dict[int, int] = {}
        self.site = LeagueSite(
            backend.store_path(), refresh_s=settings.refresh_s, recent=settings.recent, logs=False
        )
        self.league = PublicLeague(self.site, settings.refresh_s, backend.season)

    def login_failed(self, address: str) -> int:
        """Count a wrong token from ``address``: 0 while under its limit (a 401), else the
        seconds before its window has room (a 429; the failure is not counted, so the window
        of a client that keeps trying ends a minute after its first failures)."""
        return self.failed_logins.take(address)

    async def authenticate(self, token: str) -> Author | None:
        return await run_in_threadpool(self.backend.authenticate, token)

    async def session(self, session_id: str | None) -> Session | None:
        """The live session of a cookie's id whose token is still its author's, or None; a
        session whose token was replaced (``ttr server author token``) ends here."""
        session = self.sessions.get(session_id)
        if session is None or session_id is None:
            return None
        author = await self.authenticate(self.sessions.token(session_id, session))
        if author is None or author.author_id != session.author.author_id:
            self.sessions.end(session_id)
            return None
        return session

    @contextlib.asynccontextmanager
    async def upload_slot(self, author: Author) -> AsyncIterator[None]:
        """Held while one upload of ``author`` is received and stored: refused (ApiError 429)
        past ``uploads_at_once`` under way or ``upload_per_minute``, before a byte of its
        body is read, so an author's stalled uploads hold at most ``uploads_at_once`` bodies."""
        key = author.author_id
        if self.receiving.get(key, 0) >= self.settings.uploads_at_once:
            raise ApiError(
                429,
                f"{self.settings.uploads_at_once} uploads of yours are under way already: "
                "wait for them to finish",
                {"Retry-After": "5"},
            )
        wait = self.uploads.take(key)
        if wait:
            raise ApiError(
                429,
                f"too many uploads: at most {self.settings.upload_per_minute} a minute; "
                f"try again in {wait} s",
                {"Retry-After": str(wait)},
            )
        self.receiving[key] = self.receiving.get(key, 0) + 1
        try:
            yield
        finally:
            self.receiving[key] -= 1
            if not self.receiving[key]:
                del self.receiving[key]

    async def season(self) -> SeasonInfo:
        return await run_in_threadpool(self.backend.season)


def client_address(request: Request) -> str:
    """Who is asking, as the rate limits count them: the peer's address (the one its named
    proxy forwarded, behind one), an IPv6 client by its /64 (a host may use any address of
    it)."""
    return address_key(request.client.host) if request.client else "?"


# JSON of the model's values ------------------------------------------------------------------


def pool_json(pool: PoolStanding) -> dict[str, Any]:
    return asdict(pool)


def version_json(v: VersionInfo) -> dict[str, Any]:
    return {
        "number": v.number,
        "label": v.label,
        "bot_id": v.bot_id,
        "author": v.author,
        "bot_name": v.bot_name,
        "content_hash": v.content_hash,
        "state": v.state,
        "reason": v.reason,
        "uploaded_at": v.uploaded_at,
        "updated_at": v.updated_at,
        "files": v.files,
        "size": v.size,
        "pools": [pool_json(p) for p in v.pools],
    }


def validation_json(number: int, index: int, g: ValidationGame) -> dict[str, Any]:
    return {
        "index": index,
        "variant": g.variant,
        "players": g.players,
        "ok": g.ok,
        "reason": g.reason,
        "finished_at": g.finished_at,
        "log": f"/api/submissions/{number}/validations/{index}/log" if g.log else None,
    }


def game_json(g: AuthorGame) -> dict[str, Any]:
    return {
        "game_id": g.game_id,
        "finished_at": g.finished_at,
        "variant": g.variant,
        "players": g.players,
        "number": g.number,
        "seat": g.seat,
        "rank": g.rank,
        "score": g.score,
        "faults": g.faults,
        "opponents": list(g.opponents),
        "replay": f"/games/{g.game_id}.html" if GAME_ID.fullmatch(g.game_id) else None,
        "log": f"/api/games/{g.game_id}/logs/{g.seat}"
        if g.log and GAME_ID.fullmatch(g.game_id)
        else None,
    }


def season_json(s: SeasonInfo) -> dict[str, Any]:
    return {
        "name": s.name,
        "pools": [{"variant": v, "players": p} for v, p in s.pools],
        "frozen": s.frozen,
        "submissions_per_day": s.submissions_per_day,
        "active_versions": s.active_versions,
        "upload_bytes": s.upload_bytes,
        "build_timeout_s": s.build_timeout_s,
        "state": s.state,
        "reason": s.reason,
        "since": s.since,
    }


def dumps(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), allow_nan=False).encode()
