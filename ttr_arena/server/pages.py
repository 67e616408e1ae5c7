"""The author pages: log in with the token, see one's versions, upload, read build logs,
validation games and one's own bots' logs.

A session is a cookie (``ttr_session``: HttpOnly, SameSite=Strict, Path=/, Secure when the
settings say so) holding a random id the server keeps only hashed (:mod:`.auth`); it ends when
its author's token is replaced. Every form carries the session's CSRF token, checked in
constant time before anything else is done; the login form, made before there is a session,
carries a token that must match a cookie of its own (double submit). Everything an author or
a bot wrote (names, reasons, logs) is escaped: the pages run no script at all, and their
Content-Security-Policy allows none.

The upload form carries its CSRF token in its action's query (``/me/upload?csrf=...``), not in
its body: the session, the token, the author's upload slot and the declared size are all
checked from the request's headers and URL, before a byte of the body is read (issue 35, item
6: a form whose token was wrong was read whole first, and 12 stalled ones held 151 MB). A
page that runs no script cannot set a header on a form's request, and a field of the body
can only be read by reading the body; the URL is what the browser sends before it. The token
stays as sound there: it is the session's, random, compared in constant time, and read only
by a page of this origin (another site's page cannot read ours, and SameSite=Strict already
keeps the cookie off its requests); what a URL adds is where it may be written down, and
none of those reaches another site: no Referer leaves (``Referrer-Policy: no-referrer``), an
accepted upload is redirected to a URL without it (a refused one is shown at the form's URL,
in the author's own history), and the proxy's access log is the organiser's, who can read the
sessions anyway. It dies with the session.
"""

from __future__ import annotations

import html
import secrets
import time
import urllib.parse
from collections.abc import Iterable, Sequence
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.formparsers import MultiPartException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from leaderboard.ladder.model import PENDING, AuthorGame, ValidationGame, VersionInfo
from ttr_arena.pages.web import asset
from ttr_arena.server.api import (
    check_length,
    check_running,
    disk_full,
    read_log,
    submit,
    text_response,
)
from ttr_arena.server.auth import SESSION_BYTES, Session, same
from ttr_arena.server.core import (
    AUTHOR_POLICY,
    FORM_OVERHEAD,
    GAME_ID,
    MAX_SEAT,
    ApiError,
    TooLarge,
    Web,
    capped_receive,
    client_address,
    over_cap,
    parse_id,
    size_text,
)

SESSION_COOKIE = "ttr_session"
LOGIN_COOKIE = "ttr_login"  #: the login form's double-submit token
LOGIN_FORM_BYTES = 8 << 10
PENDING_REFRESH_S = 5  #: a page showing a version on its way in reloads itself this often

_STYLE = """
header { display: flex; gap: 16px; align-items: baseline; border-bottom: 1px solid var(--line);
  padding-bottom: 6px; margin-bottom: 10px; }
header .who { margin-left: auto; }
header form { display: inline; }
.state { font-weight: 600; }
.state-active { color: #067647; } .state-failed, .state-disabled { color: var(--fault); }
.state-retired { color: var(--muted); }
.message { padding: 8px 10px; border-radius: 6px; margin: 8px 0; }
.message.error { background: #fef3f2; border: 1px solid #fda29b; }
.message.ok { background: #ecfdf3; border: 1px solid #75e0a7; }
pre { background: var(--panel); border: 1px solid var(--line); padding: 8px; max-height: 480px;
  overflow: auto; white-space: pre-wrap; word-break: break-all; }
td.reason { text-align: left; white-space: normal; max-width: 520px; }
"""


def e(value: object) -> str:
    """``value`` as text in HTML (element content and quoted attributes alike)."""
    return html.escape(str(value), quote=True)


def _when(t: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(t)) if t else ""


def _web(request: Request) -> Web:
    web: Web = request.app.state.web
    return web


def document(
    title: str,
    body: str,
    *,
    session: Session | None = None,
    refresh_s: int | None = None,
) -> str:
    css = asset("base.css") + _STYLE
    who = ""
    if session is not None:
        who = (
            f'<span class="who">{e(session.author.name)} · '
            f'<form method="post" action="/logout">'
            f'<input type="hidden" name="csrf" value="{e(session.csrf)}">'
            '<button type="submit" id="logout">log out</button></form></span>'
        )
    refresh = f'<meta http-equiv="refresh" content="{refresh_s}">\n' if refresh_s else ""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"{refresh}<title>{e(title)}</title>\n<style>\n{css}\n</style>\n</head>\n<body>\n"
        f'<header><strong>TTR Arena</strong><a href="/">league</a>'
        f'<a href="/me">my versions</a>{who}</header>\n'
        f"{body}\n</body>\n</html>\n"
    )


