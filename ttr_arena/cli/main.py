"""The ``ttr`` command line. User errors get one line naming the problem and exit status 2;
no tracebacks for things a user can fix."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import threading
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from referee.games.board import RulesetError
from referee.games.registry import AnyRuleset, family_of, load, matches_variant, variants
from ttr_arena.pages.scores import format_outcome

if TYPE_CHECKING:
    from collections.abc import Callable

    from leaderboard.cluster import Cluster
    from referee.hosting.sandbox import SandboxConfig


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


def _variant(text: str) -> str:
    """``--variant``, checked as the command line is read, so that a refused command has
    started and created nothing: a known variant, or name@version with the version this
    referee plays (``load`` alone would play usa@1 for "usa@7")."""
    try:
        ruleset = load(text)
    except RulesetError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    if "@" in text and ruleset.ident != text:
        raise argparse.ArgumentTypeError(
            f"unknown version {text!r}: this referee plays {ruleset.ident}"
        )
    return text


#: Clock bounds, checked before any bot starts. Under 10 ms per decision no bot answers over
#: gRPC in time, so every move would be a timeout; over 10 minutes per decision, or an hour of
#: bank per game, one stuck bot would hold a game (and a league night) longer than anyone
#: waits. Start-up: 0.1 s to 10 minutes (a JVM or a big model may be slow to load).
MOVE_MS = (10, 600_000)
BANK_MS = (0, 3_600_000)
STARTUP_S = (0.1, 600.0)


def _int_in(low: int, high: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be {low}-{high}, got {value}")
        return value

    return parse


def _float_in(low: float, high: float) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not low <= value <= high:  # also refuses nan
            raise argparse.ArgumentTypeError(f"must be {low:g}-{high:g}, got {text}")
        return value

    return parse


def _first_missing(path: Path) -> Path | None:
    """The outermost folder of ``path`` that does not exist yet (what creating ``path`` would
    create first), or None if ``path`` exists."""
    if path.exists():
        return None
    while not path.parent.exists() and path.parent != path:
        path = path.parent
    return path


def _check_output(path: Path, option: str, folder: bool = False) -> None:
    """Refuse, before any bot starts, an output path that could not be written after the
    game: a folder where a file goes (or the reverse), a parent that is a file, a place
    without write permission. Creates nothing: the probe file is gone when this returns."""
    import tempfile

    if folder and path.exists() and not path.is_dir():
        raise UserError(f"{option} {path}: not a folder")
    if not folder and path.is_dir():
        raise UserError(f"{option} {path}: is a folder; give a file name")
    existing = path if folder and path.exists() else path.parent
    while not existing.exists() and existing.parent != existing:
        existing = existing.parent
    if not existing.is_dir():
        raise UserError(f"{option} {path}: {existing} is not a folder")
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as e:
        raise UserError(
            f"{option} {path}: cannot write in {existing} ({e.strerror or e})"
        ) from None


class _Undo:
    """Removes the folders a command would leave behind when it is refused before its work
    begins (a bot that will not start): a refused command leaves nothing. Pushed first on
    the command's ExitStack, it runs last, once the bots are stopped; ``armed = False`` once
    the work has begun, after which everything written is kept."""

    def __init__(self, *paths: Path) -> None:
        self.created = [p for p in {_first_missing(p) for p in paths} if p is not None]
        self.armed = True

    def __call__(self, exc_type: type[BaseException] | None, *_: object) -> bool:
        import shutil

        if self.armed and exc_type is not None:
            for path in self.created:
                shutil.rmtree(path, ignore_errors=True)
        return False  # the exception goes on


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

    from referee.hosting.config import LaunchError
    from referee.hosting.launcher import LaunchedBot, launch
    from referee.match import Clock, SeatBot, fault_line, play_match

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
    _check_output(record, "--record")
    logs = _play_log(args.logs, record, 0, "").parent
    _check_output(logs, "--logs", folder=True)
    with ExitStack() as stack:
        undo = stack.push(_Undo(record.parent, logs))
        seats: list[SeatBot] = []
        launched: list[LaunchedBot] = []
        try:
            for spec in args.bots:
                bot = launch(spec, startup_s=args.startup_s, sandbox=sandbox)
                # a bot whose bot.toml declares other variants is refused before anything starts
                refusal = bot.config.refusal(ruleset.name) if bot.config is not None else None
                if refusal is not None:
                    raise UserError(refusal)
                if bot.config is not None:
                    bot.log_to(_play_log(args.logs, record, len(seats), bot.name))
                    if args.verbose:
                        bot.echo_to(_say_as(f"[{len(seats)} {bot.name}] "))
                stack.enter_context(bot)
                seats.append(SeatBot(bot.name, bot.version, bot.address))
                launched.append(bot)
        except LaunchError as e:
            raise UserError(str(e)) from None
        undo.armed = False
        try:
            result = play_match(
                ruleset,
                seats,
                seed,
                Clock(args.move_ms, args.bank_ms),
                record_path=record,
                diagnose=lambda seat: launched[seat].death(),
                on_fault=lambda f, played: _say(fault_line(f, seats[f.seat].name, played)),
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
                "breakdown": family_of(ruleset).breakdown(ruleset, s),
                "log": _str_or_none(launched[s.seat].log_path),
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
    for i, bot in enumerate(launched):
        where = bot.log_path or "none (a bot entered by address keeps its own output)"
        print(f"log: {names[i]}: {where}")
    print(f"record: {record}")
    return 0


_say_lock = threading.Lock()


def _say(line: str) -> None:
    """A whole line to stderr: bots' output threads and the game loop write at once."""
    with _say_lock:
        print(line, file=sys.stderr, flush=True)


