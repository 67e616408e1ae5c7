"""``ttr server run|author|freeze|unfreeze``: the competition server, for its organiser.

``run`` opens the season's data folder (:class:`leaderboard.ladder.service.Ladder`), starts the
ladder thread and serves the web app (``ttr_arena.server``) in the foreground until Ctrl-C or
SIGTERM; the other actions change the data folder beside a running server (SQLite's WAL lets
both write), so an organiser adds an author or freezes the season without a restart.
The heavy imports (the web stack, the ladder) happen only when ``run`` runs."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from leaderboard.store import StoreError
from ttr_arena.cli.options import (
    Subcommands,
    UserError,
    add_sandbox_options,
    int_in,
    known_variant,
    positive,
    positive_float,
    sandbox_of,
)

if TYPE_CHECKING:
    from leaderboard.ladder.season import Season
    from leaderboard.ladder.store import LadderStore

DEFAULT_DATA = Path("season-data")


def register(sub: Subcommands) -> None:
    p = sub.add_parser(
        "server",
        help="run a competition: uploads, builds, a ladder that never stops, author pages",
        description=(
            "The competition server (docs/server.md): authors upload bot versions with "
            "`ttr submit` or on their page; each is built in the jail, validated, and plays a "
            "ladder matched by rating, one TrueSkill pool per variant and player count."
        ),
    )
    server_sub = p.add_subparsers(dest="server_command", metavar="ACTION", required=True)
    _add_run(server_sub)
    _add_author(server_sub)
    for name, freeze in (("freeze", True), ("unfreeze", False)):
        q = server_sub.add_parser(
            name,
            help="close submissions for the finals (the ladder plays on)"
            if freeze
            else "open submissions again",
            description=(
                "Refuse every new submission (403, naming the freeze) while the ladder goes "
                "on playing the versions it has: the finals. Export the standings with "
                "`ttr leaderboard show --db DATA/season.db --format csv`."
                if freeze
                else "Take submissions again after `ttr server freeze`."
            ),
        )
        _data_option(q)
        q.set_defaults(func=_freeze, freeze=freeze)


def _data_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--data",
        type=Path,
        default=DEFAULT_DATA,
        help=f"the season's data folder: store, uploads, builds, records (default {DEFAULT_DATA})",
    )


# run -----------------------------------------------------------------------------------------


def _add_run(sub: Subcommands) -> None:
    p = sub.add_parser(
        "run",
        help="start the server: the ladder and the web app, until Ctrl-C",
        description=(
            "Start everything on this machine: the ladder (builds in the jail, validation "
            "games, matchmaking, games on local worker processes, or on Ray with --cluster) "
            "and the web app (the league page, replays, the API and the authors' pages). "
            "The season file names the pools, clocks and limits (docs/server.md); the flags "
            "override it, and without one they make a season of one pool. Killed at any "
            "moment, it starts again where it stopped: no upload, build, validation or game "
            "is lost or counted twice."
        ),
    )
    p.add_argument(
        "--config",
        type=Path,
        default=None,
        help="the season file (TOML); without it, the season the data folder's store ran "
        "last (a new folder: one pool of --variant/--players, or usa 4p)",
    )
    p.add_argument(
        "--reconfigure",
        action="store_true",
        help="let this start change the pools or clocks of the season the store holds "
        "(refused otherwise, naming the changes: its ratings compare games by them)",
    )
    _data_option(p)
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument(
        "--port", type=int_in(0, 65535), default=8080, help="port (default 8080; 0: any free)"
    )
    p.add_argument("--name", default=None, help="the season's name (default: the file's)")
    p.add_argument(
        "--variant",
        type=known_variant,
        default=None,
        help="without a season file: the one pool's variant (usa)",
    )
    p.add_argument("--players", type=positive, default=None, help="and its seats per game")
    p.add_argument(
        "--workers", type=positive, default=None, help="games at once (default: the season's, 2)"
    )
    p.add_argument("--move-ms", type=positive, default=None, help="time per decision")
    p.add_argument("--bank-ms", type=positive, default=None, help="time bank per game")
    p.add_argument(
        "--cluster",
        default=None,
        metavar="ADDRESS",
        help="play the games on a Ray cluster (as `ttr tournament run --cluster`); the server "
        "stays the only writer of results",
    )
    p.add_argument(
        "--uploads-per-minute",
        type=positive,
        default=6,
        help="uploads an author may make in any 60 s, refused or not (default 6; the season "
        "file's per_day counts accepted versions)",
    )
    p.add_argument(
        "--logins-per-minute",
        type=positive,
        default=10,
        help="failed logins and bad tokens per client address in any 60 s (default 10)",
    )
    p.add_argument(
        "--secure-cookies",
        action="store_true",
        help="mark the authors' session cookies Secure (behind an HTTPS proxy)",
    )
    p.add_argument(
        "--proxy",
        action="append",
        default=[],
        type=_proxy,
        metavar="ADDRESS",
        help="the reverse proxy in front (an address or network; repeatable): its "
        "X-Forwarded-For names the client. Without it the header is ignored from everyone "
        "(docs/server.md, Deploying in public)",
    )
    p.add_argument(
        "--header-timeout",
        type=positive_float,
        default=10.0,
        metavar="S",
        help="a request's headers must arrive within S seconds of connecting (default 10)",
    )
    p.add_argument(
        "--body-timeout",
        type=positive_float,
        default=20.0,
        metavar="S",
        help="a request's body (an upload) may pause at most S seconds, else it is dropped "
        "(default 20)",
    )
    p.add_argument(
        "--connections",
        type=positive,
        default=512,
        metavar="N",
        help="connections open at once (default 512; the process needs a descriptor each)",
    )
    p.add_argument(
        "--connections-per-address",
        type=positive,
        default=64,
        metavar="N",
        help="connections open from one client address, an IPv6 client's /64 (default 64)",
    )
    add_sandbox_options(p)
    p.set_defaults(func=_run)


def _proxy(text: str) -> str:
    from ttr_arena.pages.web.limits import proxy_networks

    try:
        proxy_networks((text,))
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def season_of(args: argparse.Namespace) -> Season:
    """The season this start runs: the file's, or one pool of the flags, or else the one the
    data folder's store holds (a restart without the file runs what ran), or else the
    defaults; the flags put in."""
    from leaderboard.ladder.season import Season, SeasonError, read_season, season_from
    from leaderboard.ladder.season import with_overrides as overrides
    from leaderboard.ladder.service import LadderError, stored_season

    try:
        if args.config is not None:
            season = read_season(args.config)
            if args.variant is not None or args.players is not None:
                raise UserError("--variant/--players: the season file names its pools")
        elif args.variant is not None or args.players is not None:
            if args.variant is None or args.players is None:
                raise UserError("without --config, give both --variant and --players")
            season = season_from({"pools": [{"variant": args.variant, "players": args.players}]})
        else:
            try:
                season = stored_season(args.data) or Season()
            except LadderError as e:
                raise UserError(str(e)) from None
        return overrides(
            season,
            name=args.name,
            workers=args.workers,
            move_ms=args.move_ms,
            bank_ms=args.bank_ms,
        )
    except SeasonError as e:
        raise UserError(str(e)) from None


def _run(args: argparse.Namespace) -> int:
    from leaderboard.ladder.service import Ladder, LadderError
    from ttr_arena.server.app import WebSettings, serve

    season = season_of(args)
    try:
        settings = WebSettings(
            secure_cookies=args.secure_cookies,
            upload_per_minute=args.uploads_per_minute,
            login_per_minute=args.logins_per_minute,
            proxies=tuple(args.proxy),
            header_timeout_s=args.header_timeout,
            body_timeout_s=args.body_timeout,
            connections=args.connections,
            connections_per_address=min(args.connections_per_address, args.connections),
        )
    except ValueError as e:
        raise UserError(str(e)) from None
    if args.online_builds:
        raise UserError("--online-builds: uploads are built offline, always (docs/security.md)")
    sandbox = sandbox_of(args)
    crew = None
    cluster = None
    if args.cluster is not None:
        from leaderboard.cluster import connect

        try:
            cluster = connect(args.cluster, season.workers)
        except Exception as e:
            raise UserError(f"--cluster {args.cluster}: {e}") from None
        crew = cluster.crew
    ladder = Ladder(
        season,
        args.data,
        sandbox=sandbox,
        crew=crew,
        reconfigure=args.reconfigure,
        on_death=_exit_on_death,
    )
    try:
        ladder.open()
    except LadderError as e:
        raise UserError(str(e)) from None
    pools = ", ".join(p.label for p in season.pools)
    print(
        f"ttr server: season {season.name!r} ({pools}) in {ladder.data}, "
        f"{season.workers} game(s) at once" + (f" on Ray ({args.cluster})" if cluster else ""),
        flush=True,
    )
    ladder.start()

    def ready(url: str) -> None:
        print(f"ttr server: listening on {url} (Ctrl-C stops)", flush=True)

    try:
        serve(
            ladder,
            host=args.host,
            port=args.port,
            settings=settings,
            ready=ready,
        )
    finally:
        print("ttr server: stopping (games in progress are finished or cut short)", flush=True)
        ladder.stop()
        if cluster is not None:
            cluster.close()
    if ladder.error is not None:
        error = ladder.error
        print(
            f"ttr server: exiting, the ladder had stopped: {type(error).__name__}: {error}",
            file=sys.stderr,
        )
        return 1
    return 0


def _exit_on_death(error: BaseException) -> None:
    """The ladder thread has died (never for a full disk, which pauses it): stop the web app
    as SIGTERM does, so that ``_run`` exits 1 with the reason and a supervisor starts the
    server again, rather than serve a ladder that no longer plays."""
    os.kill(os.getpid(), signal.SIGTERM)


# authors -------------------------------------------------------------------------------------


def _add_author(sub: Subcommands) -> None:
    p = sub.add_parser("author", help="add authors, list them, give one a new token")
    author_sub = p.add_subparsers(dest="author_command", metavar="ACTION", required=True)
    add = author_sub.add_parser(
        "add",
        help="add an author and print their token, once",
        description=(
            "Add an author and print their token once: only its hash is kept, so a lost "
            "token is replaced (`ttr server author token NAME`), never shown again. Hand it "
            "to the author privately; they put it in ~/.config/ttr-arena/token or TTR_TOKEN."
        ),
    )
    add.add_argument("name", help="1-40 letters, digits, '_', '.', '-'")
    _data_option(add)
    add.set_defaults(func=_author_add)
    token = author_sub.add_parser(
        "token",
        help="give an author a new token (the old one stops working)",
        description="Replace an author's token (a lost or leaked one); prints the new one once.",
    )
    token.add_argument("name")
    _data_option(token)
    token.set_defaults(func=_author_token)
    listing = author_sub.add_parser("list", help="list the authors")
    _data_option(listing)
    listing.set_defaults(func=_author_list)


def _open(data: Path) -> LadderStore:
    from leaderboard.ladder.store import LadderStore

    db = data / "season.db"
    if not db.exists():
        raise UserError(
            f"{data}: no season here yet (start it once with `ttr server run --data {data}`)"
        )
    try:
        return LadderStore(db)
    except StoreError as e:
        raise UserError(str(e)) from None


def _print_token(name: str, token: str) -> None:
    print(token)
    if sys.stdout.isatty():
        print(
            f"(the token of {name}: shown this once; the author saves it in "
            "~/.config/ttr-arena/token, mode 600, or sets TTR_TOKEN)",
            file=sys.stderr,
        )


def _author_add(args: argparse.Namespace) -> int:
    with _open(args.data) as store:
        if store.season_tournament() is None:
            raise UserError(f"{args.data}: the store holds no season")
        try:
            token = store.add_author(args.name)
        except StoreError as e:
            raise UserError(str(e)) from None
    _print_token(args.name, token)
    return 0


def _author_token(args: argparse.Namespace) -> int:
    with _open(args.data) as store:
        try:
            token = store.new_token(args.name)
        except StoreError as e:
            raise UserError(str(e)) from None
    _print_token(args.name, token)
    return 0


def _author_list(args: argparse.Namespace) -> int:
    with _open(args.data) as store:
        authors = store.authors()
        rows = store.version_rows()
    if not authors:
        print("no authors yet (ttr server author add NAME)")
        return 0
    for author in authors:
        mine = [r for r in rows if r.author_id == author.author_id]
        active = ", ".join(f"v{r.number}" for r in mine if r.state == "active") or "none active"
        print(f"{author.name}: {len(mine)} version(s), {active}")
    return 0


def _freeze(args: argparse.Namespace) -> int:
    with _open(args.data) as store:
        if not store.set_frozen(args.freeze):
            raise UserError(f"{args.data}: the store holds no season")
    state = "frozen: submissions are refused" if args.freeze else "open for submissions"
    print(f"ttr server: the season in {args.data} is {state}")
    return 0