def page(body: str, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(
        body,
        status,
        headers={"Content-Security-Policy": AUTHOR_POLICY, **(headers or {})},
        media_type="text/html; charset=utf-8",
    )


async def session_of(request: Request) -> Session | None:
    """The request's live session, its token still its author's (:meth:`Web.session`)."""
    return await _web(request).session(request.cookies.get(SESSION_COOKIE))


def _to_login() -> Response:
    return RedirectResponse("/login", 303)


def _message(text: str, kind: str = "error") -> str:
    return f'<div class="message {kind}" id="message">{e(text)}</div>'


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]], cls: str = "") -> str:
    """A table of ``rows``: cells are markup (escape what goes in them)."""
    head = "".join(f"<th>{e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(row) + "</tr>\n" for row in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>\n{body}</tbody></table>'


def _td(text: object, cls: str = "") -> str:
    return f'<td class="{cls}">{e(text)}</td>' if cls else f"<td>{e(text)}</td>"


# login and logout ----------------------------------------------------------------------------


def _login_page(
    request: Request, message: str = "", status: int = 200, headers: dict[str, str] | None = None
) -> Response:
    """The login form, with a fresh double-submit token (its cookie set beside it)."""
    token = secrets.token_urlsafe(SESSION_BYTES)
    body = (
        "<h1>Log in</h1>\n"
        + (_message(message) if message else "")
        + '<form method="post" action="/login" class="panel">'
        f'<input type="hidden" name="csrf" value="{e(token)}">'
        '<label>Your token <input type="password" name="token" id="token" '
        'autocomplete="current-password" size="48" required></label> '
        '<button type="submit" id="login">log in</button></form>\n'
        '<p class="muted">The organiser gave you a token (<code>ttr server author add</code>). '
        "It is sent once here; the browser then keeps a session cookie.</p>"
    )
    response = page(document("Log in · TTR Arena", body), status, headers)
    response.set_cookie(
        LOGIN_COOKIE,
        token,
        max_age=3600,
        path="/login",
        httponly=True,
        samesite="strict",
        secure=_web(request).settings.secure_cookies,
    )
    return response


async def login_form(request: Request) -> Response:
    if await session_of(request) is not None:
        return RedirectResponse("/me", 303)
    return _login_page(request)


async def login(request: Request) -> Response:
    web = _web(request)
    try:
        form = await _form(request, LOGIN_FORM_BYTES, "the form is too large")
    except ApiError as error:
        return _login_page(request, str(error), error.status)
    sent = form.get("csrf")
    cookie = request.cookies.get(LOGIN_COOKIE, "")
    if not isinstance(sent, str) or not cookie or not same(sent, cookie):
        return _login_page(request, "the form expired: log in again", 403)
    token = form.get("token")
    author = None
    if isinstance(token, str) and token.strip() and len(token) <= 512:
        token = token.strip()
        author = await web.authenticate(token)
    if author is None or not isinstance(token, str):
        wait = web.login_failed(client_address(request))
        if wait:
            return _login_page(
                request,
                f"too many failed logins: try again in {wait} s",
                429,
                {"Retry-After": str(wait)},
            )
        return _login_page(request, "wrong token", 401)
    session_id, _ = web.sessions.create(author, token)
    response = RedirectResponse("/me", 303)
    response.set_cookie(
        SESSION_COOKIE,
        session_id,
        max_age=int(web.settings.session_hours * 3600),
        path="/",
        httponly=True,
        samesite="strict",
        secure=web.settings.secure_cookies,
    )
    response.delete_cookie(LOGIN_COOKIE, path="/login")
    return response


async def logout(request: Request) -> Response:
    web = _web(request)
    session = await _checked(request, LOGIN_FORM_BYTES)
    if isinstance(session, Response):
        return session
    web.sessions.end(request.cookies.get(SESSION_COOKIE))
    response = RedirectResponse("/login", 303)
    response.delete_cookie(
        SESSION_COOKIE,
        path="/",
        httponly=True,
        samesite="strict",
        secure=web.settings.secure_cookies,
    )
    return response


async def _form(request: Request, cap: int, too_large: str) -> Any:
    """The request's form, its body capped at ``cap`` bytes (ApiError 413 ``too_large``, or
    400, otherwise)."""
    length = request.headers.get("content-length")
    if length is not None and not length.isdigit():
        raise ApiError(400, "a malformed Content-Length")
    if length is not None and int(length) > cap:
        raise ApiError(413, f"{too_large} ({length} bytes)")
    capped = Request(request.scope, capped_receive(request.receive, cap, too_large))
    try:
        form = await capped.form(max_files=1, max_fields=8)
    except TooLarge as error:
        raise ApiError(413, str(error)) from None
    except MultiPartException as error:
        raise ApiError(400, f"a malformed form: {error.message}") from None
    except ClientDisconnect:
        raise ApiError(400, "the form stopped before its end") from None
    return form


def _forbidden(message: str) -> Response:
    return page(document("Forbidden · TTR Arena", "<h1>Forbidden</h1>" + _message(message)), 403)


async def _checked(
    request: Request, cap: int, too_large: str = "the form is too large"
) -> Session | Response:
    """The session of a form POST whose CSRF token is right, or the 403 to answer with."""
    session = await session_of(request)
    if session is None:
        return _forbidden("not logged in (or the session ended): log in again")
    try:
        form = await _form(request, cap, too_large)
    except ApiError as error:
        return await me(request, f"refused: {error}", error.status)
    sent = form.get("csrf")
    if not isinstance(sent, str) or not same(sent, session.csrf):
        await form.close()
        return _forbidden("the form's CSRF token is missing or wrong: reload the page")
    request.state.form = form
    return session


# the author's versions -----------------------------------------------------------------------


def _state(v: VersionInfo) -> str:
    return f'<td class="left state state-{e(v.state)}">{e(v.state)}</td>'


def _pools(v: VersionInfo) -> str:
    if not v.pools:
        return ""
    parts = []
    for p in v.pools:
        rank = f"#{p.rank}" if p.rank is not None else "-"
        parts.append(
            f"{p.variant} {p.players}p: mu {p.mu:.1f} sigma {p.sigma:.1f} {rank}, "
            f"{p.games} games, {p.faulty_games} faulty"
        )
    return "<br>".join(e(text) for text in parts)


def _versions_table(versions: Sequence[VersionInfo]) -> str:
    if not versions:
        return '<p class="muted" id="no-versions">No versions yet: upload your bot below.</p>'
    rows = [
        [
            f'<td class="left"><a href="/me/versions/{v.number}">{e(v.label)}</a></td>',
            _td(v.bot_name, "left bot-name"),
            _state(v),
            f'<td class="left">{_pools(v)}</td>',
            _td(_when(v.uploaded_at)),
            _td(v.reason, "reason"),
        ]
        for v in versions
    ]
    return _table(
        (
            "version",
            "bot",
            "state",
            "pools (rating, rank, games, faulty games)",
            "uploaded",
            "reason",
        ),
        rows,
        "versions",
    )


def _upload_form(session: Session, upload_bytes: int) -> str:
    """The form posts to ``/me/upload?csrf=<the session's token>``: checked before its body."""
    action = "/me/upload?" + urllib.parse.urlencode({"csrf": session.csrf})
    return (
        f'<h2>Upload a new version</h2>\n<form method="post" action="{e(action)}" '
        'enctype="multipart/form-data" class="panel" id="upload-form">'
        '<input type="file" name="archive" id="archive" required '
        'accept=".zip,.tar,.tgz,.tar.gz,application/zip,application/x-tar,application/gzip"> '
        '<button type="submit" id="upload">upload</button></form>\n'
        f'<p class="muted">Your bot folder (with its bot.toml) as a .zip, .tar or .tar.gz, at '
        f"most {e(size_text(upload_bytes))}; or from a terminal: "
        "<code>ttr submit BOT_DIR --server URL</code>.</p>"
    )


async def me(
    request: Request, message: str = "", status: int = 200, session: Session | None = None
) -> Response:
    web = _web(request)
    session = session or await session_of(request)
    if session is None:
        return _to_login()
    versions = await run_in_threadpool(web.backend.versions, session.author)
    season = await web.season()
    frozen = _message("The season is frozen: no new submissions.", "ok") if season.frozen else ""
    body = (
        f"<h1>{e(session.author.name)}: your versions</h1>\n"
        + (_message(message) if message else "")
        + frozen
        + _versions_table(versions)
        + "\n"
        + _upload_form(session, season.upload_bytes)
    )
    pending = any(v.state in PENDING for v in versions)
    return page(
        document(
            f"{session.author.name} · TTR Arena",
            body,
            session=session,
            refresh_s=PENDING_REFRESH_S if pending and not message else None,
        ),
        status,
    )


async def me_upload(request: Request) -> Response:
    """The session, its CSRF token (in the URL), the author's upload slot and the declared
    size, from the headers; only then the body, capped, and the ladder."""
    web = _web(request)
    session = await session_of(request)
    if session is None:
        return _forbidden("not logged in (or the session ended): log in again")
    sent = request.query_params.get("csrf")
    if not sent or not same(sent, session.csrf):
        return _forbidden("the form's CSRF token is missing or wrong: reload the page")
    try:
        async with web.upload_slot(session.author):
            season = await web.season()
            check_running(season)
            cap = season.upload_bytes + FORM_OVERHEAD
            check_length(request, cap, over_cap(season.upload_bytes))
            try:
                form = await _form(request, cap, over_cap(season.upload_bytes))
            except OSError as e:
                raise (disk_full(e) or e) from None
            try:
                archive = form.get("archive")
                if not isinstance(archive, UploadFile) or not archive.filename:
                    choose = "choose an archive to upload (.zip, .tar or .tar.gz)"
                    return await me(request, choose, 400, session)
                submitted = await submit(web, session.author, archive.file)
            finally:
                await form.close()
    except ApiError as error:
        response = await me(request, f"refused: {error}", error.status, session)
        response.headers.update(error.headers)
        return response
    query = urllib.parse.urlencode(
        {"uploaded": "new" if submitted.new else "same", "skipped": len(submitted.skipped)}
    )
    return RedirectResponse(f"/me/versions/{submitted.version.number}?{query}", 303)


def _validations_table(number: int, games: Sequence[ValidationGame]) -> str:
    if not games:
        return '<p class="muted">No validation games yet.</p>'
    rows = [
        [
            _td(f"{g.variant} {g.players}p", "left"),
            _td(
                "ok" if g.ok else "failed",
                "left state state-active" if g.ok else "left state state-failed",
            ),
            _td(_when(g.finished_at)),
            (
                f'<td><a href="/me/versions/{number}/validations/{i}.log">log</a></td>'
                if g.log
                else "<td></td>"
            ),
            _td(g.reason, "reason"),
        ]
        for i, g in enumerate(games)
    ]
    return _table(("pool", "result", "finished", "log", "reason"), rows, "validations")


def _games_table(games: Sequence[AuthorGame]) -> str:
    if not games:
        return '<p class="muted">No ladder games yet.</p>'
    rows = []
    for g in games:
        linkable = GAME_ID.fullmatch(g.game_id) is not None
        replay = (
            f'<a href="/games/{e(g.game_id)}.html">{e(g.game_id)}</a>' if linkable else e(g.game_id)
        )
        log = (
            f'<a href="/me/games/{e(g.game_id)}/seat{g.seat}.log">seat {g.seat} log</a>'
            if g.log and linkable
            else ""
        )
        rows.append(
            [
                f'<td class="left">{replay}</td>',
                _td(_when(g.finished_at)),
                _td(f"{g.variant} {g.players}p", "left"),
                _td(g.seat),
                _td(g.rank),
                _td(g.score),
                _td(g.faults, "fault" if g.faults else ""),
                _td(", ".join(g.opponents), "left"),
                f"<td>{log}</td>",
            ]
        )
    headers = (
        "game (replay)",
        "finished",
        "pool",
        "seat",
        "rank",
        "score",
        "faults",
        "opponents",
        "log",
    )
    return _table(headers, rows, "games")


async def me_version(request: Request) -> Response:
    web = _web(request)
    session = await session_of(request)
    if session is None:
        return _to_login()
    number = parse_id(request.path_params["number"])
    author = session.author
    version = None
    if number is not None:
        version = await run_in_threadpool(web.backend.version, author, number)
    if version is None or number is None:
        return page(
            document("Not found · TTR Arena", _message("no such version"), session=session), 404
        )
    build_log = await run_in_threadpool(web.backend.build_log, author, number) or ""
    validations = await run_in_threadpool(web.backend.validations, author, number) or []
    games = await run_in_threadpool(web.backend.games, author, number, web.settings.games_shown)
    notice = ""
    uploaded = request.query_params.get("uploaded")
    if uploaded in ("new", "same"):
        text = (
            f"uploaded: new version {version.label}"
            if uploaded == "new"
            else f"identical to {version.label}: no new version"
        )
        skipped = request.query_params.get("skipped", "0")
        if skipped.isdigit() and int(skipped):
            text += f" ({int(skipped)} cache or build files left out)"
        notice = _message(text, "ok")
    facts = _table(
        ("bot", "state", "uploaded", "state changed", "files", "size", "content hash"),
        [
            [
                _td(version.bot_name, "left bot-name"),
                _state(version),
                _td(_when(version.uploaded_at)),
                _td(_when(version.updated_at)),
                _td(version.files),
                _td(size_text(version.size)),
                _td(version.content_hash, "left"),
            ]
        ],
    )
    pools = _table(
        ("pool", "mu", "sigma", "rank", "games", "wins", "faulty games"),
        [
            [
                _td(f"{p.variant} {p.players}p", "left"),
                _td(f"{p.mu:.2f}"),
                _td(f"{p.sigma:.2f}"),
                _td("-" if p.rank is None else p.rank),
                _td(p.games),
                _td(p.wins),
                _td(p.faulty_games, "fault" if p.faulty_games else ""),
            ]
            for p in version.pools
        ],
        "pools",
    )
    reason = _message(f"{version.state}: {version.reason}") if version.reason else ""
    body = (
        f"<h1>{e(version.label)} · {e(version.bot_name)}</h1>\n{notice}{reason}{facts}\n"
        f"<h2>Ratings</h2>\n{pools}\n"
        f'<h2>Build log</h2>\n<pre id="build-log">{e(build_log) or "(no build output)"}</pre>\n'
        f"<h2>Validation games</h2>\n{_validations_table(number, validations)}\n"
        f"<h2>Ladder games</h2>\n{_games_table(games)}\n"
    )
    return page(
        document(
            f"{version.label} · {author.name} · TTR Arena",
            body,
            session=session,
            refresh_s=PENDING_REFRESH_S if version.state in PENDING else None,
        )
    )


def _no_log(session: Session) -> Response:
    return page(document("Not found · TTR Arena", _message("no such log"), session=session), 404)


async def me_game_log(request: Request) -> Response:
    web = _web(request)
    session = await session_of(request)
    if session is None:
        return _to_login()
    game_id: str = request.path_params["game_id"]
    seat = parse_id(request.path_params["seat"])
    body = None
    if GAME_ID.fullmatch(game_id) and seat is not None and seat <= MAX_SEAT:
        path = await run_in_threadpool(web.backend.game_log, session.author, game_id, seat)
        body = await run_in_threadpool(read_log, path)
    return _no_log(session) if body is None else text_response(body)


async def me_validation_log(request: Request) -> Response:
    web = _web(request)
    session = await session_of(request)
    if session is None:
        return _to_login()
    number = parse_id(request.path_params["number"])
    index = parse_id(request.path_params["index"])
    body = None
    if number is not None and index is not None:
        path = await run_in_threadpool(web.backend.validation_log, session.author, number, index)
        body = await run_in_threadpool(read_log, path)
    return _no_log(session) if body is None else text_response(body)


ROUTES = [
    Route("/login", login_form, methods=["GET"]),
    Route("/login", login, methods=["POST"]),
    Route("/logout", logout, methods=["POST"]),
    Route("/me", me, methods=["GET"]),
    Route("/me/upload", me_upload, methods=["POST"]),
    Route("/me/versions/{number}", me_version, methods=["GET"]),
    Route("/me/versions/{number}/validations/{index}.log", me_validation_log, methods=["GET"]),
    Route("/me/games/{game_id}/seat{seat}.log", me_game_log, methods=["GET"]),
]