def _str_or_none(path: Path | None) -> str | None:
    return None if path is None else str(path)


def _say_as(prefix: str) -> Callable[[str], None]:
    return lambda line: _say(prefix + line)


def _play_log(logs: Path | None, record: Path, seat: int, name: str) -> Path:
    """``<logs>/seat<N>-<bot>.log``; by default the logs sit beside the record, in
    ``<record name>.logs/``."""
    import re

    folder = logs if logs is not None else record.with_name(f"{record.stem}.logs")
    return folder / f"seat{seat}-{re.sub(r'[^A-Za-z0-9_.-]+', '_', name)[:40]}.log"


def cmd_check(args: argparse.Namespace) -> int:
    """Start a bot folder, run the compliance kit for each variant it plays, stop it; exit 1
    on any fault (or a bot that cannot be started), printing why."""
    from referee.hosting.config import LaunchError
    from referee.hosting.launcher import launch, load_bot_config
    from sdk.compliance import check_bot

    folder = Path(args.bot)
    if not folder.is_dir():
        raise UserError(f"{folder}: not a bot folder (no such directory)")
    sandbox = _sandbox_of(args)
    try:
        config = load_bot_config(folder, sandbox)
    except LaunchError as e:
        print(f"FAIL: {e}")
        return 1
    declared = config.variants or variants()
    for name in config.variants:
        try:
            _variant(name)
        except argparse.ArgumentTypeError as e:
            print(f"FAIL: {folder / 'bot.toml'}: key `variants`: {e}")
            return 1
    chosen = args.variant or list(declared)
    names = {v.split("@", 1)[0] for v in declared}
    for name in chosen:
        if name.split("@", 1)[0] not in names:
            raise UserError(
                f"--variant {name}: {folder / 'bot.toml'} declares only {', '.join(declared)}"
            )
    rulesets = [_load(name) for name in chosen]
    for ruleset in rulesets:
        if not ruleset.min_players <= args.players <= ruleset.max_players:
            raise UserError(
                f"--players {args.players}: {ruleset.name} is for "
                f"{ruleset.min_players}-{ruleset.max_players} players"
            )
    label = _bot_label(config.name, config.version)
    print(
        f"ttr check: {label} ({folder}): {args.games} game(s) per variant, {args.players} "
        f"seats, {args.move_ms} ms per move + {args.bank_ms} ms bank per game",
        flush=True,
    )
    failed: list[str] = []
    try:
        with launch(folder, startup_s=args.startup_s, sandbox=sandbox) as bot:
            for i, ruleset in enumerate(rulesets):
                report = check_bot(
                    bot.address,
                    args.games,
                    ruleset.ident,
                    args.players,
                    args.seed,
                    args.move_ms,
                    args.bank_ms,
                )
                faults = f"{len(report.faults)} fault(s)" if report.faults else "no fault"
                print(
                    f"{ruleset.ident}: {'PASS' if report.ok else 'FAIL'}: {report.games} "
                    f"game(s), {report.decisions} decisions, {faults}"
                )
                for line in report.details():
                    print(f"  {line}")
                if not report.ok:
                    failed.append(ruleset.ident)
                # death() waits a moment for a bot that is still running: only when it is gone
                death = bot.death() if report.gone else ""
                if death:
                    tail = bot.stderr_tail()
                    print(f"  the bot {death}" + ("; the end of its stderr:" if tail else ""))
                    for line in tail.splitlines():
                        print(f"  | {line}")
                    rest = [r.ident for r in rulesets[i + 1 :]]
                    if rest:
                        print(f"not checked: {', '.join(rest)}")
                        failed.extend(rest)
                    break
    except LaunchError as e:
        print(f"FAIL: {e}")
        return 1
    if failed:
        print(f"FAIL: {label}: {', '.join(failed)}")
        return 1
    print(f"PASS: {label}: {', '.join(r.ident for r in rulesets)}")
    return 0


