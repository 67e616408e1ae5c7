"""``ttr variants``, ``ttr selfplay`` and ``ttr play``: the commands that list and play games.
``play`` starts bot processes (or reaches bots by address), so the launcher and the match
code are imported only when it runs: ``ttr --help`` and ``ttr variants`` stay fast."""

from __future__ import annotations

import argparse
import json
import re
import secrets
import sys
import time
import uuid
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from referee.games.registry import AnyRuleset, family_of, variants
from ttr_arena.cli.options import (
    BANK_MS,
    MOVE_MS,
    Subcommands,
    Undo,
    UserError,
    add_clock_options,
    bot_label,
    check_output,
    known_variant,
    load_ruleset,
    positive,
    sandbox_of,
    say,
    say_as,
)
from ttr_arena.pages.scores import format_outcome

if TYPE_CHECKING:
    from referee.hosting.launcher import LaunchedBot
    from referee.hosting.sandbox import SandboxConfig
    from referee.match import MatchResult, SeatBot
    from ttr_arena.pages.human import HumanHost


def register(sub: Subcommands) -> None:
    """Add ``variants``, ``selfplay`` and ``play``, in that order."""
    _add_variants(sub)
    _add_selfplay(sub)
    _add_play(sub)


# variants ------------------------------------------------------------------------------------


def _add_variants(sub: Subcommands) -> None:
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


def cmd_variants(args: argparse.Namespace) -> int:
    rulesets = [load_ruleset(name) for name in variants()]
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


# selfplay ------------------------------------------------------------------------------------


