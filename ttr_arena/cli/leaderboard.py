"""``ttr leaderboard show|serve|html``: the ratings of a results store, as a table, a live web
page or a static site. The tables are cheap and loaded with the parser (``--format`` lists
their formats); the web page code is imported only when ``serve`` or ``html`` runs."""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from leaderboard.store import Store, StoreError
from leaderboard.table import FORMATS, leaderboard, render, unfinished_note
from referee.games.registry import matches_variant
from ttr_arena.cli.options import (
    Subcommands,
    UserError,
    check_variant,
    nonnegative,
    positive,
    positive_float,
)
from ttr_arena.pages.league import PageError

if TYPE_CHECKING:
    from types import FrameType


def register(sub: Subcommands) -> None:
    """Add ``leaderboard`` and its actions ``show``, ``serve`` and ``html``, in that order."""
    p = sub.add_parser(
        "leaderboard", help="show ratings from a results store", description="Leaderboards."
    )
    board_sub = p.add_subparsers(dest="leaderboard_command", metavar="ACTION", required=True)
    _add_show(board_sub)
    _add_serve(board_sub)
    _add_html(board_sub)


# show ----------------------------------------------------------------------------------------


def _add_show(sub: Subcommands) -> None:
    p = sub.add_parser(
        "show",
        help="print the leaderboard of every pool in a results store",
        description=(
            "TrueSkill ratings recomputed from the stored games, one table per variant and "
            "player count: rank, conservative rating (mu - 3 sigma), mu, sigma, games, wins "
            "with a 95% interval for the win rate, average score and faults. With "
            "--tournament, only that tournament's games, every bot starting from a fresh "
            "rating. --format csv or markdown exports the same tables. The text ends with a "
            "line on an unfinished tournament: running, or stopped (killed?) and how to "
            "resume or abandon it."
        ),
    )
    p.add_argument("--db", type=Path, required=True, help="the results store (SQLite file)")
    p.add_argument("--variant", default=None, help="only this variant (usa, or usa@1)")
    p.add_argument("--players", type=positive, default=None, help="only games of this size")
    p.add_argument(
        "--tournament",
        metavar="NAME|ID",
        default=None,
        help="rate only this tournament's games (its number, or its name)",
    )
    p.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help="text (default), json, csv (one row per bot and pool) or markdown",
    )
    p.add_argument("--json", action="store_true", help="the same as --format json")
    p.set_defaults(func=cmd_leaderboard_show)


def cmd_leaderboard_show(args: argparse.Namespace) -> int:
    if args.json and args.format not in (None, "json"):
        raise UserError(f"--json is --format json; leave out one of --json, --format {args.format}")
    try:
        with Store(args.db, create=False) as store:
            tournament = None if args.tournament is None else store.tournament(args.tournament)
            tid = None if tournament is None else tournament.tournament_id
            have = store.pools(tid)
            if args.variant is not None and not any(
                matches_variant(args.variant, ident) for ident, _ in have
            ):
                check_variant(args.variant)  # an unknown name is its own error
            if have and (args.variant is not None or args.players is not None):
                _check_pool_exists(have, args.variant, args.players, tournament is not None)
            pools = leaderboard(
                store,
                args.variant,
                args.players,
                tid,
            )
            fmt = "json" if args.json else args.format or "text"
            # Text is for people, who should know the table may still change, or stopped
            # half way; the other formats are data, which a line of prose would break.
            note = unfinished_note(store, tournament) if fmt == "text" else None
    except StoreError as e:
        raise UserError(str(e)) from None
    sys.stdout.write(render(pools, fmt, tournament))
    if note is not None:
        print(note)
    return 0


def _check_pool_exists(
    have: list[tuple[str, int]], variant: str | None, players: int | None, one_tournament: bool
) -> None:
    """A filter that matches none of the store's pools is a mistake worth naming (a typo'd
    player count would otherwise read as "no games recorded"): say what the store does have.
    A store with no games at all keeps its plain "no games recorded"."""
    if any(
        (variant is None or matches_variant(variant, ident))
        and (players is None or players == seats)
        for ident, seats in have
    ):
        return
    wanted = " ".join(
        part
        for part in (variant, None if players is None else f"{players}-player")
        if part is not None
    )
    where = "this tournament" if one_tournament else "this store"
    listed = ", ".join(f"{ident} {seats}p" for ident, seats in have)
    raise UserError(f"no {wanted} games in {where}; its pools: {listed}")


