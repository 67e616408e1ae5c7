"""The leaderboard as text (for a terminal or a CI log) and as JSON (for anything else).

Plain aligned columns, no colour and no box-drawing: the same bytes read well in a terminal,
in a CI log and in a diff. Each pool (variant and seat count) is its own table, because
ratings from 2-player and 5-player games are not comparable.
"""

from __future__ import annotations

from typing import Any

from leaderboard.ratings import Standing, standings
from leaderboard.store import Store

Pool = tuple[str, int, list[Standing]]  #: (variant ident, seats per game, the table)

NO_GAMES = "no games recorded: nothing to rank yet"
LEGEND = (
    "rating: mu - 3 sigma (TrueSkill, conservative). win%: in brackets, its 95% Wilson\n"
    "interval. A first place shared in a tie counts as a win."
)

_HEADERS = (
    "#",
    "bot",
    "rating",
    "mu",
    "sigma",
    "games",
    "wins",
    "win% (95% CI)",
    "avg score",
    "faults",
)


def leaderboard(store: Store, variant: str | None = None, players: int | None = None) -> list[Pool]:
    """Every pool in the store with its table, optionally filtered.

    ``variant`` is either a full ruleset ident ("usa@1") or a bare name ("usa") that matches
    every version of it; each version stays its own pool, since a rules change may change
    what skill means.
    """
    pools = []
    for pool_variant, seats in store.pools():
        if variant is not None and variant not in (pool_variant, pool_variant.split("@")[0]):
            continue
        if players is not None and seats != players:
            continue
        pools.append((pool_variant, seats, standings(store, pool_variant, seats)))
    return pools


def _game_count(players: int, table: list[Standing]) -> int:
    """Games in a pool: every game has ``players`` seats, each held by a different bot."""
    return sum(s.games for s in table) // players if players else 0


def _percent(x: float) -> str:
    return f"{100 * x:.0f}"


def _labels(table: list[Standing]) -> dict[int, str]:
    """``name version`` per bot_id; where two bots share it (the files changed but not the
    version), each also shows the start of its content hash, so the rows can be told apart."""
    plain = {s.bot.bot_id: f"{s.bot.name} {s.bot.version}" for s in table}
    shared = {label for label in plain.values() if list(plain.values()).count(label) > 1}
    return {
        s.bot.bot_id: (
            f"{plain[s.bot.bot_id]} #{s.bot.content_hash[:8]}"
            if plain[s.bot.bot_id] in shared
            else plain[s.bot.bot_id]
        )
        for s in table
    }


def _row(s: Standing, label: str) -> tuple[str, ...]:
    lo, hi = s.win_interval
    return (
        str(s.rank),
        label,
        f"{s.rating.conservative:.1f}",
        f"{s.rating.mu:.2f}",
        f"{s.rating.sigma:.2f}",
        str(s.games),
        str(s.wins),
        f"{_percent(s.win_rate)}% ({_percent(lo)}-{_percent(hi)})",
        f"{s.avg_score:.1f}",
        str(s.faults),
    )


def _heading(variant: str, players: int, games: int) -> str:
    return f"{variant}, {players} players — {games} game{'' if games == 1 else 's'}"


def render_text(pools: list[Pool]) -> str:
    """One aligned table per pool under a heading such as ``usa@1, 4 players — 120 games``.
    Numbers are right-aligned, the bot column left-aligned; lines carry no trailing spaces."""
    if not pools:
        return NO_GAMES + "\n"
    blocks = []
    for variant, players, table in pools:
        labels = _labels(table)
        rows = [_HEADERS, *(_row(s, labels[s.bot.bot_id]) for s in table)]
        widths = [max(len(row[i]) for row in rows) for i in range(len(_HEADERS))]

        def line(row: tuple[str, ...], widths: list[int] = widths) -> str:
            cells = [
                cell.ljust(width) if i == 1 else cell.rjust(width)
                for i, (cell, width) in enumerate(zip(row, widths, strict=True))
            ]
            return "  ".join(cells).rstrip()

        heading = _heading(variant, players, _game_count(players, table))
        lines = [heading, line(rows[0]), "  ".join("-" * w for w in widths)]
        lines += [line(row) for row in rows[1:]]
        blocks.append("\n".join(lines))
    return "\n\n".join([*blocks, LEGEND]) + "\n"


def to_json(pools: list[Pool]) -> dict[str, Any]:
    """The same tables as plain JSON values; figures are unrounded (rounding is display)."""
    return {
        "pools": [
            {
                "variant": variant,
                "players": players,
                "games": _game_count(players, table),
                "standings": [
                    {
                        "rank": s.rank,
                        "bot": s.bot.name,
                        "version": s.bot.version,
                        "bot_id": s.bot.bot_id,
                        "conservative": s.rating.conservative,
                        "mu": s.rating.mu,
                        "sigma": s.rating.sigma,
                        "games": s.games,
                        "wins": s.wins,
                        "win_rate": s.win_rate,
                        "win_interval": list(s.win_interval),
                        "avg_score": s.avg_score,
                        "faults": s.faults,
                    }
                    for s in table
                ],
            }
            for variant, players, table in pools
        ]
    }
