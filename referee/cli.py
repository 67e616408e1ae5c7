"""The ``ttr`` command line. User errors get one line naming the problem and exit status 2;
no tracebacks for things a user can fix."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from referee.family import AnyRuleset, family_of, load, variants
from referee.rules import RulesetError

if TYPE_CHECKING:
    from referee.sandbox import SandboxConfig


class UserError(Exception):
    """Something the user can fix; printed as one line."""


def _fail(message: str) -> NoReturn:
    print(f"ttr: error: {message}", file=sys.stderr)
    raise SystemExit(2)


class _Parser(argparse.ArgumentParser):
    """argparse, with usage errors reported like every other user error: one line."""

    def error(self, message: str) -> NoReturn:
        _fail(f"{message} (see `{self.prog} --help`)")


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _load(variant: str) -> AnyRuleset:
    try:
        return load(variant)
    except RulesetError as e:
        raise UserError(str(e)) from None


def format_outcome(ruleset: AnyRuleset, result: Any, names: list[str] | None = None) -> str:
    """A plain-text score table with every scoring component the ruleset uses (its family's
    columns), so a bot author can see why a score is what it is: the columns add up to the
    total."""
    columns: list[tuple[str, int, list[str]]] = []  # header, width, cells (sorted seat order)
    seats = sorted(result.seats, key=lambda s: (s.rank, s.seat))

    def column(header: str, cells: list[str], left: bool = False) -> None:
        width = max(len(header), *(len(c) for c in cells))
        columns.append((header, -width if left else width, cells))

    column("rank", [str(s.rank) for s in seats])
    column("seat", [names[s.seat] if names else f"seat {s.seat}" for s in seats], left=True)
    column("total", [str(s.total) for s in seats])
    for header, cell in family_of(ruleset).columns(ruleset):
        column(header, [cell(s) for s in seats])

    def row(cells: list[str]) -> str:
        return "  ".join(
            f"{cell:<{-w}}" if w < 0 else f"{cell:>{w}}"
            for cell, (_, w, _) in zip(cells, columns, strict=True)
        ).rstrip()

    header = row([h for h, _, _ in columns])
    lines = [header, "-" * len(header)]
    lines.extend(row([cells[i] for _, _, cells in columns]) for i in range(len(seats)))
    return "\n".join(lines)


def outcome_breakdown(ruleset: AnyRuleset, score: Any) -> dict[str, object]:
    """One seat's score components for ``--json`` output (what the total is made of)."""
    return family_of(ruleset).breakdown(ruleset, score)


def cmd_selfplay(args: argparse.Namespace) -> int:
    from referee.selfplay import run_selfplay

    ruleset = _load(args.variant)
    if not ruleset.min_players <= args.players <= ruleset.max_players:
        raise UserError(
            f"{ruleset.name} is for {ruleset.min_players}-{ruleset.max_players} players, "
            f"not {args.players}"
        )
    show_progress = not args.json and sys.stderr.isatty() and args.games >= 50

    def progress(done: int) -> None:
        if done % 10 == 0 or done == args.games:
            print(f"\r{done}/{args.games} games", end="", file=sys.stderr, flush=True)

    stats, results = run_selfplay(
        ruleset, args.players, args.games, args.seed, progress if show_progress else None
    )
    if show_progress:
        print(file=sys.stderr)
    if args.json:
        print(json.dumps(asdict(stats), sort_keys=True))
        return 0
    if args.games == 1:
        game = results[0]
        print(
            f"{ruleset.title}: {args.players} random players, seed {args.seed}, "
            f"{game.final.turn} turns, ended by {game.final.end_reason.replace('_', ' ')}"
        )
        print(format_outcome(ruleset, game.outcome))
        print()
    print(
        f"{stats.games} game(s) of {stats.variant}, {stats.players} players, "
        f"in {stats.seconds:.3f} s on one core: {stats.games_per_s:.1f} games/s"
    )
    print(
        f"turns/game {stats.turns_per_game}  decisions/game {stats.decisions_per_game}  "
        f"score mean {stats.mean_score} (sd {stats.stdev_score}, min {stats.min_score}, "
        f"max {stats.max_score})  winner mean {stats.mean_winning_score}"
    )
    return 0