# serve ---------------------------------------------------------------------------------------


def _add_serve(sub: Subcommands) -> None:
    p = sub.add_parser(
        "serve",
        help="serve the league page (tables, rating charts, replays), live while a tournament runs",
        description=(
            "A web page of the store: every pool's table (as leaderboard show), each bot's "
            "rating over the games, head-to-head results, the recent games with their "
            "replays and the bots left out and why. It refreshes itself while a tournament "
            "writes to the store. Read-only: the store is opened read-only and only its "
            "games' records and logs are served (docs/league-page.md). Ctrl-C stops."
        ),
    )
    p.add_argument("--db", type=Path, required=True, help="the results store (SQLite file)")
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1: this machine only; 0.0.0.0 for all)",
    )
    p.add_argument(
        "--port", type=nonnegative, default=8080, help="port (default 8080; 0: any free port)"
    )
    p.add_argument(
        "--refresh",
        type=positive_float,
        default=2.0,
        metavar="SECONDS",
        help="how often the page asks for new results while a tournament runs (default 2)",
    )
    p.add_argument("--recent", type=positive, default=50, help="recent games listed (default 50)")
    p.set_defaults(func=cmd_leaderboard_serve)


def cmd_leaderboard_serve(args: argparse.Namespace) -> int:
    from ttr_arena.pages.league.server import serve

    def on_signal(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt  # `kill` stops the server as cleanly as Ctrl-C does

    # SIGINT too, whatever it was: a background job of a non-interactive shell (a script, CI)
    # starts with SIGINT ignored, and Python would keep ignoring it, so the server could only
    # be killed. Asked to stop, it stops.
    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        serve(args.db, args.host, args.port, refresh_s=args.refresh, recent=args.recent)
    except (StoreError, PageError) as e:
        raise UserError(str(e)) from None
    finally:
        for number, handler in previous.items():
            if handler is not None:  # None: set outside Python, and cannot be put back
                signal.signal(number, handler)
    return 0


# html ----------------------------------------------------------------------------------------


def _add_html(sub: Subcommands) -> None:
    p = sub.add_parser(
        "html",
        help="write the league page as a static folder, to copy to any web host",
        description=(
            "The page of leaderboard serve as files: OUT/index.html (a snapshot, data "
            "inside, no polling) and OUT/games/<game>.html, the replay of each game whose "
            "record renders: every game of the store, or the --recent N newest. Links are "
            "relative. OUT must be new, empty, or written by this command before (it then "
            "replaces the files it wrote)."
        ),
    )
    p.add_argument("--db", type=Path, required=True, help="the results store (SQLite file)")
    p.add_argument("--out", type=Path, required=True, help="the folder to write")
    p.add_argument(
        "--recent",
        type=positive,
        default=None,
        metavar="N",
        help="only the N newest games, listed with their replays (default: every game)",
    )
    p.add_argument("--logs", action="store_true", help="copy the listed games' bot logs too")
    p.set_defaults(func=cmd_leaderboard_html)


def _export_progress() -> Callable[[int, int], None] | None:
    """On a terminal, a line on stderr that counts the replays written (a league's whole
    archive can be thousands of games); nothing when stderr is a file or a pipe."""
    if not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        if done == total or done % 25 == 0:
            end = "\n" if done == total else ""
            print(f"\rwriting replays: {done}/{total}", end=end, file=sys.stderr, flush=True)

    return show


def cmd_leaderboard_html(args: argparse.Namespace) -> int:
    from ttr_arena.pages.league.static import export, human_size

    try:
        done = export(
            args.db, args.out, recent=args.recent, logs=args.logs, progress=_export_progress()
        )
    except (StoreError, PageError) as e:
        raise UserError(str(e)) from None
    except OSError as e:
        raise UserError(f"--out {args.out}: cannot write ({e.strerror or e})") from None
    logs = f", {done.logs} bot log(s)" if args.logs else ""
    print(
        f"wrote {done.out / 'index.html'} with {done.replays} game replay(s){logs} "
        f"({human_size(done.size)}); every link is relative: copy the folder to any web host"
    )
    for game_id, why in done.failed:
        print(f"  no replay for {game_id}: {why}")
    return 0
