"""Engine benchmark: random self-play games per second on one core, 2 and 4 players.

    python bench/selfplay.py [--games N] [--repeat R] [--profile]

Prints the best of R runs (the least disturbed by the rest of the machine) next to the
issue's target (10x the fastest open-source Python engine we know: 300 two-player and 160
four-player games/s). ``--profile`` prints the top of a cProfile of one run instead.
"""

from __future__ import annotations

import argparse
import cProfile
import platform
import pstats

from referee.rules import load_ruleset
from referee.selfplay import run_selfplay

TARGETS = {2: 300.0, 4: 160.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--variant", default="usa")
    parser.add_argument("--games", type=int, default=300, help="games per run (default 300)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per player count")
    parser.add_argument("--profile", action="store_true", help="profile one 4-player run")
    args = parser.parse_args()
    ruleset = load_ruleset(args.variant)

    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        run_selfplay(ruleset, 4, args.games, 1)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(15)
        return

    print(f"python {platform.python_version()} on {platform.machine()}, {args.variant}")
    for players in (2, 4):
        runs = [run_selfplay(ruleset, players, args.games, 1)[0] for _ in range(args.repeat)]
        best = max(runs, key=lambda s: s.games_per_s)
        target = TARGETS.get(players)
        print(
            f"{players} players: {best.games_per_s:8.1f} games/s (best of {args.repeat} x "
            f"{args.games} games; target {target:.0f}), {best.turns_per_game} turns/game, "
            f"{best.decisions_per_game} decisions/game, "
            f"{best.decisions_per_game * best.games_per_s / 1000:.1f}k decisions/s"
        )


if __name__ == "__main__":
    main()
