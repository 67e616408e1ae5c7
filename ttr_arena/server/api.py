"""The authors' API (JSON, ``Authorization: Bearer <token>``) and its OpenAPI description.

Every error is ``{"error": "<one line>"}`` with its status. An author sees only their own
versions, games and logs: another author's version number, game or seat is a 404 worded
exactly as one that does not exist, so an id tells nothing."""

from __future__ import annotations

import errno
from pathlib import Path
from typing import IO, Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route

from leaderboard.ladder.model import (
    PAUSED,
    STOPPED,
    Author,
    SeasonInfo,
    SubmissionError,
    Submitted,
)
from referee.hosting.upload import UploadError
from ttr_arena.server.auth import bearer
from ttr_arena.server.core import (
    API_POLICY,
    BUILD_LOG_TAIL,
    GAME_ID,
    LOG_POLICY,
    MAX_SEAT,
    ApiError,
    TooLarge,
    Web,
    client_address,
    declared_length,
    dumps,
    game_json,
    parse_id,
    read_capped,
    season_json,
    validation_json,
    version_json,
)

__all__ = ["OPENAPI", "ROUTES", "ApiError", "error_response", "json_response"]


def json_response(value: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(
        dumps(value),
        status,
        headers={"Content-Security-Policy": API_POLICY, **(headers or {})},
        media_type="application/json",
    )


def error_response(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    return json_response({"error": message}, status, headers)


def _web(request: Request) -> Web:
    web: Web = request.app.state.web
    return web


NO_VERSION = "no such version"
NO_LOG = "no such game log"


async def author_of(request: Request) -> Author:
    """The author whose bearer token the request carries; 401 otherwise, or 429 once this
    client has sent too many wrong ones (a right one always passes)."""
    web = _web(request)
    challenge = {"WWW-Authenticate": 'Bearer realm="ttr"'}
    token = bearer(request.headers.get("authorization"))
    if token is None:
        raise ApiError(401, "missing token: send it as 'Authorization: Bearer <token>'", challenge)
    author = await web.authenticate(token)
    if author is None:
        wait = web.login_failed(client_address(request))
        if wait:
            raise ApiError(
                429, f"too many bad tokens: try again in {wait} s", {"Retry-After": str(wait)}
            )
        challenge = {"WWW-Authenticate": 'Bearer realm="ttr", error="invalid_token"'}
        raise ApiError(401, "wrong token (ask the organiser for yours)", challenge)
    return author


def check_length(request: Request, cap: int, too_large: str) -> None:
    """Refuse from its headers a body over ``cap`` (ApiError 413 ``too_large``) or with a
    malformed Content-Length (400), before a byte of it is read."""
    try:
        length = declared_length(request)
    except ValueError as e:
        raise ApiError(400, str(e)) from None
    if length is not None and length > cap:
        raise ApiError(413, f"{too_large} ({length} bytes)")


def check_running(season: SeasonInfo) -> None:
    """Refuse an upload from its headers while the ladder cannot take it: 507 while the disk
    is full (the ladder paused), 503 once its thread has stopped (the server is exiting for
    its supervisor to restart it). Before a byte of the body is read, so none is spooled to
    the very disk that is full."""
    if season.state == PAUSED:
        why = f" ({season.reason})" if season.reason else ""
        raise ApiError(
            507,
            f"the server's disk is full{why}: uploads are refused until it has room again",
            {"Retry-After": "60"},
        )
    if season.state == STOPPED:
        raise ApiError(
            503, "the ladder has stopped and the server is restarting", {"Retry-After": "30"}
        )


def disk_full(error: OSError) -> ApiError | None:
    """The 507 for an upload that filled the disk while it was spooled (the temporary folder
    may be on the data folder's disk), else None."""
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return ApiError(507, "the server's disk is full: try again later", {"Retry-After": "60"})
    return None


async def submit(web: Web, author: Author, data: IO[bytes]) -> Submitted:
    """Shared by the API and the form, once the body is in: ``backend.submit``. Raises
    ApiError with the status and the one line to show."""
    try:
        data.seek(0, 2)
        if data.tell() == 0:
            raise ApiError(400, "the upload is empty: send a .zip, .tar or .tar.gz")
        data.seek(0)
        return await run_in_threadpool(web.backend.submit, author, data)
    except UploadError as e:
        raise ApiError(e.status, str(e)) from None
    except SubmissionError as e:
        raise ApiError(e.status, str(e)) from None


async def post_submission(request: Request) -> Response:
    """The author, their upload slot and the declared size are checked from the headers,
    before a byte of the body is read; the body is then read with the season's cap."""
    web = _web(request)
    author = await author_of(request)
    async with web.upload_slot(author):
        season = await web.season()
        check_running(season)
        try:  # refused from its Content-Length when that says too much, before any byte
            data = await read_capped(request, season.upload_bytes)
        except TooLarge as e:
            raise ApiError(413, str(e)) from None
        except OSError as e:
            raise (disk_full(e) or e) from None
        except ValueError as e:
            raise ApiError(400, str(e)) from None
        except ClientDisconnect:
            raise ApiError(400, "the upload stopped before its end") from None
        try:
            submitted = await submit(web, author, data)
        finally:
            data.close()
    body = {
        "new": submitted.new,
        "skipped": list(submitted.skipped),
        "version": version_json(submitted.version),
    }
    return json_response(body, 201 if submitted.new else 200)


async def list_submissions(request: Request) -> Response:
    web = _web(request)
    author = await author_of(request)
    versions = await run_in_threadpool(web.backend.versions, author)
    return json_response({"author": author.name, "versions": [version_json(v) for v in versions]})


def _id(request: Request, name: str, missing: str) -> int:
    """The path's id ``name``: at most 9 ASCII digits, else a 404 worded as ``missing`` (as
    one that does not exist: issue 35, item 9, 2**63 was a 500)."""
    found = parse_id(request.path_params[name])
    if found is None:
        raise ApiError(404, missing)
    return found


def _number(request: Request) -> int:
    return _id(request, "number", NO_VERSION)


async def get_submission(request: Request) -> Response:
    web = _web(request)
    author = await author_of(request)
    number = _number(request)
    version = await run_in_threadpool(web.backend.version, author, number)
    if version is None:
        raise ApiError(404, NO_VERSION)
    build_log = await run_in_threadpool(web.backend.build_log, author, number) or ""
    validations = await run_in_threadpool(web.backend.validations, author, number) or []
    body = version_json(version)
    body["build_log"] = build_log[-BUILD_LOG_TAIL:]
    body["build_log_truncated"] = len(build_log) > BUILD_LOG_TAIL
    body["validations"] = [validation_json(number, i, g) for i, g in enumerate(validations)]
    return json_response(body)


def text_response(body: bytes) -> Response:
    return Response(
        body,
        headers={"Content-Security-Policy": LOG_POLICY},
        media_type="text/plain; charset=utf-8",
    )


def read_log(path: Path | None) -> bytes | None:
    if path is None:
        return None
    try:
        return path.read_bytes()
    except OSError:
        return None


async def get_build_log(request: Request) -> Response:
    web = _web(request)
    author = await author_of(request)
    log = await run_in_threadpool(web.backend.build_log, author, _number(request))
    if log is None:
        raise ApiError(404, NO_VERSION)
    return text_response(log.encode("utf-8", "replace"))


async def get_validation_log(request: Request) -> Response:
    web = _web(request)
    author = await author_of(request)
    number = _number(request)
    index = _id(request, "index", "no such validation log")
    path = await run_in_threadpool(web.backend.validation_log, author, number, index)
    body = await run_in_threadpool(read_log, path)
    if body is None:
        raise ApiError(404, "no such validation log")
    return text_response(body)


async def list_games(request: Request) -> Response:
    web = _web(request)
    author = await author_of(request)
    number: int | None = None
    text = request.query_params.get("number")
    if text is not None:
        number = parse_id(text)
        if number is None:
            raise ApiError(400, f"number: expected a version number, got {text[:40]!r}")
    limit = web.settings.games_shown
    text = request.query_params.get("limit")
    if text is not None:
        given = parse_id(text)
        if given is None or not 1 <= given <= 1000:
            raise ApiError(400, "limit: expected a whole number from 1 to 1000")
        limit = given
    games = await run_in_threadpool(web.backend.games, author, number, limit)
    return json_response({"games": [game_json(g) for g in games]})


async def get_game_log(request: Request) -> Response:
    web = _web(request)
    author = await author_of(request)
    game_id: str = request.path_params["game_id"]
    seat = parse_id(request.path_params["seat"])
    body = None
    if GAME_ID.fullmatch(game_id) and seat is not None and seat <= MAX_SEAT:
        path = await run_in_threadpool(web.backend.game_log, author, game_id, seat)
        body = await run_in_threadpool(read_log, path)
    if body is None:
        raise ApiError(404, NO_LOG)
    return text_response(body)


async def get_season(request: Request) -> Response:
    season = await _web(request).season()
    return json_response(season_json(season))


async def get_openapi(request: Request) -> Response:
    return json_response(OPENAPI)


ROUTES = [
    Route("/api/season", get_season, methods=["GET"]),
    Route("/api/submissions", post_submission, methods=["POST"]),
    Route("/api/submissions", list_submissions, methods=["GET"]),
    Route("/api/submissions/{number}", get_submission, methods=["GET"]),
    Route("/api/submissions/{number}/build-log", get_build_log, methods=["GET"]),
    Route(
        "/api/submissions/{number}/validations/{index}/log",
        get_validation_log,
        methods=["GET"],
    ),
    Route("/api/games", list_games, methods=["GET"]),
    Route("/api/games/{game_id}/logs/{seat}", get_game_log, methods=["GET"]),
    Route("/api/openapi.json", get_openapi, methods=["GET"]),
]


# OpenAPI -------------------------------------------------------------------------------------


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _text(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"text/plain": {"schema": {"type": "string"}}}}


_ERR = _ref("Error")
_ERRORS = {
    "401": _json(_ERR, "no token, or a wrong one (WWW-Authenticate: Bearer)"),
    "429": _json(_ERR, "too many bad tokens from this address (Retry-After)"),
}
_NUMBER = {"name": "number", "in": "path", "required": True, "schema": {"type": "integer"}}
_SECURE: list[dict[str, list[str]]] = [{"bearer": []}]

OPENAPI: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {
        "title": "TTR Arena competition server",
        "version": "1",
        "description": (
            "Authors upload bot folders (as a .zip, .tar or .tar.gz) and follow their versions "
            "through build, validation and the ladder. Every route but /api/season and "
            "/api/openapi.json takes the author's token as 'Authorization: Bearer <token>'. "
            'Errors are {"error": "<one line>"}. Another author\'s version, game or log is '
            "a 404, exactly as one that does not exist. docs/server.md."
        ),
    },
    "components": {
        "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        "schemas": {
            "Error": {
                "type": "object",
                "required": ["error"],
                "properties": {"error": {"type": "string"}},
            },
            "Pool": {
                "type": "object",
                "properties": {
                    "variant": {"type": "string"},
                    "players": {"type": "integer"},
                    "mu": {"type": "number"},
                    "sigma": {"type": "number"},
                    "games": {"type": "integer"},
                    "wins": {"type": "integer"},
                    "faulty_games": {"type": "integer"},
                    "rank": {"type": ["integer", "null"]},
                },
            },
            "Version": {
                "type": "object",
                "properties": {
                    "number": {"type": "integer"},
                    "label": {"type": "string", "description": "v<number>"},
                    "bot_id": {"type": "integer"},
                    "author": {"type": "string"},
                    "bot_name": {"type": "string"},
                    "content_hash": {"type": "string"},
                    "state": {
                        "type": "string",
                        "enum": [
                            "queued",
                            "building",
                            "validating",
                            "active",
                            "retired",
                            "disabled",
                            "failed",
                        ],
                    },
                    "reason": {"type": "string"},
                    "uploaded_at": {"type": "number"},
                    "updated_at": {"type": "number"},
                    "files": {"type": "integer"},
                    "size": {"type": "integer"},
                    "pools": {"type": "array", "items": _ref("Pool")},
                },
            },
            "Submitted": {
                "type": "object",
                "properties": {
                    "new": {"type": "boolean"},
                    "skipped": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "what the archive held that a bot folder leaves out",
                    },
                    "version": _ref("Version"),
                },
            },
            "Validation": {
                "type": "object",
                "properties": {
                    "index": {"type": "integer"},
                    "variant": {"type": "string"},
                    "players": {"type": "integer"},
                    "ok": {"type": "boolean"},
                    "reason": {"type": "string"},
                    "finished_at": {"type": "number"},
                    "log": {"type": ["string", "null"]},
                },
            },
            "Game": {
                "type": "object",
                "properties": {
                    "game_id": {"type": "string"},
                    "finished_at": {"type": "number"},
                    "variant": {"type": "string"},
                    "players": {"type": "integer"},
                    "number": {"type": "integer"},
                    "seat": {"type": "integer"},
                    "rank": {"type": "integer"},
                    "score": {"type": "integer"},
                    "faults": {"type": "integer"},
                    "opponents": {"type": "array", "items": {"type": "string"}},
                    "replay": {"type": ["string", "null"]},
                    "log": {"type": ["string", "null"]},
                },
            },
        },
    },
    "paths": {
        "/api/season": {
            "get": {
                "summary": "The season: its pools, whether it is frozen, its limits (public)",
                "responses": {
                    "200": _json(
                        {
                            "type": "object",
                            "properties": {
                                "name": {"type": "string"},
                                "pools": {"type": "array"},
                                "frozen": {"type": "boolean"},
                                "submissions_per_day": {"type": "integer"},
                                "active_versions": {"type": "integer"},
                                "upload_bytes": {"type": "integer"},
                            },
                        },
                        "the season",
                    )
                },
            }
        },
        "/api/submissions": {
            "post": {
                "summary": "Upload a bot folder as a new version",
                "description": (
                    "The body is the archive's bytes (.zip, .tar or .tar.gz, told apart by "
                    "their first bytes), at most the season's upload_bytes. Identical content "
                    "is not a new version: 200 with new=false and that version."
                ),
                "security": _SECURE,
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/octet-stream": {
                            "schema": {"type": "string", "format": "binary"}
                        }
                    },
                },
                "responses": {
                    "201": _json(_ref("Submitted"), "a new version, queued for its build"),
                    "200": _json(_ref("Submitted"), "identical to an existing version (new=false)"),
                    "400": _json(_ERR, "not an archive this server reads"),
                    "403": _json(_ERR, "the season is frozen"),
                    "413": _json(_ERR, "over a size or count limit"),
                    "422": _json(_ERR, "an archive that is no acceptable bot folder"),
                    **_ERRORS,
                    "429": _json(_ERR, "too many uploads (a minute, or the day); Retry-After"),
                },
            },
            "get": {
                "summary": "The author's versions, newest first",
                "security": _SECURE,
                "responses": {
                    "200": _json(
                        {
                            "type": "object",
                            "properties": {
                                "author": {"type": "string"},
                                "versions": {"type": "array", "items": _ref("Version")},
                            },
                        },
                        "the versions",
                    ),
                    **_ERRORS,
                },
            },
        },
        "/api/submissions/{number}": {
            "get": {
                "summary": "One version: state, reason, pools, its build log's tail, validations",
                "security": _SECURE,
                "parameters": [_NUMBER],
                "responses": {
                    "200": _json(
                        {
                            "allOf": [
                                _ref("Version"),
                                {
                                    "type": "object",
                                    "properties": {
                                        "build_log": {"type": "string"},
                                        "build_log_truncated": {"type": "boolean"},
                                        "validations": {
                                            "type": "array",
                                            "items": _ref("Validation"),
                                        },
                                    },
                                },
                            ]
                        },
                        "the version",
                    ),
                    "404": _json(_ERR, "no such version of this author"),
                    **_ERRORS,
                },
            }
        },
        "/api/submissions/{number}/build-log": {
            "get": {
                "summary": "The version's whole build output (capped by the server)",
                "security": _SECURE,
                "parameters": [_NUMBER],
                "responses": {
                    "200": _text("the build log"),
                    "404": _json(_ERR, "no such version"),
                    **_ERRORS,
                },
            }
        },
        "/api/submissions/{number}/validations/{index}/log": {
            "get": {
                "summary": "The version's output in one validation game",
                "security": _SECURE,
                "parameters": [
                    _NUMBER,
                    {
                        "name": "index",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "integer"},
                    },
                ],
                "responses": {
                    "200": _text("the log"),
                    "404": _json(_ERR, "no such log"),
                    **_ERRORS,
                },
            }
        },
        "/api/games": {
            "get": {
                "summary": "The author's ladder games, newest first",
                "security": _SECURE,
                "parameters": [
                    {
                        "name": "number",
                        "in": "query",
                        "required": False,
                        "schema": {"type": "integer"},
                        "description": "only this version's games",
                    },
                    {
                        "name": "limit",
                        "in": "query",
                        "required": False,
                        "schema": {"type": "integer", "minimum": 1, "maximum": 1000},
                    },
                ],
                "responses": {
                    "200": _json(
                        {
                            "type": "object",
                            "properties": {"games": {"type": "array", "items": _ref("Game")}},
                        },
                        "the games",
                    ),
                    "400": _json(_ERR, "a malformed parameter"),
                    **_ERRORS,
                },
            }
        },
        "/api/games/{game_id}/logs/{seat}": {
            "get": {
                "summary": "One seat's output in a ladder game: only a seat of this author's",
                "security": _SECURE,
                "parameters": [
                    {
                        "name": "game_id",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "string"},
                    },
                    {"name": "seat", "in": "path", "required": True, "schema": {"type": "integer"}},
                ],
                "responses": {
                    "200": _text("the log"),
                    "404": _json(_ERR, "no such game log (or not this author's seat)"),
                    **_ERRORS,
                },
            }
        },
        "/api/league.json": {
            "get": {
                "summary": "The league page's data: pools, standings, charts, recent games "
                "(public; no log links)",
                "responses": {"200": _json({"type": "object"}, "the league")},
            }
        },
        "/api/openapi.json": {
            "get": {
                "summary": "This description",
                "responses": {"200": _json({"type": "object"}, "OpenAPI 3.1")},
            }
        },
    },
}
