"""``ttr submit`` and ``ttr submissions``: a competitor's side of the competition server
(docs/server.md). The token is read from ``$TTR_TOKEN`` or a file, never from the command
line (where ``ps`` and the shell's history would show it), and never printed. httpx is
imported only when one of these commands runs."""

from __future__ import annotations

import argparse
import json
import os
import stat
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee.games.protocol import printable
from ttr_arena.cli.options import Subcommands, UserError, positive_float

if TYPE_CHECKING:
    import httpx

TOKEN_ENV = "TTR_TOKEN"
SERVER_ENV = "TTR_SERVER"
DEFAULT_TOKEN_FILE = Path("~/.config/ttr-arena/token")
POLL_S = 1.0  #: how often ``--wait`` asks for the version's state
REQUEST_S = 60.0  #: one request's timeout (an upload of a large archive included)
SETTLED_OK = "active"
SETTLED_BAD = frozenset({"failed", "disabled", "retired"})

_TOKEN_HELP = (
    f"The token comes from --token-file FILE, else ${TOKEN_ENV}, else "
    f"{DEFAULT_TOKEN_FILE} (the organiser gives it to you; it is never taken from the "
    "command line, where other users and your shell history would see it)."
)


def register(sub: Subcommands) -> None:
    """Add ``submit`` and ``submissions``."""
    p = sub.add_parser(
        "submit",
        allow_abbrev=False,
        help="upload a bot folder to a competition server as a new version",
        description=(
            "Pack BOT_DIR (refusing locally what the server would: links, a missing or "
            "invalid bot.toml, a folder over the limits), upload it, and print its version "
            "and whether it is new (identical content is not a new version). With --wait, "
            "follow its build and validation games, printing each change of state, until it "
            "is active (exit 0) or failed or disabled (exit 1, with the reason). Exit 2: "
            "a refused upload or a usage error, with the server's one-line reason. " + _TOKEN_HELP
        ),
    )
    p.add_argument("bot", metavar="BOT_DIR", type=Path, help="the bot folder (with bot.toml)")
    _add_common(p)
    p.add_argument(
        "--wait",
        action="store_true",
        help="follow the build and validation until the version is active, failed or disabled",
    )
    p.add_argument(
        "--timeout",
        type=positive_float,
        default=1800.0,
        metavar="S",
        help="with --wait: give up (exit 1) after S seconds (default 1800)",
    )
    p.set_defaults(func=run_submit)

    p = sub.add_parser(
        "submissions",
        allow_abbrev=False,
        help="list your versions on a competition server",
        description=(
            "Your versions, newest first: state (queued, building, validating, active, "
            "retired, disabled, failed), the reason where it failed or was disabled, and per "
            "rating pool its mu/sigma, rank among the active versions, games and games with "
            "a fault. --json prints the server's answer as it is. " + _TOKEN_HELP
        ),
    )
    _add_common(p)
    p.add_argument("--json", action="store_true", help="print the versions as JSON")
    p.set_defaults(func=run_submissions)


class _NoToken(argparse.Action):
    """``--token`` (or ``--token=...``): refused, without echoing what followed it."""

    def __call__(self, parser: argparse.ArgumentParser, *args: object, **kwargs: object) -> None:
        parser.error(
            f"there is no --token option: the token is read from ${TOKEN_ENV} or a file "
            "(--token-file), never from the command line, where `ps` and your shell's "
            "history would show it"
        )


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--token", nargs="?", action=_NoToken, help=argparse.SUPPRESS)
    p.add_argument(
        "--server",
        metavar="URL",
        default=os.environ.get(SERVER_ENV),
        help=f"the competition server, e.g. https://ttr.example.org (default ${SERVER_ENV})",
    )
    p.add_argument(
        "--token-file",
        metavar="FILE",
        type=Path,
        default=None,
        help=f"a file holding your token (default ${TOKEN_ENV}, else {DEFAULT_TOKEN_FILE})",
    )


# the token and the server --------------------------------------------------------------------