def cmd_variants(args: argparse.Namespace) -> int:
    rulesets = [_load(name) for name in variants()]
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "name": r.name,
                        "version": r.version,
                        "ident": r.ident,
                        "title": r.title,
                        "min_players": r.min_players,
                        "max_players": r.max_players,
                        "description": r.description,
                    }
                    for r in rulesets
                ]
            )
        )
        return 0
    name_w = max(len(r.ident) for r in rulesets)
    title_w = max(len(r.title) for r in rulesets)
    print(f"{'variant':<{name_w}}  {'players':<7}  {'title':<{title_w}}  description")
    for r in rulesets:
        players = f"{r.min_players}-{r.max_players}"
        print(f"{r.ident:<{name_w}}  {players:<7}  {r.title:<{title_w}}  {r.description}")
    return 0


def _bot_label(name: str, version: str) -> str:
    return f"{name} {version}".strip()


def cmd_play(args: argparse.Namespace) -> int:
    import secrets
    import time
    from contextlib import ExitStack

    from referee.launcher import LaunchedBot, LaunchError, launch
    from referee.match import Clock, SeatBot, play_match

    ruleset = _load(args.variant)
    low, high = max(2, ruleset.min_players), min(5, ruleset.max_players)
    if not low <= len(args.bots) <= high:
        raise UserError(f"{ruleset.name} is for {low}-{high} bots, not {len(args.bots)}")
    sandbox = _sandbox_of(args)
    # From the OS, never the clock: a bot that knows the seed knows every hand. 63 bits, as
    # leaderboard.schedule.SEED_BITS (the referee does not import the league code).
    seed = args.seed if args.seed is not None else secrets.randbits(63)
    record = args.record
    if record is None:
        # Random, not the seed: the bots' log folder is named after the record and exists
        # while they play.
        stamp = time.strftime("%Y%m%d-%H%M%S")
        record = Path("records") / f"{stamp}-{secrets.token_hex(4)}.json"
    with ExitStack() as stack:
        seats: list[SeatBot] = []
        launched: list[LaunchedBot] = []
        try:
            for spec in args.bots:
                bot = stack.enter_context(launch(spec, startup_s=args.startup_s, sandbox=sandbox))
                if bot.config is not None:
                    bot.log_to(_play_log(args.logs, record, len(seats), bot.name))
                seats.append(SeatBot(bot.name, bot.version, bot.address))
                launched.append(bot)
        except LaunchError as e:
            raise UserError(str(e)) from None
        try:
            result = play_match(
                ruleset,
                seats,
                seed,
                Clock(args.move_ms, args.bank_ms),
                record_path=record,
                diagnose=lambda seat: launched[seat].death(),
            )
        except OSError as e:
            raise UserError(f"cannot write the record {record}: {e.strerror or e}") from None
    faults = result.fault_counts()
    if args.json:
        players = [
            {
                "seat": s.seat,
                "bot": seats[s.seat].name,
                "score": s.total,
                "rank": s.rank,
                "tickets_completed": family_of(ruleset).ticket_counts(s)[0],
                "faults": faults[s.seat],
                "breakdown": outcome_breakdown(ruleset, s),
            }
            for s in result.outcome.seats
        ]
        print(
            json.dumps(
                {
                    "variant": ruleset.ident,
                    "seed": seed,
                    "players": players,
                    "record": str(record),
                }
            )
        )
        return 0
    names = [f"{i}:{_bot_label(b.name, b.version)}" for i, b in enumerate(seats)]
    print(
        f"{ruleset.title}: {len(seats)} bots, seed {seed}, {result.final.turn} turns, "
        f"ended by {result.final.end_reason.replace('_', ' ')}"
    )
    print(format_outcome(ruleset, result.outcome, names))
    for i, n in enumerate(faults):
        if n:
            kinds: dict[str, int] = {}
            for f in result.faults:
                if f.seat == i:
                    kinds[f.kind] = kinds.get(f.kind, 0) + 1
            detail = ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))
            print(f"faults: {names[i]}: {n} ({detail}); {result.defaults[i]} default move(s)")
    print(f"record: {record}")
    return 0


def _play_log(logs: Path | None, record: Path, seat: int, name: str) -> Path:
    """``<logs>/seat<N>-<bot>.log``; by default the logs sit beside the record, in
    ``<record name>.logs/``."""
    import re

    folder = logs if logs is not None else record.with_name(f"{record.stem}.logs")
    return folder / f"seat{seat}-{re.sub(r'[^A-Za-z0-9_.-]+', '_', name)[:40]}.log"


def cmd_sandbox(args: argparse.Namespace) -> int:
    from referee.sandbox import report

    args.no_sandbox = True  # only the limits are wanted; the check is report()'s own
    ok, lines = report(_sandbox_of(args, quiet=True).limits)
    for line in lines:
        print(line)
    return 0 if ok else 1


