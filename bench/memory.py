"""A long night's memory: one process plays N games of every variant through the referee's and
the SDK's wire code (``sdk.local.play_game``: the requests encoded and decoded as over gRPC,
no sockets) and prints its resident memory and the engine's memos every ``--every`` games.

    python bench/memory.py [--games 1000] [--every 100] [--json]

A tournament worker does the same work game after game, so what grows here grows in a worker.
The memos (referee/games/common/memo.py) are bounded by bytes; the line to read is RSS after
the first few hundred games, when every memo has reached its working set: it should stay flat.
"""

from __future__ import annotations

import argparse
import gc
import json
from pathlib import Path
from typing import Any

from referee.games.registry import load, variants
from sdk import StrategyBot
from sdk.local import play_game
from sdk.strategies import CardRandomStrategy, RandomStrategy

try:
    from referee.games.common.memo import MEMOS
except ImportError:  # a commit from before the memos were bounded and listed: RSS alone
    MEMOS: dict[str, Any] = {}  # type: ignore[no-redef]


def rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=1000, help="games to play (default 1000)")
    parser.add_argument("--every", type=int, default=100, help="print every N games (100)")
    parser.add_argument("--json", action="store_true", help="one JSON object at the end")
    args = parser.parse_args()
    names = sorted(variants())
    rows = []
    for game in range(1, args.games + 1):
        variant = names[game % len(names)]
        ruleset = load(variant)
        players = ruleset.min_players + game % (ruleset.max_players - ruleset.min_players + 1)
        bots = [StrategyBot(RandomStrategy, CardRandomStrategy) for _ in range(players)]
        play_game(variant, bots, seed=game)
        if game % args.every == 0:
            gc.collect()
            memo_kib = sum(m.total for m in MEMOS.values()) // 1024
            rows.append({"games": game, "rss_kib": rss_kib(), "memos_kib": memo_kib})
            if not args.json:
                print(
                    f"{game:6d} games: RSS {rows[-1]['rss_kib'] / 1024:6.1f} MiB, "
                    f"memos {memo_kib / 1024:5.1f} MiB in {len(MEMOS)} memos",
                    flush=True,
                )
    if args.json:
        print(json.dumps({"rows": rows, "memos": {k: m.total for k, m in MEMOS.items()}}))
    else:
        full = sorted(MEMOS.items(), key=lambda kv: -kv[1].total)[:5]
        print("largest memos: " + ", ".join(f"{k} {m.total // 1024} KiB" for k, m in full))
        if len(rows) >= 4:
            settled = rows[len(rows) // 4 :]
            low = min(r["rss_kib"] for r in settled)
            high = max(r["rss_kib"] for r in settled)
            print(f"RSS after the first quarter: {low / 1024:.1f} to {high / 1024:.1f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