def read_token(token_file: Path | None) -> tuple[str, str]:
    """(the token, where it was read from, for messages). Never the token in a message."""
    if token_file is None:
        env = os.environ.get(TOKEN_ENV, "").strip()
        if env:
            return env, f"${TOKEN_ENV}"
        token_file = DEFAULT_TOKEN_FILE
        missing = (
            f"no token: set ${TOKEN_ENV}, or put it in {DEFAULT_TOKEN_FILE}, or name a file "
            "with --token-file"
        )
    else:
        missing = f"--token-file {token_file}: no such file"
    path = token_file.expanduser()
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise UserError(f"token file {token_file} is not a file")
        if info.st_size > 4096:
            raise UserError(f"token file {token_file} is too large to hold a token")
        text = path.read_text(encoding="utf-8", errors="replace").strip()
    except FileNotFoundError:
        raise UserError(missing) from None
    except OSError as e:
        raise UserError(f"cannot read token file {token_file}: {e.strerror or e}") from None
    if not text or any(c.isspace() for c in text):
        raise UserError(f"token file {token_file} holds no token (one line, the token alone)")
    if info.st_mode & 0o077:
        print(
            f"ttr: warning: token file {token_file} is readable by others (chmod 600 it)",
            file=sys.stderr,
        )
    return text, str(token_file)


def _base(server: str | None) -> str:
    if not server:
        raise UserError(f"no server: pass --server URL (or set ${SERVER_ENV})")
    if not server.startswith(("http://", "https://")):
        raise UserError(f"--server {server!r}: expected an http:// or https:// URL")
    return server.rstrip("/") + "/"


class _Client:
    """The API as the commands use it: each failure a UserError of one line."""

    def __init__(self, server: str | None, token_file: Path | None) -> None:
        import httpx

        self.base = _base(server)
        self.token, self.source = read_token(token_file)
        self.http = httpx.Client(
            base_url=self.base,
            headers={"Authorization": f"Bearer {self.token}", "User-Agent": "ttr-submit"},
            timeout=REQUEST_S,
        )

    def __enter__(self) -> _Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.http.close()

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        import httpx

        try:
            answer = self.http.request(method, path, **kwargs)
        except httpx.TransportError as e:
            raise UserError(f"cannot reach {self.base}: {_why(e)}") from None
        if answer.status_code < 400:
            return answer
        message = _message(answer)
        if answer.status_code == 401:
            raise UserError(
                f"the server refused the token from {self.source} (401: {message}); "
                "check it with the organiser"
            )
        if answer.status_code == 429:
            wait = answer.headers.get("retry-after")
            after = f"; try again in {wait} s" if wait and wait.isdigit() else ""
            raise UserError(f"refused (429): {message}{after}")
        if answer.status_code in (400, 403, 413, 422):
            raise UserError(f"upload refused ({answer.status_code}): {message}")
        raise UserError(f"{method} {path}: the server answered {answer.status_code}: {message}")

    def json(self, method: str, path: str, **kwargs: Any) -> Any:
        answer = self.request(method, path, **kwargs)
        try:
            return answer.json()
        except ValueError:
            raise UserError(f"{method} {path}: the server's answer is not JSON") from None


def _why(error: Exception) -> str:
    text = str(error) or type(error).__name__
    return text.splitlines()[0][:200]


def _message(answer: httpx.Response) -> str:
    """The server's one line (``{"error": ...}``), or the start of whatever it sent."""
    try:
        body = answer.json()
        if isinstance(body, dict) and isinstance(body.get("error"), str):
            return printable(" ".join(body["error"].split())[:500])
    except ValueError:
        pass
    return printable(" ".join(answer.text.split())[:200] or answer.reason_phrase)


def _say(line: str) -> None:
    """One line of what the server told, never a terminal escape (printable)."""
    print(printable(line), flush=True)


# ttr submit ----------------------------------------------------------------------------------


def _size(n: int) -> str:
    if n >= 1 << 20:
        return f"{n / (1 << 20):.1f} MiB"
    if n >= 1 << 10:
        return f"{n / (1 << 10):.1f} KiB"
    return f"{n} bytes"


def _pools(version: dict[str, Any]) -> str:
    return ", ".join(
        f"{p['variant']} {p['players']}p: mu {p['mu']:.1f} sigma {p['sigma']:.1f}"
        for p in version.get("pools", [])
    )