def cmd_replay_verify(args: argparse.Namespace) -> int:
    from referee.replay import RecordError, verify

    try:
        difference = verify(args.record)
    except RecordError as e:
        raise UserError(str(e)) from None
    if difference is not None:
        print(f"ttr: {args.record}: DIFFERS at {difference}", file=sys.stderr)
        return 1
    print(f"OK: {args.record} replays exactly")
    return 0


def _records_dir(db: Path) -> Path:
    """Where a tournament's game records go by default: beside the store, named after it."""
    return db.with_name(f"{db.stem}-records")


def cmd_tournament_run(args: argparse.Namespace) -> int:
    import os
    import signal
    from types import FrameType

    if args.resume:
        fixed = [
            f"--{name.replace('_', '-')}"
            for name in ("variant", "players", "rounds", "seed", "records")
            if getattr(args, name) is not None
        ]
        if fixed:
            raise UserError(
                f"{', '.join(fixed)}: a resumed tournament keeps the settings it began with; "
                "leave them out"
            )
    elif not args.bots:
        raise UserError("give the bot folders to enter (or --resume to finish a tournament)")
    workers = args.workers or os.cpu_count() or 1
    records = args.records if args.records is not None else _records_dir(args.db)

    def on_term(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt  # `kill` stops a run as cleanly as Ctrl-C does

    sandbox = dataclasses.replace(_sandbox_of(args), fresh_per_deal=not args.reuse_bots)
    previous_term = signal.signal(signal.SIGTERM, on_term)
    try:
        return _tournament_run(args, workers, records, sandbox)
    finally:
        signal.signal(signal.SIGTERM, previous_term)  # ``main`` may be called in-process


def _tournament_run(
    args: argparse.Namespace, workers: int, records: Path, sandbox: SandboxConfig
) -> int:
    from leaderboard.progress import TournamentDisplay
    from leaderboard.runner import TournamentError, run
    from leaderboard.store import Store, StoreError
    from leaderboard.table import leaderboard, render_text, to_json

    try:
        with Store(args.db) as store:
            display = TournamentDisplay()
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
                        events=display.events(),
                    )
            except KeyboardInterrupt:
                print(
                    f"ttr: interrupted; every finished game is stored in {args.db}: "
                    f"`ttr tournament run --db {args.db} --resume` finishes the tournament",
                    file=sys.stderr,
                )
                return 130
            spec = outcome.tournament.spec
            pools = leaderboard(store, spec.variant, spec.players)
    except (TournamentError, StoreError) as e:
        raise UserError(str(e)) from None
    if args.json:
        summary = {
            "tournament": outcome.tournament.tournament_id,
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
        print(render_text(pools), end="")
        for v in outcome.rejected:
            print(f"left out: {v.entrant.label}: {v.reason}")
        print(
            f"tournament #{outcome.tournament.tournament_id}: "
            f"{outcome.stored_before + outcome.played}/{outcome.total} games stored in "
            f"{args.db}; records in {records}"
        )
        if outcome.complete:  # the seed stays secret until the last game (see --json)
            print(f"base seed {spec.base_seed}: --seed {spec.base_seed} deals the same games")
    if outcome.failed:
        print(
            f"ttr: {len(outcome.failed)} game(s) failed and were not stored; "
            f"`ttr tournament run --db {args.db} --resume` plays them again",
            file=sys.stderr,
        )
        return 1
    return 0


def cmd_leaderboard_show(args: argparse.Namespace) -> int:
    from leaderboard.store import Store, StoreError
    from leaderboard.table import leaderboard, render_text, to_json

    try:
        with Store(args.db, create=False) as store:
            pools = leaderboard(store, args.variant, args.players)
    except StoreError as e:
        raise UserError(str(e)) from None
    if args.json:
        print(json.dumps(to_json(pools), indent=2))
    else:
        print(render_text(pools), end="")
    return 0


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, got {text}")
    return value


def _nonnegative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be at least 0, got {value}")
    return value


def _add_clock_options(p: argparse.ArgumentParser) -> None:
    """The options of every command that runs games between bot processes."""
    p.add_argument(
        "--move-ms", type=_positive, default=1000, help="time per decision (default 1000)"
    )
    p.add_argument(
        "--bank-ms", type=_nonnegative, default=60000, help="time bank per game (default 60000)"
    )
    p.add_argument(
        "--startup-s",
        type=_positive_float,
        default=10.0,
        help="how long a bot may take to become healthy (default 10)",
    )
    _add_sandbox_options(p)


def _add_sandbox_options(p: argparse.ArgumentParser, switch: bool = True) -> None:
    """The sandbox's limits (and, with ``switch``, ``--no-sandbox``)."""
    from referee.sandbox import Limits

    d = Limits()
    g = p.add_argument_group(
        "sandbox",
        "Every bot folder runs in a sandbox (docs/security.md): no network, its own processes "
        "and user, only its folder and runtime readable, these limits per bot.",
    )
    if switch:
        g.add_argument(
            "--no-sandbox",
            action="store_true",
            help="run bots as ordinary processes (debugging bots you trust; prints a warning)",
        )
    g.add_argument(
        "--memory-mb", type=_positive, default=d.memory_mb, help=f"memory (default {d.memory_mb})"
    )
    g.add_argument(
        "--max-processes",
        type=_positive,
        default=d.processes,
        help=f"processes and threads at once (default {d.processes})",
    )
    g.add_argument(
        "--cpu-s",
        type=_positive,
        default=d.cpu_s,
        help=f"CPU seconds per process over its life (default {d.cpu_s})",
    )
    g.add_argument(
        "--open-files",
        type=_positive,
        default=d.open_files,
        help=f"open files per process (default {d.open_files})",
    )
    g.add_argument(
        "--log-kb",
        type=_positive,
        default=d.log_kb,
        help=f"stdout+stderr kept per bot and game, the rest dropped (default {d.log_kb})",
    )
    g.add_argument(
        "--scratch-mb",
        type=_positive,
        default=d.scratch_mb,
        help=f"size of the bot's private writable /tmp (default {d.scratch_mb})",
    )
    g.add_argument(
        "--cpus",
        type=_positive_float,
        default=d.cpus,
        help=f"CPU cores' worth of time at once, where cgroups allow (default {d.cpus:g})",
    )
    g.add_argument(
        "--read-only",
        action="append",
        default=[],
        metavar="PATH",
        help="also let bots read PATH (a runtime installed outside /usr); repeatable",
    )


def _sandbox_of(args: argparse.Namespace, quiet: bool = False) -> SandboxConfig:
    """The sandbox the options ask for; a bad limit or a machine that cannot sandbox is a
    UserError naming it. ``--no-sandbox`` prints its warning here, once."""
    from referee.sandbox import (
        UNSANDBOXED_WARNING,
        Limits,
        SandboxConfig,
        SandboxError,
        require_available,
    )

    try:
        limits = Limits(
            memory_mb=args.memory_mb,
            processes=args.max_processes,
            cpu_s=args.cpu_s,
            open_files=args.open_files,
            log_kb=args.log_kb,
            scratch_mb=args.scratch_mb,
            cpus=args.cpus,
        )
    except ValueError as e:
        raise UserError(str(e)) from None
    missing = [p for p in args.read_only if not Path(p).exists()]
    if missing:
        raise UserError(f"--read-only {missing[0]}: no such file or directory")
    if args.no_sandbox:
        if not quiet:
            print(UNSANDBOXED_WARNING, file=sys.stderr)
        return SandboxConfig(enabled=False, limits=limits)
    try:
        require_available()
    except SandboxError as e:
        raise UserError(str(e)) from None
    return SandboxConfig(True, limits, tuple(str(Path(p).resolve()) for p in args.read_only))


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="ttr",
        description="TTR Arena: the referee, bot tools and league tools for Ticket to Ride.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser(
        "variants",
        help="list the variants (rulesets) the referee knows",
        description=(
            "List every packaged variant: its name@version (what records and rating pools "
            "carry), the player range, the title and a one-line description. Any of them can "
            "be given to --variant."
        ),
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print a JSON list of {name, version, ident, title, min_players, max_players, "
        "description}",
    )
    p.set_defaults(func=cmd_variants)

    p = sub.add_parser(
        "selfplay",
        help="play in-process games between random players (engine check and benchmark)",
        description=(
            "Play complete in-process games in which every decision is drawn uniformly from "
            "the legal actions, and print games per second on one core, turns per game and "
            "score statistics. Useful as a quick check of a variant or a map, and as the "
            "engine benchmark."
        ),
    )
    p.add_argument(
        "--variant",
        default="usa",
        help=f"ruleset to play (default usa; available: {', '.join(variants())})",
    )
    p.add_argument("--players", type=_positive, default=4, help="seats per game (default 4)")
    p.add_argument("--games", type=_positive, default=100, help="games to play (default 100)")
    p.add_argument(
        "--seed", type=int, default=1, help="seed of the first game; game i uses seed+i (default 1)"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.set_defaults(func=cmd_selfplay)

    p = sub.add_parser(
        "play",
        help="play one game between bots over gRPC and write its record",
        description=(
            "Start each bot (a folder with a bot.toml) or connect to it (host:port), play one "
            "game with clocks and the fault policy, print the results and write the game "
            "record."
        ),
    )
    p.add_argument("bots", nargs="+", metavar="BOT", help="a bot folder or host:port (2-5)")
    p.add_argument(
        "--variant",
        default="usa",
        help=f"ruleset to play (default usa; available: {', '.join(variants())})",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=None,
        help="game seed (default: drawn from the OS's randomness; printed at the end)",
    )
    p.add_argument(
        "--record",
        type=Path,
        default=None,
        help="where to write the record (default records/<timestamp>-<random>.json)",
    )
    p.add_argument(
        "--logs",
        type=Path,
        default=None,
        help="folder for each bot's stdout+stderr of this game, seat<N>-<bot>.log (default: "
        "beside the record, <record>.logs/)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    _add_clock_options(p)
    p.set_defaults(func=cmd_play)

    p = sub.add_parser(
        "sandbox",
        help="check that bots can be sandboxed on this machine, and how",
        description=(
            "Try the bot sandbox on this machine and say how each defence is enforced here "
            "(namespaces, the bots' user, which limits a cgroup or only rlimits can set). "
            "Exit 0 when bots can be sandboxed, 1 when not (with the reason). The limit "
            "options show the figures a league night would use."
        ),
    )
    _add_sandbox_options(p, switch=False)
    p.set_defaults(func=cmd_sandbox)

    p = sub.add_parser("replay", help="game records", description="Work with game records.")
    replay_sub = p.add_subparsers(dest="replay_command", metavar="ACTION", required=True)
    p = replay_sub.add_parser(
        "verify",
        help="replay a record through the engine and compare events and final scores",
        description=(
            "Replay the record's actions from the recorded seed and compare every event and "
            "the final scores. Exit 0 when identical, 1 naming the first difference."
        ),
    )
    p.add_argument("record", metavar="RECORD", type=Path, help="the game record (JSON)")
    p.set_defaults(func=cmd_replay_verify)

    p = sub.add_parser(
        "tournament", help="league nights: round-robin tournaments", description="Tournaments."
    )
    tournament_sub = p.add_subparsers(dest="tournament_command", metavar="ACTION", required=True)
    p = tournament_sub.add_parser(
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
        default=None,
        help=f"ruleset (default usa; available: {', '.join(variants())})",
    )
    p.add_argument("--players", type=_positive, default=None, help="seats per game (default 4)")
    p.add_argument(
        "--rounds", type=_positive, default=None, help="round robins, fresh deals each (default 1)"
    )
    p.add_argument(
        "--workers", type=_positive, default=None, help="parallel games (default: CPU cores)"
    )
    p.add_argument(
        "--seed",
        type=int,
        default=None,
        help="base seed of the deals (default: drawn from the OS's randomness; kept in the "
        "store and shown only once the tournament is finished)",
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
    p.add_argument("--name", default=None, help="a name for the tournament (default: the date)")
    _add_clock_options(p)
    p.add_argument(
        "--reuse-bots",
        action="store_true",
        help="sandboxed: keep a bot's process for a deal it already played in another seat "
        "(faster with short games; the bot could remember that deal: docs/security.md)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object at the end")
    p.set_defaults(func=cmd_tournament_run)

    p = sub.add_parser(
        "leaderboard", help="show ratings from a results store", description="Leaderboards."
    )
    board_sub = p.add_subparsers(dest="leaderboard_command", metavar="ACTION", required=True)
    p = board_sub.add_parser(
        "show",
        help="print the leaderboard of every pool in a results store",
        description=(
            "TrueSkill ratings recomputed from the stored games, one table per variant and "
            "player count: rank, conservative rating (mu - 3 sigma), mu, sigma, games, wins "
            "with a 95%% interval for the win rate, average score and faults."
        ),
    )
    p.add_argument("--db", type=Path, required=True, help="the results store (SQLite file)")
    p.add_argument("--variant", default=None, help="only this variant (usa, or usa@1)")
    p.add_argument("--players", type=_positive, default=None, help="only games of this size")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(func=cmd_leaderboard_show)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        result: int = args.func(args)
    except UserError as e:
        _fail(str(e))
    except KeyboardInterrupt:
        print("ttr: interrupted", file=sys.stderr)
        return 130
    return result


if __name__ == "__main__":
    raise SystemExit(main())