def cmd_new_bot(args: argparse.Namespace) -> int:
    from referee.hosting.newbot import LANGUAGES, NewBotError, missing_tools, new_bot

    try:
        folder = new_bot(args.name, args.lang, args.dir)
    except NewBotError as e:
        raise UserError(str(e)) from None
    except OSError as e:
        raise UserError(f"cannot create the bot folder: {e.strerror or e}") from None
    language = LANGUAGES[args.lang]
    print(f"created {folder}/: a {language.title} bot named {args.name!r}")
    if language.needs_proto:
        print(f"  it builds before its first game (bot.toml `build`; log {folder}/.ttr-build.log)")
    print(f"  play it:  ttr play {folder} sample_bots/random")
    print(f"  read:     {folder}/README.md")
    missing = missing_tools(args.lang)
    if missing:
        print(
            f"ttr: warning: not found on PATH: {', '.join(missing)}; install them first "
            f"(Debian: tools/ensure_toolchains.sh; see {folder}/README.md)",
            file=sys.stderr,
        )
    return 0


def cmd_sandbox(args: argparse.Namespace) -> int:
    from referee.hosting.sandbox import report

    args.no_sandbox = True  # only the limits are wanted; the check is report()'s own
    ok, lines = report(_sandbox_of(args, quiet=True).limits)
    for line in lines:
        print(line)
    return 0 if ok else 1


def cmd_replay_verify(args: argparse.Namespace) -> int:
    """One line per record; exit 2 if any file is no record (after checking the others),
    else 1 if any record differs from its replay."""
    from referee.replay import RecordError, verify

    unreadable = differs = 0
    for record in args.records:
        try:
            difference = verify(record)
        except RecordError as e:
            if len(args.records) == 1:
                raise UserError(str(e)) from None
            print(f"ttr: error: {e}", file=sys.stderr)
            unreadable += 1
            continue
        if difference is not None:
            print(f"ttr: {record}: DIFFERS at {difference}", file=sys.stderr)
            differs += 1
        else:
            print(f"OK: {record} replays exactly")
    if len(args.records) > 1:
        ok = len(args.records) - unreadable - differs
        print(
            f"{len(args.records)} records: {ok} replay exactly, {differs} differ, "
            f"{unreadable} unreadable"
        )
    if unreadable:
        raise SystemExit(2)
    return 1 if differs else 0


