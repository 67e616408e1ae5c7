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

from leaderboard import faults as faults_mod
from leaderboard.faults import FaultRule
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
            "times with fresh deals, on WORKERS processes that keep the bots running. A bot "
            "that then faults in too many of its recent games is disabled and its games not "
            "yet begun are skipped (below: disabling a bot that faults). Each "
            "finished game goes to the SQLite store at once; kill the run at any time and "
            "finish it with --resume. Prints the leaderboard (TrueSkill) at the end."
        ),
    )
    p.add_argument(
        "bots",
        nargs="*",
        metavar="BOT_DIR",
        help="bot folders (each with bot.toml), or a sample bot by name: random, greedy, "
        "planner (a folder of that name in the current directory wins)",
    )
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
        help="sandboxed: one process per bot plays every rotation of a deal, instead of one "
        "process per rotation (fewer processes and start-ups; the bot could remember the deal: "
        "docs/security.md)",
    )
    _add_fault_options(p)
    p.add_argument("--json", action="store_true", help="print one JSON object at the end")
    p.set_defaults(func=cmd_tournament_run)


def _fault_rate(text: str) -> float:
    """``--fault-rate``: a share of the games counted, above 0 and at most 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0 < value <= 1:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be above 0 and at most 1, got {text}")
    return value


def _add_fault_options(p: argparse.ArgumentParser) -> None:
    """The fault rule's options (leaderboard/faults.py); None when not given, so that
    ``--resume`` can refuse them (a tournament keeps the rule it began with)."""
    g = p.add_argument_group(
        "disabling a bot that faults",
        "Validation cannot catch a bot that behaves only in its first game. A bot is "
        "disabled once the games among its last WINDOW in which it faulted (a crash, a "
        "timeout, a rejected answer...) reach max(MIN, RATE x the games counted): its games "
        "not yet begun are skipped (stored as skipped, never played), the reason is shown "
        "in the progress, the summary, `ttr leaderboard show` and the league page; its games "
        "already played stay counted. The defaults disable a bot that faults in "
        f"{FaultRule().threshold(faults_mod.WINDOW)} of its last {faults_mod.WINDOW} games, "
        "never one that times out once under load.",
    )
    g.add_argument(
        "--fault-window",
        type=positive,
        default=None,
        metavar="WINDOW",
        help=f"a bot's most recent games counted (default {faults_mod.WINDOW})",
    )
    g.add_argument(
        "--fault-rate",
        type=_fault_rate,
        default=None,
        metavar="RATE",
        help="the share of the games counted that may fault, above 0 and at most 1 "
        f"(default {faults_mod.RATE:g})",
    )
    g.add_argument(
        "--fault-min",
        type=positive,
        default=None,
        metavar="MIN",
        help=f"the fewest faulty games that disable a bot (default {faults_mod.MINIMUM})",
    )
    g.add_argument(
        "--no-disable",
        action="store_true",
        default=None,
        help="never disable a bot for its faults (they stay on its own seats and in the table)",
    )


def _fault_rule(args: argparse.Namespace) -> FaultRule | None:
    """The rule the options ask for; None with ``--no-disable``."""
    given = [
        f"--{name.replace('_', '-')}"
        for name in ("fault_window", "fault_rate", "fault_min")
        if getattr(args, name) is not None
    ]
    if args.no_disable:
        if given:
            raise UserError(f"--no-disable disables no bot: leave out {', '.join(given)}")
        return None
    return FaultRule(
        window=args.fault_window or faults_mod.WINDOW,
        rate=args.fault_rate or faults_mod.RATE,
        minimum=args.fault_min or faults_mod.MINIMUM,
    )


def _records_dir(db: Path) -> Path:
    """Where a tournament's game records go by default: beside the store, named after it."""
    return db.with_name(f"{db.stem}-records")


def cmd_tournament_run(args: argparse.Namespace) -> int:
    from referee.hosting.launcher import resolve_bot

    args.bots = [resolve_bot(b) for b in args.bots]
    if args.resume:
        fixed = [
            f"--{name.replace('_', '-')}"
            for name in (
                "variant",
                "players",
                "rounds",
                "seed",
                "records",
                "name",
                "fault_window",
                "fault_rate",
                "fault_min",
                "no_disable",
            )
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
    faults = _fault_rule(args)
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
        return _tournament_run(args, workers, records, sandbox, cluster, faults)
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
    faults: FaultRule | None = None,
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
                        faults=faults,
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
            "skipped": outcome.skipped,
            "disabled": [
                {"bot": e.name, "version": e.version, "reason": why} for e, why in outcome.disabled
            ],
            "failed": [{"game_id": k, "error": e} for k, e in outcome.failed],
            **to_json(pools),
        }
        print(json.dumps(summary, indent=2))
    else:
        # the table names each bot disabled for its faults, with why (table.disabled_notes)
        print(render_text(pools, f"{title}: leaderboard of its pool (every stored game)"), end="")
        for v in outcome.rejected:
            print(f"left out: {v.entrant.label}: {v.reason}")
        skipped = f" ({outcome.skipped} skipped: a bot in them was disabled)"
        print(
            f"{title}: "
            f"{outcome.stored_before + outcome.played}/{outcome.total} games stored"
            f"{skipped if outcome.skipped else ''} in {args.db}; records in {records}"
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
            "are being validated; and how many were skipped, if a bot in them was disabled "
            "for its faults) and when it began."
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