def _add_selfplay(sub: Subcommands) -> None:
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
        type=known_variant,
        default="usa",
        help=f"ruleset to play (default usa; available: {', '.join(variants())})",
    )
    p.add_argument("--players", type=positive, default=4, help="seats per game (default 4)")
    p.add_argument("--games", type=positive, default=100, help="games to play (default 100)")
    p.add_argument(
        "--seed", type=int, default=1, help="seed of the first game; game i uses seed+i (default 1)"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.set_defaults(func=cmd_selfplay)


def cmd_selfplay(args: argparse.Namespace) -> int:
    from referee.selfplay import run_selfplay  # here: it loads statistics (and decimal)

    ruleset = load_ruleset(args.variant)
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


# play ----------------------------------------------------------------------------------------


def _add_play(sub: Subcommands) -> None:
    p = sub.add_parser(
        "play",
        help="play one game between bots over gRPC and write its record",
        description=(
            "Start each bot (a folder with a bot.toml) or connect to it (host:port), play one "
            "game with clocks and the fault policy, print the results and write the game "
            "record. With --human (or a BOT given as the word human) you play that seat "
            "yourself, in the browser."
        ),
    )
    p.add_argument(
        "bots",
        nargs="*",
        metavar="BOT",
        help="a bot folder, host:port, or a sample bot by name: random, greedy, planner (a "
        "folder of that name in the current directory wins); the word human: you (2-5)",
    )
    p.add_argument(
        "--human",
        nargs="?",
        const="0",
        default=None,
        metavar="SEAT",
        help="play seat SEAT yourself (default 0) against the BOTs, in your browser: a page on "
        "127.0.0.1 with a secret address, printed and opened. --move-ms and --bank-ms, "
        f"where not given, are then the largest allowed ({MOVE_MS[1]} ms a move, "
        f"{BANK_MS[1]} ms of bank), for every seat: the referee has one clock per game",
    )
    p.add_argument(
        "--no-open",
        action="store_true",
        help="with a human seat: only print the page's address, open no browser",
    )
    p.add_argument(
        "--variant",
        type=known_variant,
        default="usa",
        help=f"ruleset to play (default usa; available: {', '.join(variants())})",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=None,
        metavar="N",
        help="deal the game of N (default: a seed drawn from the OS's randomness, 63 bits). "
        "Sandboxed (the bots are untrusted), the game seed is HMAC-SHA256 of N under this "
        "user's secret key ($TTR_SEED_KEY_FILE, else $XDG_DATA_HOME/ttr-arena/seed.key or "
        "~/.local/share/ttr-arena/seed.key, made on first use): the same N deals the same game "
        "on this machine, and a bot cannot find the deal by trying small numbers. With "
        "--no-sandbox (bots you trust) N is the game seed itself, as in selfplay. The game "
        "seed is printed at the end and kept in the record, which replays anywhere",
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
    p.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="also show each bot's stdout and stderr live on stderr, each line prefixed by "
        "'[SEAT NAME] ' (lines cut at 1000 characters, at most --log-kb per bot and game; the "
        "log files are written as usual). Faults are printed as they happen either way",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    add_clock_options(p)
    # None: not given (a human's game then takes the largest clock; bots' games the usual)
    p.set_defaults(func=cmd_play, move_ms=None, bank_ms=None)


#: The word that seats the human (``ttr play mybot human``); a folder of that name is
#: given as ``./human``.
HUMAN = "human"


def _seat_human(args: argparse.Namespace) -> int | None:
    """Where the human sits: ``--human SEAT`` puts the word ``human`` at SEAT of the BOT list
    (``--human BOT...`` without a number: seat 0, and BOT is the first bot); or the word
    among the BOTs. None: no human."""
    given = [i for i, b in enumerate(args.bots) if b == HUMAN]
    if args.human is not None:
        if given:
            raise UserError("--human and a BOT named human: give the human seat once")
        if args.human.isdigit():
            seat = int(args.human)
        else:  # `--human mybot`: argparse took the first bot for SEAT
            args.bots.insert(0, args.human)
            seat = 0
        if seat > len(args.bots):
            raise UserError(
                f"--human {seat}: with {len(args.bots)} bot(s) the seats are 0-{len(args.bots)}"
            )
        args.bots.insert(seat, HUMAN)
        return seat
    if len(given) > 1:
        raise UserError("one human seat per game: the word human is given more than once")
    return given[0] if given else None


def cmd_play(args: argparse.Namespace) -> int:
    from referee.hosting.config import LaunchError
    from referee.hosting.launcher import launch, resolve_bot
    from referee.match import Clock, Match, SeatBot, fault_line

    human = args.human_seat = _seat_human(args)
    args.bots = [b if i == human else resolve_bot(b) for i, b in enumerate(args.bots)]

    ruleset = load_ruleset(args.variant)
    low, high = max(2, ruleset.min_players), min(5, ruleset.max_players)
    if not low <= len(args.bots) <= high:
        who = "seats" if human is not None else "bots"
        raise UserError(f"{ruleset.name} is for {low}-{high} {who}, not {len(args.bots)}")
    if args.move_ms is None:
        args.move_ms = MOVE_MS[1] if human is not None else 1000
    if args.bank_ms is None:
        args.bank_ms = BANK_MS[1] if human is not None else 60000
    sandbox = sandbox_of(args)
    seed, key_file = _game_seed(args.seed, sandbox, args.bots)
    record = args.record
    if record is None:
        # Random, not the seed: the bots' log folder is named after the record and exists
        # while they play.
        stamp = time.strftime("%Y%m%d-%H%M%S")
        record = Path("records") / f"{stamp}-{secrets.token_hex(4)}.json"
    check_output(record, "--record")
    logs = _play_log(args.logs, record, 0, "").parent
    check_output(logs, "--logs", folder=True)
    with ExitStack() as stack:
        undo = stack.push(Undo(record.parent, logs))
        seats: list[SeatBot] = []
        launched: list[LaunchedBot] = []
        try:
            # every bot read (bot.toml) before anything starts: a refused command opens no page
            planned: list[LaunchedBot | None] = []
            for i, spec in enumerate(args.bots):
                if i == human:
                    planned.append(None)
                    continue
                bot = launch(spec, startup_s=args.startup_s, sandbox=sandbox)
                # a bot whose bot.toml declares other variants is refused before anything starts
                refusal = bot.config.refusal(ruleset.name) if bot.config is not None else None
                if refusal is not None:
                    raise UserError(refusal)
                planned.append(bot)
            # the human's seat answers this game alone: its id is chosen here (at random, as
            # Match's own would be) and known to the referee, the seat and the game's bots
            game_id = uuid.uuid4().hex
            host = None if human is None else _human_host(args, record, game_id, stack)
            for planned_bot in planned:
                if planned_bot is None:
                    assert host is not None
                    # the human's seat: a bot served in this process, entered by its address
                    bot = stack.enter_context(launch(host.address, startup_s=args.startup_s))
                    seats.append(SeatBot(HUMAN, "", bot.address))
                    launched.append(bot)
                    continue
                bot = planned_bot
                if bot.config is not None:
                    bot.log_to(_play_log(args.logs, record, len(seats), bot.name))
                    if args.verbose:
                        bot.echo_to(say_as(f"[{len(seats)} {bot.name}] "))
                stack.enter_context(bot)
                seats.append(SeatBot(bot.name, bot.version, bot.address))
                launched.append(bot)
        except LaunchError as e:
            raise UserError(str(e)) from None
        undo.armed = False
        if host is not None:
            host.table.names = [s.name for s in seats]
        try:
            result = Match(
                ruleset,
                seats,
                seed,
                Clock(args.move_ms, args.bank_ms),
                record_path=record,
                game_id=game_id,
                diagnose=lambda seat: launched[seat].death(),
                lines=lambda seat: launched[seat].take_lines(),
                on_fault=lambda f, played: say(fault_line(f, seats[f.seat].name, played)),
            ).run()
        except OSError as e:
            raise UserError(f"cannot write the record {record}: {e.strerror or e}") from None
        if host is not None and host.table.seen:
            from ttr_arena.pages.human import wait_seen

            wait_seen(host.table, END_SHOWN_S)  # the final scores reach the page
    _print_play(args, ruleset, seed, key_file, record, result, seats, launched)
    return 0


#: After a human's game, how long ``ttr play`` waits for the page to fetch the end.
END_SHOWN_S = 10.0


def _human_host(
    args: argparse.Namespace, record: Path, game_id: str, stack: ExitStack
) -> HumanHost:
    """The human's seat and its page, for the length of the game (``stack``): the address
    is printed (on stderr with --json) and, without --no-open, opened in the browser."""
    import webbrowser  # here: only a human's game opens a browser

    from ttr_arena.pages.human import hosting

    try:
        host = stack.enter_context(hosting([], record, game_id, args.human_seat))
    except OSError as e:
        raise UserError(f"cannot serve the human seat's page: {e}") from None
    out = sys.stderr if args.json else sys.stdout
    print(f"your seat's page: {host.url}", file=out, flush=True)
    if not args.no_open:
        try:
            opened = webbrowser.open(host.url)
        except webbrowser.Error:
            opened = False
        if not opened:
            say(f"no browser could be opened; open {host.url} yourself")
    return host


def _game_seed(
    given: int | None, sandbox: SandboxConfig, bots: Sequence[str]
) -> tuple[int, Path | None]:
    """The seed the game is dealt from, and the key file it was keyed with (None: drawn, or
    given and used as it is).

    A bot that knows the seed knows every hand. Not given, the seed comes from the OS (63
    bits), never the clock. Given, it is a number a person chose, often small: with the
    sandbox on, the bots are untrusted, and the seed they are dealt from is HMAC-SHA256 of
    it under this user's key (``referee.hosting.seeds``), so that trying numbers against
    their hand finds nothing, while the same ``--seed`` still deals the same game here. With
    ``--no-sandbox`` the bots run with the user's rights and could read the key file anyway:
    they are trusted, and the number is the seed itself (the game ``selfplay`` and the engine
    deal from it, the same on every machine: what debugging wants). The key file must lie
    outside what the jailed bots can read, or keying it would protect nothing."""
    from referee.hosting.sandbox import bot_readable
    from referee.hosting.seeds import (
        SEED_BITS,
        SeedKeyError,
        exposed_by,
        play_seed,
        user_key,
        user_key_path,
    )

    if given is None:
        return secrets.randbits(SEED_BITS), None
    if not sandbox.enabled:
        return given, None
    path = user_key_path()
    exposed = exposed_by(path, bot_readable(sandbox, [b for b in bots if Path(b).is_dir()]))
    if exposed is not None:
        raise UserError(
            f"--seed: the seed key {path} is inside {exposed}, which the bots can read; keep "
            "it elsewhere (TTR_SEED_KEY_FILE names another file)"
        )
    try:
        return play_seed(user_key(path), given), path
    except SeedKeyError as e:
        raise UserError(str(e)) from None


def _print_play(
    args: argparse.Namespace,
    ruleset: AnyRuleset,
    seed: int,
    key_file: Path | None,
    record: Path,
    result: MatchResult,
    seats: list[SeatBot],
    launched: list[LaunchedBot],
) -> None:
    """What ``ttr play`` prints once the game is over: the scores, faults, logs and record."""
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
                "breakdown": family_of(ruleset).breakdown(ruleset, s),
                "log": _str_or_none(launched[s.seat].log_path),
            }
            for s in result.outcome.seats
        ]
        print(
            json.dumps(
                {
                    "variant": ruleset.ident,
                    "seed": seed,  # the game's, as in the record
                    "given_seed": args.seed,  # --seed, or None
                    "players": players,
                    "record": str(record),
                }
            )
        )
        return
    names = [f"{i}:{bot_label(b.name, b.version)}" for i, b in enumerate(seats)]
    who = "seats" if args.human_seat is not None else "bots"
    keyed = "" if key_file is None else f" (--seed {args.seed} keyed with {key_file})"
    print(
        f"{ruleset.title}: {len(seats)} {who}, seed {seed}{keyed}, {result.final.turn} turns, "
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
    for i, bot in enumerate(launched):
        where = bot.log_path or "none (a bot entered by address keeps its own output)"
        if i == args.human_seat:
            where = "none (the human seat)"
        print(f"log: {names[i]}: {where}")
    print(f"record: {record}")


def _str_or_none(path: Path | None) -> str | None:
    return None if path is None else str(path)


def _play_log(logs: Path | None, record: Path, seat: int, name: str) -> Path:
    """``<logs>/seat<N>-<bot>.log``; by default the logs sit beside the record, in
    ``<record name>.logs/``."""
    folder = logs if logs is not None else record.with_name(f"{record.stem}.logs")
    return folder / f"seat{seat}-{re.sub(r'[^A-Za-z0-9_.-]+', '_', name)[:40]}.log"