def cmd_replay_show(args: argparse.Namespace) -> int:
    import os

    from referee.replay import RecordError
    from ttr_arena.pages.show import ShowError, show

    try:
        lines = show(args.record, seat=args.seat, first=args.first, last=args.last)
        for line in lines:
            print(line)
        sys.stdout.flush()
    except (RecordError, ShowError) as e:
        raise UserError(str(e)) from None
    except BrokenPipeError:
        # The reader (`| head`) has gone: stop quietly. Python would report the failed flush
        # of stdout at exit, so stdout goes to /dev/null first.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def cmd_replay_view(args: argparse.Namespace) -> int:
    """Write the replay page (atomically: a refused or failed command leaves no file), then
    say where it is; --open hands it to the system's browser, if there is one."""
    import webbrowser

    from referee.match import write_text_atomic
    from referee.replay import RecordError
    from ttr_arena.pages.show import ShowError
    from ttr_arena.pages.viewer import render_html

    record: Path = args.record
    out: Path = args.out if args.out is not None else record.with_suffix(".html")
    if out.resolve() == record.resolve():
        raise UserError(f"--out {out}: that is the record itself (give another --out)")
    try:
        page = render_html(record, seat=args.seat)
    except (RecordError, ShowError) as e:
        raise UserError(str(e)) from None
    try:
        write_text_atomic(out, page)
    except OSError as e:
        raise UserError(f"--out {out}: cannot write it: {e.strerror or e}") from None
    uri = out.resolve().as_uri()
    print(f"wrote {out} ({out.stat().st_size:,} bytes)")
    print(uri)
    if args.open:
        try:
            opened = webbrowser.open(uri)
        except webbrowser.Error:
            opened = False
        if not opened:
            print(f"ttr: no browser could be opened; open {uri} yourself", file=sys.stderr)
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

    sandbox = dataclasses.replace(_sandbox_of(args), fresh_per_deal=not args.reuse_bots)
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
    from leaderboard.runner import TournamentError, run
    from leaderboard.store import Store, StoreError, Tournament
    from leaderboard.table import leaderboard, render_text, to_json, tournament_title

    # A run refused before its tournament begins (a bad bot folder, too few bots, records
    # that cannot be written) leaves no new store or records folder behind.
    new_store = not args.db.exists()
    new_records = _first_missing(records)
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
            print(f"base seed {spec.base_seed}: --seed {spec.base_seed} deals the same games")
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
    import shutil

    if db is not None:
        for path in (db, *(db.with_name(db.name + s) for s in ("-wal", "-shm", "-journal"))):
            path.unlink(missing_ok=True)
    if records is not None:
        shutil.rmtree(records, ignore_errors=True)


def cmd_tournament_list(args: argparse.Namespace) -> int:
    from leaderboard.store import Store, StoreError
    from leaderboard.table import render_tournaments, tournaments_json

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


def cmd_tournament_abandon(args: argparse.Namespace) -> int:
    from leaderboard.store import Store, StoreError
    from leaderboard.table import tournament_title

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


def cmd_leaderboard_show(args: argparse.Namespace) -> int:
    from leaderboard.store import Store, StoreError
    from leaderboard.table import leaderboard, render

    if args.json and args.format not in (None, "json"):
        raise UserError(f"--json is --format json; leave out one of --json, --format {args.format}")
    try:
        with Store(args.db, create=False) as store:
            tournament = None if args.tournament is None else store.tournament(args.tournament)
            if args.variant is not None and not any(
                matches_variant(args.variant, ident) for ident, _ in store.pools()
            ):
                _variant_or_fail(args.variant)  # a known variant that has no games: no table
            pools = leaderboard(
                store,
                args.variant,
                args.players,
                None if tournament is None else tournament.tournament_id,
            )
    except StoreError as e:
        raise UserError(str(e)) from None
    sys.stdout.write(render(pools, "json" if args.json else args.format or "text", tournament))
    return 0


