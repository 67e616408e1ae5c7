"""Engine benchmark: random self-play games per second on one core, 2 and 4 players.

    python bench/selfplay.py [--variant NAME ...] [--games N] [--repeat R] [--profile [--players P]]

Prints, for every variant of either rules family (default: all packaged ones, ``cardgame``
included), the best of R runs (the least
disturbed by the rest of the machine). The targets are the usa ones (10x the fastest
open-source Python engine we know: 300 two-player and 160 four-player games/s); the other
variants are reported beside them, and the card game beside its figures before issue 25's
search (``BEFORE``). ``--profile`` prints the top of a cProfile of one run of the first
variant instead (4 players, or ``--players``).
"""

from __future__ import annotations

import argparse
import cProfile
import platform
import pstats

from referee.games.registry import load as load_ruleset
from referee.games.registry import variants as available_variants
from referee.selfplay import run_selfplay

#: (variant, players) -> target games/s on one core
TARGETS = {("usa", 2): 300.0, ("usa", 4): 160.0}
#: (variant, players) -> games/s before the card game's one-search completion (issue 25; main
#: 5f11adc, best of 3 x 200 on 2 shared cores, paired with the run after, load about 7)
BEFORE = {("cardgame", 2): 143.0, ("cardgame", 4): 138.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--variant",
        action="append",
        choices=available_variants(),
        help="a variant to measure (repeatable; default: every packaged variant)",
    )
    parser.add_argument("--games", type=int, default=300, help="games per run (default 300)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per player count")
    parser.add_argument("--profile", action="store_true", help="profile one run")
    parser.add_argument("--players", type=int, default=4, help="players of the profiled run")
    args = parser.parse_args()
    variants = args.variant or list(available_variants())

    if args.profile:
        ruleset = load_ruleset(variants[0])
        profiler = cProfile.Profile()
        profiler.enable()
        run_selfplay(ruleset, args.players, args.games, 1)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(15)
        return

    print(f"python {platform.python_version()} on {platform.machine()}")
    for name in variants:
        ruleset = load_ruleset(name)
        for players in (2, 4):
            if not ruleset.min_players <= players <= ruleset.max_players:
                continue
            runs = [run_selfplay(ruleset, players, args.games, 1)[0] for _ in range(args.repeat)]
            best = max(runs, key=lambda s: s.games_per_s)
            target = TARGETS.get((name, players))
            before = BEFORE.get((name, players))
            verdict = (
                ""
                if target is None
                else (
                    f"; target {target:.0f}: {'met' if best.games_per_s >= target else 'NOT met'}"
                )
            )
            if before is not None:
                verdict += f"; before {before:.0f}, goal 150"
            print(
                f"{ruleset.ident:<12} {players} players: {best.games_per_s:8.1f} games/s "
                f"(best of {args.repeat} x {args.games}{verdict}), "
                f"{best.turns_per_game} turns/game, "
                f"{best.decisions_per_game * best.games_per_s / 1000:.1f}k decisions/s"
            )


if __name__ == "__main__":
    main()
