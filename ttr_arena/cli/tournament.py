"""``ttr tournament run|list|abandon``: league nights, played into a results store. The store
and its tables are cheap and loaded with the parser; the runner, its progress display and Ray
(``--cluster``) are heavy and imported only when a tournament runs, so that ``ttr --help``
and the other commands stay fast."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from leaderboard.store import Store, StoreError, Tournament
from leaderboard.table import (
    Pool,
    leaderboard,
    render_text,
    render_tournaments,
    to_json,
    tournament_title,
    tournaments_json,
)
from referee.games.registry import variants
from ttr_arena.cli.options import (
    Subcommands,
    UserError,
    add_clock_options,
    first_missing,
    known_variant,
    positive,
    sandbox_of,
)

if TYPE_CHECKING:
    from types import FrameType

    from leaderboard.cluster import Cluster
    from leaderboard.runner import Outcome
    from referee.hosting.sandbox import SandboxConfig


def register(sub: Subcommands) -> None:
    """Add ``tournament`` and its actions ``run``, ``list`` and ``abandon``, in that order."""
    p = sub.add_parser(
        "tournament", help="league nights: round-robin tournaments", description="Tournaments."
    )
    tournament_sub = p.add_subparsers(dest="tournament_command", metavar="ACTION", required=True)
    _add_run(tournament_sub)
    _add_list(tournament_sub)
    _add_abandon(tournament_sub)


# run -----------------------------------------------------------------------------------------


def _add_run(sub: Subcommands) -> None:
    p = sub.add_parser(
        "run",
        help="run a round-robin tournament of bot folders and print the leaderboard",
        description=(
            "Validate each bot (one game against copies of the random sample bot; a bot "
            "with any fault is left out), then play every combination of PLAYERS bots in "
            "every seat rotation, all rotations of a combination with the same deal, ROUNDS "
            "times with fresh deals, on WORKERS processes that keep the bots running. Each "
            "finished game goes to the SQLite store at once; kill the run at any time and "
            "finish it with --resume. Prints the leaderboard (TrueSkill) at the end."
        ),
    )
    p.add_argument("bots", nargs="*", metavar="BOT_DIR", help="bot folders (each with bot.toml)")
    p.add_argument("--db", type=Path, required=True, help="the results store (SQLite file)")
    p.add_argument(
        "--variant",
        type=known_variant,
        default=None,
        help=f"ruleset (default usa; available: {', '.join(variants())})",
    )
    p.add_argument("--players", type=positive, default=None, help="seats per game (default 4)")
    p.add_argument(
        "--rounds", type=positive, default=None, help="round robins, fresh deals each (default 1)"
    )
    p.add_argument(
        "--workers",
        type=positive,
        default=None,
        help="parallel games (default: CPU cores; with --cluster, the cluster's CPUs)",
    )
    p.add_argument(
        "--cluster",
        metavar="ADDRESS",
        default=None,
        help="play the games on a Ray cluster (pip install 'ttr-arena[ray]'; "
        "docs/scaling.md): ray://HOST:PORT (Ray Client, port 10001 of the head), auto (the "
        "cluster this machine joined with `ray start`) or local (a fresh Ray on this "
        "machine); the store, records and logs stay on this machine",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=None,
        metavar="N",
        help="base seed of the deals (default: drawn from the OS's randomness; kept in the "
        "store and shown only once the tournament is finished). Game seeds are HMAC-SHA256 "
        "of it under a secret key the store keeps: the same store and N deal the same games "
        "again, another store others, and N alone tells a bot nothing",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="finish the store's unfinished tournament with the settings it began with",
    )
    p.add_argument(
        "--records",
        type=Path,
        default=None,
        help="folder for game records (default: DB's name + '-records', beside it)",
    )
    p.add_argument(
        "--name",
        default=None,
        help="a name for the tournament, shown in its progress, summary, JSON and leaderboard "
        "(default: the date)",
    )
    add_clock_options(p)
    p.add_argument(
        "--reuse-bots",
        action="store_true",
        help="sandboxed: keep a bot's process for a deal it already played in another seat "
        "(faster with short games; the bot could remember that deal: docs/security.md)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object at the end")
    p.set_defaults(func=cmd_tournament_run)


def _records_dir(db: Path) -> Path:
    """Where a tournament's game records go by default: beside the store, named after it."""
    return db.with_name(f"{db.stem}-records")