def cmd_leaderboard_serve(args: argparse.Namespace) -> int:
    import signal
    from types import FrameType

    from leaderboard.store import StoreError
    from ttr_arena.pages.league import PageError
    from ttr_arena.pages.league.server import serve

    def on_term(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt  # `kill` stops the server as cleanly as Ctrl-C does

    previous_term = signal.signal(signal.SIGTERM, on_term)
    try:
        serve(args.db, args.host, args.port, refresh_s=args.refresh, recent=args.recent)
    except (StoreError, PageError) as e:
        raise UserError(str(e)) from None
    finally:
        signal.signal(signal.SIGTERM, previous_term)
    return 0


def cmd_leaderboard_html(args: argparse.Namespace) -> int:
    from leaderboard.store import StoreError
    from ttr_arena.pages.league import PageError
    from ttr_arena.pages.league.static import export, human_size

    try:
        done = export(args.db, args.out, recent=args.recent, logs=args.logs)
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


def _variant_or_fail(text: str) -> None:
    try:
        _variant(text)
    except argparse.ArgumentTypeError as e:
        raise UserError(f"--variant: {e}") from None


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
        "--move-ms",
        type=_int_in(*MOVE_MS),
        default=1000,
        help=f"time per decision, {MOVE_MS[0]}-{MOVE_MS[1]} (default 1000)",
    )
    p.add_argument(
        "--bank-ms",
        type=_int_in(*BANK_MS),
        default=60000,
        help=f"time bank per game, {BANK_MS[0]}-{BANK_MS[1]} (default 60000)",
    )
    p.add_argument(
        "--startup-s",
        type=_float_in(*STARTUP_S),
        default=10.0,
        help=f"how long a bot may take to become healthy, {STARTUP_S[0]:g}-{STARTUP_S[1]:g} "
        "(default 10)",
    )
    _add_sandbox_options(p)


