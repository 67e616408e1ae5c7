"""Memory of a long night: one process plays N games and prints its RSS every K games.

    python bench/memory.py [--games N] [--every K] [--variant NAME ...] [--json]

Each game is ``sdk.local.play_game`` of random sample bots (2 to 4 seats, turn about, the
variants in turn: every packaged one by default): the referee's requests and record and the
SDK's decoding, both in this process, so every memo a tournament worker or a bot keeps
grows here. After each K games it prints the resident set size (after a collection) and,
where the code has them (referee.games.common.memo.memo_stats), the memos' entries and
bytes. The figure that matters is the growth after the first K games, once every
variant's tables are built: flat means the memos' bounds hold it.
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from typing import Any

from referee.games.registry import load as load_ruleset
from referee.games.registry import variants as available_variants
from sdk.local import RandomBot, play_game

#: RSS growth (MiB) from game 100 to game 1,000 with the default mix, on main before the
#: memos were bounded by bytes (5f11adc, 2 shared cores, 2026-11-26): they held up to 65,536
#: entries each and were cleared only when full.
BASELINE_GROWTH_MIB = 104.0


def rss_mib() -> float:
    """The resident set size now (not the peak: a bound shows as a level)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")  # pragma: no cover - Linux only, as the sandbox is


def memo_totals() -> tuple[int, int] | None:
    """Entries and bytes of every memo, or None on code without byte-bounded memos."""
    try:
        from referee.games.common.memo import memo_stats  # type: ignore[attr-defined,unused-ignore]
    except ImportError:
        return None
    stats = memo_stats()
    return sum(s.entries for s in stats), sum(s.bytes for s in stats)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--games", type=int, default=1000, help="games to play (default 1000)")
    parser.add_argument("--every", type=int, default=100, help="games between reports")
    parser.add_argument(
        "--variant",
        action="append",
        choices=available_variants(),
        help="a variant to play (repeatable; default: every packaged variant, in turn)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object at the end")
    args = parser.parse_args()
    names = args.variant or list(available_variants())
    rulesets = [load_ruleset(name) for name in names]

    rows: list[dict[str, Any]] = []
    start = time.perf_counter()
    for game in range(1, args.games + 1):
        ruleset = rulesets[game % len(rulesets)]
        seats = min(max(2 + game % 3, ruleset.min_players), ruleset.max_players)
        play_game(names[game % len(names)], [RandomBot() for _ in range(seats)], seed=game)
        if game % args.every == 0:
            gc.collect()
            row: dict[str, Any] = {"games": game, "rss_mib": round(rss_mib(), 1)}
            totals = memo_totals()
            if totals is not None:
                row["memo_entries"], row["memo_kib"] = totals[0], round(totals[1] / 1024)
            row["seconds"] = round(time.perf_counter() - start, 1)
            rows.append(row)
            if not args.json:
                memos = (
                    f", memos {row['memo_entries']} entries {row['memo_kib']} KiB"
                    if totals is not None
                    else ""
                )
                print(f"{game:6d} games: RSS {row['rss_mib']:7.1f} MiB{memos} ({row['seconds']} s)")
    growth = rows[-1]["rss_mib"] - rows[0]["rss_mib"] if len(rows) > 1 else 0.0
    result = {
        "rows": rows,
        "growth_mib": round(growth, 1),
        "baseline_growth_mib": BASELINE_GROWTH_MIB,
    }
    if args.json:
        print(json.dumps(result))
        return
    if len(rows) > 1:
        print(
            f"RSS growth from game {rows[0]['games']} to {rows[-1]['games']}: {growth:.1f} MiB "
            f"(baseline {BASELINE_GROWTH_MIB} MiB, entry-bounded memos)"
        )


if __name__ == "__main__":
    main()