def cmd_tournament_run(args: argparse.Namespace) -> int:
    if args.resume:
        fixed = [
            f"--{name.replace('_', '-')}"
            for name in ("variant", "players", "rounds", "seed", "records", "name")
            if getattr(args, name) is not None
        ]
        if fixed:
            raise UserError(
                f"{', '.join(fixed)}: a resumed tournament keeps the settings it began with; "
                "leave them out"
            )
        if not args.db.exists():
            raise UserError(
                f"{args.db}: no such results store, so no unfinished tournament to resume "
                "(nothing was created)"
            )
    elif not args.bots:
        raise UserError("give the bot folders to enter (or --resume to finish a tournament)")
    records = args.records if args.records is not None else _records_dir(args.db)

    def on_term(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt  # `kill` stops a run as cleanly as Ctrl-C does

    sandbox = dataclasses.replace(sandbox_of(args), fresh_per_deal=not args.reuse_bots)
    cluster = None
    if args.cluster is not None:  # connected before anything is stored: a bad address stores none
        from leaderboard.cluster import connect
        from leaderboard.runner import TournamentError

        try:
            cluster = connect(args.cluster, args.workers)
        except TournamentError as e:
            raise UserError(str(e)) from None
    workers = args.workers or (cluster.slots if cluster else os.cpu_count() or 1)
    previous_term = signal.signal(signal.SIGTERM, on_term)
    try:
        return _tournament_run(args, workers, records, sandbox, cluster)
    finally:
        signal.signal(signal.SIGTERM, previous_term)  # ``main`` may be called in-process
        if cluster is not None:
            cluster.close()


def _tournament_run(
    args: argparse.Namespace,
    workers: int,
    records: Path,
    sandbox: SandboxConfig,
    cluster: Cluster | None = None,
) -> int:
    from leaderboard.progress import TournamentDisplay
    from leaderboard.runner import TournamentError, keyed_deals, run

    # A run refused before its tournament begins (a bad bot folder, too few bots, records
    # that cannot be written) leaves no new store or records folder behind.
    new_store = not args.db.exists()
    new_records = first_missing(records)
    begun: list[Tournament] = []

    def on_begun(tournament: Tournament) -> None:
        begun.append(tournament)
        spec = tournament.spec
        print(
            f"{'resuming' if args.resume else 'running'} {tournament_title(tournament)}: "
            f"{spec.variant}, {spec.players} players, {spec.rounds} round(s)",
            file=sys.stderr,
            flush=True,
        )
        if not keyed_deals(tournament):
            print(
                f"ttr: note: {tournament_title(tournament)} began before results stores kept "
                "a seed key; its games are dealt as it began, from its base seed by a public "
                "formula: if that seed was given (--seed) or may be known, start a new "
                "tournament instead (docs/security.md)",
                file=sys.stderr,
                flush=True,
            )

    try:
        with Store(args.db) as store:
            display = TournamentDisplay()
            events = display.events()
            events.begun = on_begun
            try:
                with display:
                    outcome = run(
                        store,
                        bot_dirs=args.bots,
                        variant=args.variant or "usa",
                        players=args.players or 4,
                        rounds=args.rounds or 1,
                        base_seed=args.seed,  # None: a secret one
                        workers=workers,
                        resume=args.resume,
                        move_ms=args.move_ms,
                        bank_ms=args.bank_ms,
                        startup_s=args.startup_s,
                        records=str(records),
                        sandbox=sandbox,
                        name=args.name or "",
                        events=events,
                        crews=None if cluster is None else cluster.crew,
                    )
            except KeyboardInterrupt:
                title = tournament_title(begun[0]) if begun else "the tournament"
                print(
                    f"ttr: interrupted; every finished game of {title} is stored in {args.db}: "
                    f"`ttr tournament run --db {args.db} --resume` finishes the tournament",
                    file=sys.stderr,
                )
                return 130
            spec = outcome.tournament.spec
            pools = leaderboard(store, spec.variant, spec.players)
    except (TournamentError, StoreError) as e:
        if not begun:
            _remove_created(args.db if new_store else None, new_records)
        raise UserError(str(e)) from None
    return _print_run(args, outcome, pools, records)


def _print_run(args: argparse.Namespace, outcome: Outcome, pools: list[Pool], records: Path) -> int:
    """What ``ttr tournament run`` prints at the end; exit 1 if any game failed."""
    spec = outcome.tournament.spec
    title = tournament_title(outcome.tournament)
    if args.json:
        summary = {
            "tournament": outcome.tournament.tournament_id,
            "name": spec.name,
            "variant": spec.variant,
            "players": spec.players,
            "rounds": spec.rounds,
            "games": outcome.total,
            "played": outcome.played,
            "stored_before": outcome.stored_before,
            "complete": outcome.complete,
            # Secret until every game is played: shown earlier, it would give away the deals
            # still to come. Afterwards it lets anyone replay the schedule's deals.
            "base_seed": spec.base_seed if outcome.complete else None,
            "left_out": [
                {"bot": v.entrant.name, "version": v.entrant.version, "reason": v.reason}
                for v in outcome.rejected
            ],
            "failed": [{"game_id": k, "error": e} for k, e in outcome.failed],
            **to_json(pools),
        }
        print(json.dumps(summary, indent=2))
    else:
        print(render_text(pools, f"{title}: leaderboard of its pool (every stored game)"), end="")
        for v in outcome.rejected:
            print(f"left out: {v.entrant.label}: {v.reason}")
        print(
            f"{title}: "
            f"{outcome.stored_before + outcome.played}/{outcome.total} games stored in "
            f"{args.db}; records in {records}"
        )
        if outcome.complete:  # the seed stays secret until the last game (see --json)
            print(
                f"base seed {spec.base_seed}: with this store (its seed key), --seed "
                f"{spec.base_seed} deals the same games"
            )
    if outcome.failed:
        print(
            f"ttr: {title}: {len(outcome.failed)} game(s) failed and were not stored; "
            f"`ttr tournament run --db {args.db} --resume` plays them again",
            file=sys.stderr,
        )
        return 1
    return 0


def _remove_created(db: Path | None, records: Path | None) -> None:
    """Undo what a refused run created: the store file (with SQLite's side files) and the
    records folder, each given only if it did not exist before the run."""
    if db is not None:
        for path in (db, *(db.with_name(db.name + s) for s in ("-wal", "-shm", "-journal"))):
            path.unlink(missing_ok=True)
    if records is not None:
        shutil.rmtree(records, ignore_errors=True)


# list ----------------------------------------------------------------------------------------


def _add_list(sub: Subcommands) -> None:
    p = sub.add_parser(
        "list",
        help="list a store's tournaments and their states",
        description=(
            "One line per tournament of the store, oldest first: number, name, state "
            "(unfinished: running, or killed and resumable with --resume; finished; "
            "abandoned), variant, players, rounds, games stored/scheduled ('?' while bots "
            "are being validated) and when it began."
        ),
    )
    p.add_argument("--db", type=Path, required=True, help="the results store (SQLite file)")
    p.add_argument("--json", action="store_true", help="print a JSON list instead of text")
    p.set_defaults(func=cmd_tournament_list)


def cmd_tournament_list(args: argparse.Namespace) -> int:
    try:
        with Store(args.db, create=False) as store:
            rows = tournaments_json(store)
    except StoreError as e:
        raise UserError(str(e)) from None
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print(render_tournaments(rows), end="")
    return 0


# abandon -------------------------------------------------------------------------------------


def _add_abandon(sub: Subcommands) -> None:
    p = sub.add_parser(
        "abandon",
        help="give up an unfinished tournament that cannot be resumed",
        description=(
            "Mark an unfinished tournament abandoned (by default the one --resume would go "
            "on with): --resume no longer picks it and a new tournament may start. Its "
            "finished games stay in the store and keep counting in the ratings; nothing is "
            "deleted. A finished tournament cannot be abandoned."
        ),
    )
    p.add_argument("--db", type=Path, required=True, help="the results store (SQLite file)")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--name", default=None, help="the tournament with this name")
    which.add_argument("--id", type=positive, default=None, help="the tournament with this number")
    p.set_defaults(func=cmd_tournament_abandon)


def cmd_tournament_abandon(args: argparse.Namespace) -> int:
    try:
        with Store(args.db, create=False) as store:
            if args.id is not None:
                tournament = store.tournament(f"#{args.id}")
            elif args.name is not None:
                tournament = store.tournament(args.name, number=False)
            else:
                unfinished = store.unfinished_tournament()
                if unfinished is None:
                    raise UserError(f"{args.db} has no unfinished tournament to abandon")
                tournament = unfinished
            before = tournament.state
            tournament = store.abandon_tournament(tournament.tournament_id)
            games = store.game_counts().get(tournament.tournament_id, 0)
    except StoreError as e:
        raise UserError(str(e)) from None
    if before == "abandoned":
        print(f"{tournament_title(tournament)} was already abandoned")
        return 0
    print(
        f"{tournament_title(tournament)} abandoned: its {games} stored game(s) stay and count "
        f"in the ratings; `ttr tournament run --db {args.db}` can start a new tournament"
    )
    return 0