def _add_sandbox_options(p: argparse.ArgumentParser, switch: bool = True) -> None:
    """The sandbox's limits (and, with ``switch``, ``--no-sandbox``)."""
    from referee.hosting.sandbox import Limits

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
    from referee.hosting.sandbox import (
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
    from leaderboard.table import FORMATS

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
        type=_variant,
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
        type=_variant,
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
    p.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="also show each bot's stdout and stderr live on stderr, each line prefixed by "
        "'[SEAT NAME] ' (lines cut at 1000 characters, at most --log-kb per bot and game; the "
        "log files are written as usual). Faults are printed as they happen either way",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    _add_clock_options(p)
    p.set_defaults(func=cmd_play)

    p = sub.add_parser(
        "check",
        help="check that a bot folder plays every variant it declares legally and in time",
        description=(
            "Start the bot in BOT_DIR as `ttr play` would (sandboxed unless --no-sandbox), "
            "then, for each variant it plays (bot.toml's `variants` list; every variant when "
            "it has none), play GAMES games with the bot at one seat (rotating) and random "
            "players at the others, calling it exactly as the referee does, under the same "
            "clocks (--move-ms per decision, time beyond it from a --bank-ms bank per game). "
            "Any failed or late call, wrong request id or illegal answer is a fault. Prints, "
            "per variant, the games and decisions played, the faults by kind with their first "
            "messages, and the slowest answer against the clock; then stops the bot. Exit 0 "
            "when every variant passed, 1 on any fault or a bot that cannot be started (with "
            "its stderr), 2 for a usage error."
        ),
    )
    p.add_argument("bot", metavar="BOT_DIR", help="the bot folder (with its bot.toml)")
    p.add_argument("--games", type=_positive, default=2, help="games per variant (default 2)")
    p.add_argument(
        "--variant",
        type=_variant,
        action="append",
        default=None,
        metavar="VARIANT",
        help="check only this variant (repeatable; default: every variant the bot declares; "
        f"available: {', '.join(variants())})",
    )
    p.add_argument(
        "--players",
        type=_positive,
        default=2,
        help="seats per game, the bot's one of them (default 2)",
    )
    p.add_argument(
        "--seed", type=int, default=1, help="seed of the first game; game i uses seed+i (default 1)"
    )
    _add_clock_options(p)
    p.set_defaults(func=cmd_check)

    p = sub.add_parser(
        "new-bot",
        help="make a new bot folder from a starter kit (python, node, go, cpp)",
        description=(
            "Make the folder PARENT/NAME holding a bot that plays uniformly random legal "
            "moves in every variant and logs what it does: bot.toml, the source, a README on "
            "building, playing and testing it and, for Node, Go and C++, a copy of the "
            "contract (proto/) and a bot.toml `build` the launcher runs before the first "
            "game. `ttr play NAME sample_bots/random` plays it at once."
        ),
    )
    p.add_argument("name", metavar="NAME", help="the bot's name and folder name")
    p.add_argument(
        "--lang",
        choices=["python", "node", "go", "cpp"],
        default="python",
        help="language of the starter kit (default python)",
    )
    p.add_argument(
        "--dir",
        type=Path,
        default=Path(),
        metavar="PARENT",
        help="folder to create it in (default: the current one)",
    )
    p.set_defaults(func=cmd_new_bot)

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
        help="replay records through the engine and compare events and final scores",
        description=(
            "Replay each record's actions from the recorded seed and compare every event and "
            "the final scores. One line per record: OK, or the first difference with the "
            "record's field and both values (e.g. 'turn 37, final scores: "
            "outcome.seats[2].total: record 112, replay 110'). Exit 0 when every record "
            "replays exactly, 1 when any differs, 2 when a file is not a game record. "
            "The format: docs/records.md."
        ),
    )
    p.add_argument(
        "records", metavar="RECORD", type=Path, nargs="+", help="game records (JSON files)"
    )
    p.set_defaults(func=cmd_replay_verify)
    p = replay_sub.add_parser(
        "show",
        help="print a recorded game turn by turn, or what one seat saw",
        description=(
            "Replay the record through the engine and print the game turn by turn with "
            "names: who did what, the face-up row, running scores, every fault with the rule "
            "and message the bot was sent, and the final score table. With --seat N, only "
            "what seat N saw: its view (hand, tickets, offered tickets, the others' public "
            "facts) at each of its decisions and the events as they reached it. Turns are "
            "numbered as in the record (the first turn is turn 0; setup is shown before it)."
        ),
    )
    p.add_argument("record", metavar="RECORD", type=Path, help="the game record (JSON)")
    p.add_argument(
        "--seat",
        type=_nonnegative,
        default=None,
        metavar="N",
        help="show only what seat N saw (0-based)",
    )
    p.add_argument(
        "--from",
        dest="first",
        type=_nonnegative,
        default=None,
        metavar="TURN",
        help="start at this turn (default: the setup)",
    )
    p.add_argument(
        "--to",
        dest="last",
        type=_nonnegative,
        default=None,
        metavar="TURN",
        help="stop after this turn (default: the end, then the final scores)",
    )
    p.set_defaults(func=cmd_replay_show)
    p = replay_sub.add_parser(
        "view",
        help="write a recorded game as one HTML page that replays it (board, hands, scores)",
        description=(
            "Replay the record through the engine and write one self-contained HTML file "
            "(no network needed to open it) that replays the game: the board with the claimed "
            "routes (or, in the card game, the hands, Railyards and On-the-Track stacks), each "
            "step's events in words, every seat's score as a chart, the faults where they "
            "happened, and the final scores. Step with the buttons, the slider or the keys "
            "(Left/Right, Home/End, Space plays). A perspective selector shows the whole truth "
            "or exactly what one seat saw (its engine view at each step). With --seat N the "
            "file holds only seat N's perspective: nothing hidden from that seat is in it, so "
            "it can be shared. The page: docs/viewer.md."
        ),
    )
    p.add_argument("record", metavar="RECORD", type=Path, help="the game record (JSON)")
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="FILE.html",
        help="where to write the page (default: the record's path with .html)",
    )
    p.add_argument(
        "--seat",
        type=_nonnegative,
        default=None,
        metavar="N",
        help="write only what seat N saw (0-based); default: the truth and every seat",
    )
    p.add_argument("--open", action="store_true", help="open the page in the system's web browser")
    p.set_defaults(func=cmd_replay_view)

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
        type=_variant,
        default=None,
        help=f"ruleset (default usa; available: {', '.join(variants())})",
    )
    p.add_argument("--players", type=_positive, default=None, help="seats per game (default 4)")
    p.add_argument(
        "--rounds", type=_positive, default=None, help="round robins, fresh deals each (default 1)"
    )
    p.add_argument(
        "--workers",
        type=_positive,
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
    p.add_argument(
        "--name",
        default=None,
        help="a name for the tournament, shown in its progress, summary, JSON and leaderboard "
        "(default: the date)",
    )
    _add_clock_options(p)
    p.add_argument(
        "--reuse-bots",
        action="store_true",
        help="sandboxed: keep a bot's process for a deal it already played in another seat "
        "(faster with short games; the bot could remember that deal: docs/security.md)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object at the end")
    p.set_defaults(func=cmd_tournament_run)
    p = tournament_sub.add_parser(
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
    p = tournament_sub.add_parser(
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
    which.add_argument("--id", type=_positive, default=None, help="the tournament with this number")
    p.set_defaults(func=cmd_tournament_abandon)

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
            "with a 95% interval for the win rate, average score and faults. With "
            "--tournament, only that tournament's games, every bot starting from a fresh "
            "rating. --format csv or markdown exports the same tables."
        ),
    )
    p.add_argument("--db", type=Path, required=True, help="the results store (SQLite file)")
    p.add_argument("--variant", default=None, help="only this variant (usa, or usa@1)")
    p.add_argument("--players", type=_positive, default=None, help="only games of this size")
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
    p = board_sub.add_parser(
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
        "--port", type=_nonnegative, default=8080, help="port (default 8080; 0: any free port)"
    )
    p.add_argument(
        "--refresh",
        type=_positive_float,
        default=2.0,
        metavar="SECONDS",
        help="how often the page asks for new results while a tournament runs (default 2)",
    )
    p.add_argument("--recent", type=_positive, default=50, help="recent games listed (default 50)")
    p.set_defaults(func=cmd_leaderboard_serve)
    p = board_sub.add_parser(
        "html",
        help="write the league page as a static folder, to copy to any web host",
        description=(
            "The page of leaderboard serve as files: OUT/index.html (a snapshot, data "
            "inside, no polling) and OUT/games/<game>.html, the replay of each recent game "
            "whose record renders. Links are relative. OUT must be new, empty, or written "
            "by this command before (it then replaces the files it wrote)."
        ),
    )
    p.add_argument("--db", type=Path, required=True, help="the results store (SQLite file)")
    p.add_argument("--out", type=Path, required=True, help="the folder to write")
    p.add_argument("--recent", type=_positive, default=50, help="recent games listed (default 50)")
    p.add_argument("--logs", action="store_true", help="copy the recent games' bot logs too")
    p.set_defaults(func=cmd_leaderboard_html)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        result: int = args.func(args)
        sys.stdout.flush()  # here, where a closed pipe can still be told apart
    except UserError as e:
        _fail(str(e))
    except KeyboardInterrupt:
        print("ttr: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        if not _stdout_reader_gone():
            raise  # some other pipe (a bot's): a real error
        # `ttr ... | head`: the reader has what it wanted. Stop quietly, as replay show does:
        # stdout goes to /dev/null so that Python's own flush at exit cannot fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return result


def _stdout_reader_gone() -> bool:
    """Whether stdout is a pipe nobody reads any more (poll reports an error on it)."""
    import select

    try:
        poll = select.poll()
        poll.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poll.poll(0))
    except (OSError, ValueError, AttributeError):  # no fileno (captured), no poll (Windows)
        return False
