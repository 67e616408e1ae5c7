"""The ``ttr`` command line. User errors get one line naming the problem and exit status 2;
no tracebacks for things a user can fix."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from typing import NoReturn

from referee.rules import RulesetError, available_variants, load_ruleset
from referee.rules.ruleset import Ruleset
from referee.rules.scoring import Outcome


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


def _load(variant: str) -> Ruleset:
    try:
        return load_ruleset(variant)
    except RulesetError as e:
        raise UserError(str(e)) from None


def format_outcome(ruleset: Ruleset, result: Outcome, names: list[str] | None = None) -> str:
    """A plain-text score table with the breakdown of every seat."""
    header = (
        f"{'rank':>4}  {'seat':<12} {'total':>5} {'routes':>6} {'tickets':>7} "
        f"{'done/all':>8} {'longest':>7} {'bonus':>5}"
    )
    lines = [header, "-" * len(header)]
    for s in sorted(result.seats, key=lambda s: (s.rank, s.seat)):
        name = names[s.seat] if names else f"seat {s.seat}"
        done = len(s.tickets_completed)
        total_tickets = done + len(s.tickets_failed)
        lines.append(
            f"{s.rank:>4}  {name:<12} {s.total:>5} {s.route_points:>6} {s.ticket_points:>7} "
            f"{f'{done}/{total_tickets}':>8} {s.longest_path:>7} "
            f"{s.longest_path_bonus + s.globetrotter_bonus:>5}"
        )
    return "\n".join(lines)


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


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="ttr",
        description="TTR Arena: the referee, bot tools and league tools for Ticket to Ride.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

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
        help=f"ruleset to play (default usa; available: {', '.join(available_variants())})",
    )
    p.add_argument("--players", type=_positive, default=4, help="seats per game (default 4)")
    p.add_argument("--games", type=_positive, default=100, help="games to play (default 100)")
    p.add_argument(
        "--seed", type=int, default=1, help="seed of the first game; game i uses seed+i (default 1)"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.set_defaults(func=cmd_selfplay)
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