def run_submit(args: argparse.Namespace) -> int:
    from referee.hosting.config import LaunchError
    from referee.hosting.folder import BotFolderError
    from referee.hosting.upload import UploadLimits, pack

    folder: Path = args.bot
    if not folder.is_dir():
        raise UserError(f"{folder}: not a folder (a bot folder holds its bot.toml)")
    with _Client(args.server, args.token_file) as client:
        season = client.json("GET", "api/season")
        cap = season.get("upload_bytes") if isinstance(season, dict) else None
        limits = (
            UploadLimits(upload_bytes=cap) if isinstance(cap, int) and cap > 0 else UploadLimits()
        )
        try:
            data = pack(folder, limits)
        except (LaunchError, BotFolderError) as e:
            raise UserError(f"not uploaded: {e}") from None
        body = client.json(
            "POST",
            "api/submissions",
            content=data,
            headers={"Content-Type": "application/octet-stream"},
        )
        version = body["version"]
        label = version["label"]
        if body.get("new"):
            _say(
                f"{label}: uploaded {version['bot_name']} ({version['files']} files, "
                f"{_size(version['size'])}), a new version: {version['state']}"
            )
        else:
            _say(
                f"{label}: identical to your version {label} (nothing new stored): "
                f"{version['state']}"
            )
        if body.get("skipped"):
            _say(f"{label}: left out (caches, build output): {', '.join(body['skipped'])}")
        if not args.wait:
            return 0
        return _follow(client, version, args.timeout)


def _follow(client: _Client, version: dict[str, Any], timeout_s: float) -> int:
    """Poll the version until it is settled; its outcome as an exit status."""
    label, number = version["label"], version["number"]
    state = version["state"]
    deadline = time.monotonic() + timeout_s
    while True:
        if state == SETTLED_OK:
            _say(f"{label}: active ({_pools(version)})")
            return 0
        if state in SETTLED_BAD:
            reason = version.get("reason") or "no reason given"
            _say(f"{label}: {state}: {' '.join(str(reason).split())}")
            _say(f"{label}: its build log and validation games: {client.base}me/versions/{number}")
            return 1
        if time.monotonic() >= deadline:
            print(
                printable(
                    f"ttr: gave up waiting after {timeout_s:g} s: {label} is still {state} "
                    "(`ttr submissions` shows it later)"
                ),
                file=sys.stderr,
            )
            return 1
        time.sleep(POLL_S)
        version = client.json("GET", f"api/submissions/{number}")
        if version["state"] != state:
            state = version["state"]
            if state != SETTLED_OK and state not in SETTLED_BAD:
                _say(f"{label}: {state}")


# ttr submissions -----------------------------------------------------------------------------


def run_submissions(args: argparse.Namespace) -> int:
    with _Client(args.server, args.token_file) as client:
        body = client.json("GET", "api/submissions")
    if args.json:
        print(json.dumps(body, indent=2))
        return 0
    versions = body.get("versions", [])
    if not versions:
        print(
            printable(
                f"{body.get('author', 'you')}: no versions yet (ttr submit BOT_DIR uploads one)"
            )
        )
        return 0
    pools = [(p["variant"], p["players"]) for p in versions[0].get("pools", [])]
    headers = ["version", "bot", "state", *(f"{v} {n}p" for v, n in pools), "reason"]
    rows = []
    for v in versions:
        cells = [v["label"], v["bot_name"], v["state"]]
        by_pool = {(p["variant"], p["players"]): p for p in v.get("pools", [])}
        for key in pools:
            p = by_pool.get(key)
            if p is None:
                cells.append("")
                continue
            rank = f"#{p['rank']}" if p.get("rank") is not None else "-"
            cells.append(
                f"{p['mu']:.1f}/{p['sigma']:.1f} {rank} {p['games']}g {p['faulty_games']}f"
            )
        cells.append(" ".join(str(v.get("reason", "")).split()))
        rows.append([printable(str(c)) for c in cells])
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers) - 1)]
    for row in [headers, *rows]:
        line = "  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=False))
        print(f"{line}  {row[-1]}".rstrip())
    print("pools: mu/sigma, #rank among the active versions, games, games with a fault")
    return 0
