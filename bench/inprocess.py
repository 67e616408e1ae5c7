"""Games per second in-process (``sdk.local.play_game``) against the same bots over gRPC.

Three figures for the same games (the random sample bot in every seat, ``usa``, 2 seats,
seeds 0..N-1, one core): ``sdk.local.play_game``; a referee's ``Match`` against the bots
served by gRPC servers already running in this process (the wire alone); and ``ttr play
--no-sandbox`` run as a command, one game per run (what an author waits for: the bots'
processes started, the game played, the record written).

    python bench/inprocess.py [--games N] [--ttr-games M] [--variant V]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from referee.games.registry import load
from referee.match import Match, SeatBot
from sdk import start_server
from sdk.local import RandomBot, play_game

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--ttr-games", type=int, default=5)
    parser.add_argument("--variant", default="usa")
    args = parser.parse_args()

    began = time.perf_counter()
    for seed in range(args.games):
        play_game(args.variant, [RandomBot(), RandomBot()], seed)
    local = args.games / (time.perf_counter() - began)

    servers = [start_server(RandomBot()) for _ in range(2)]
    try:
        ruleset = load(args.variant)
        began = time.perf_counter()
        for seed in range(args.games):
            bots = [SeatBot(f"r{i}", "1", s.address) for i, s in enumerate(servers)]
            Match(ruleset, bots, seed).run()
        wire = args.games / (time.perf_counter() - began)
    finally:
        for s in servers:
            s.stop(None)

    ttr = Path(sys.executable).with_name("ttr")
    random_bot = str(ROOT / "sample_bots" / "random")
    with tempfile.TemporaryDirectory() as folder:
        began = time.perf_counter()
        for seed in range(args.ttr_games):
            subprocess.run(
                [
                    str(ttr),
                    "play",
                    "--no-sandbox",
                    "--variant",
                    args.variant,
                    "--seed",
                    str(seed),
                    "--record",
                    f"{folder}/{seed}.json",
                    random_bot,
                    random_bot,
                ],
                check=True,
                capture_output=True,
            )
        command = args.ttr_games / (time.perf_counter() - began)

    print(f"{args.variant}, 2 x random sample bot, one core")
    print(f"  sdk.local.play_game:            {local:8.1f} games/s ({args.games} games)")
    print(f"  Match over gRPC (servers up):   {wire:8.1f} games/s ({args.games} games)")
    print(f"  ttr play --no-sandbox (a run):  {command:8.2f} games/s ({args.ttr_games} runs)")
    print(f"  in-process / ttr play:          {local / command:8.0f}x")


if __name__ == "__main__":
    main()
