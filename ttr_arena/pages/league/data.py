"""What the league page shows, as one JSON value: the single source of the served page (and
its ``/api/league.json``) and of the static export, so the two can never disagree.

The tables are ``ttr leaderboard show``'s own (:func:`leaderboard.table.leaderboard` and
:func:`~leaderboard.table.to_json`): there is no second ranking here. The charts replay the
same rating steps (:func:`leaderboard.ratings.rating_history`) and end where the table
stands. The base seed of a tournament is never included (``tournaments_json`` leaves it
out): while a tournament runs it would tell a bot author every deal to come.

Links are relative (``games/<id>.html``), so the same value works on the server and in a
folder copied to any web host. A game id is put in a link only if it is made of the
characters the runner's ids use (:data:`GAME_ID`); the server looks ids up in the store and
never turns a URL into a path.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from leaderboard.ratings import MU, SIGMA, Rating, Standing, rating_history, starting_ratings
from leaderboard.store import GameResult, Store
from leaderboard.table import HEADERS, LEGEND, leaderboard, text_rows, to_json, tournaments_json

RECENT = 50  #: recent games listed (newest first), each with its replay link
#: A chart line is thinned to at most this many points (the last always kept): a season of
#: thousands of games would otherwise make every refresh of the page megabytes long.
CHART_POINTS = 400
FAULTS_SHOWN = 5  #: fault messages listed per recent game (all are counted)
MESSAGE_CHARS = 300  #: a longer fault message is cut, with an ellipsis
#: The game ids a link or a served URL may name: what the runner writes (``t1-r2-c0-s1``).
GAME_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,199}")


def replay_url(game_id: str) -> str:
    """The relative link to a game's replay, on the server and in a static export alike."""
    return f"games/{urllib.parse.quote(game_id, safe='')}.html"


def log_url(game_id: str, seat: int) -> str:
    return f"games/{urllib.parse.quote(game_id, safe='')}/seat{seat}.log"


def records_roots(store: Store) -> dict[int, Path | None]:
    """Each tournament's records folder (resolved), None where it kept no records."""
    roots: dict[int, Path | None] = {}
    for t in store.tournaments():
        folder = t.spec.config.get("records")
        roots[t.tournament_id] = Path(folder).resolve() if isinstance(folder, str) else None
    return roots


def servable(path: str | None, root: Path | None) -> Path | None:
    """The file a stored ``record_path``/``log_path`` names, if it may be served: a regular
    file whose real path (symbolic links followed) lies inside its tournament's records
    folder. A store is a file anyone can hand over, so a path in it pointing elsewhere
    (``/etc/passwd``, or a link out of the folder) is served as nothing, not as that file."""
    if path is None or root is None:
        return None
    try:
        real = Path(path).resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    if not real.is_relative_to(root) or not real.is_file():
        return None
    return real


def league_json(
    store: Store, recent: int | None = RECENT, *, logs: bool = True, now: float | None = None
) -> dict[str, Any]:
    """The whole page's data, read in one snapshot of the store (a game committed meanwhile
    shows in the next refresh, never in half of this one). ``recent`` None lists every game.
    ``logs=False`` leaves every seat's log link out (``"log": null``): the competition server
    shows a bot's logs to its author alone, never on the public page. ``now`` is when an
    unfinished tournament's heartbeat is judged (``tournaments_json``; default: the store's
    clock, so a browser's wrong clock cannot make a killed run look alive)."""
    now = store.clock() if now is None else now
    with store.snapshot():
        tournaments = tournaments_json(store, now)
        roots = records_roots(store)
        bots = store.bots()
        table_pools = leaderboard(store)
        pools = []
        every_game: list[GameResult] = []
        for (variant, players, table), shown in zip(
            table_pools, to_json(table_pools)["pools"], strict=True
        ):
            games = store.games(variant=variant, players=players)
            every_game += games
            for row, cells in zip(shown["standings"], text_rows(table), strict=True):
                row["label"] = cells[1]
                row["cells"] = list(cells)
            start = starting_ratings(store, variant, players)
            shown["history"] = _history(games, table, start)
            shown["head_to_head"] = _head_to_head(games, table)
            pools.append(shown)
        names = {t["id"]: t["name"] for t in tournaments}
        disabled = [
            {
                "tournament": d.tournament_id,
                "tournament_name": names.get(d.tournament_id, ""),
                "bot": bots[d.bot_id].name,
                "version": bots[d.bot_id].version,
                "bot_id": d.bot_id,
                "game_id": d.game_id,
                "reason": d.reason,
            }
            for d in store.disabled()
        ]
        left_out = []
        for t in tournaments:
            for bot, _path, accepted, reason in store.entries(t["id"]):
                if not accepted:
                    left_out.append(
                        {
                            "tournament": t["id"],
                            "tournament_name": t["name"],
                            "bot": bot.name,
                            "version": bot.version,
                            "bot_id": bot.bot_id,
                            "reason": reason,
                        }
                    )
    newest = sorted(every_game, key=lambda g: (-g.finished_at, g.game_id))[:recent]  # None: all
    names = {bot_id: (b.name, b.version) for bot_id, b in bots.items()}
    return {
        "generated_at": now,
        "legend": LEGEND,
        "columns": list(HEADERS),
        "band": "mu - 3 sigma .. mu",
        "tournaments": tournaments,
        "pools": pools,
        "recent": [_recent(g, names, roots.get(g.tournament_id), logs) for g in newest],
        "left_out": left_out,
        "disabled": disabled,  #: bots disabled for their faults mid-tournament, with why
    }


def _thin(points: list[list[float]], most: int = CHART_POINTS) -> list[list[float]]:
    """At most ``most`` points, evenly spaced, the first and last kept."""
    if len(points) <= most:
        return points
    step = (len(points) - 1) / (most - 1)
    return [points[round(i * step)] for i in range(most)]


def _point(position: int, rating: Rating) -> list[float]:
    return [position, rating.mu, rating.sigma, rating.conservative]


def _history(
    games: Sequence[GameResult], table: list[Standing], start: dict[int, Rating]
) -> list[dict[str, Any]]:
    """Per bot of the table (in its order): its rating before its first game of the pool
    (a new bot's, or where a ladder version started) and after each game it played, as [game
    number in the pool, mu, sigma, mu - 3 sigma]."""
    steps = rating_history(games, start=start)
    fresh = Rating(MU, SIGMA)
    lines = []
    for s in table:
        points = steps.get(s.bot.bot_id, [])
        first = [_point(points[0][0] - 1, start.get(s.bot.bot_id, fresh))] if points else []
        lines.append(
            {
                "bot_id": s.bot.bot_id,
                "points": _thin(first + [_point(n, rating) for n, rating in points]),
            }
        )
    return lines


def _head_to_head(games: Sequence[GameResult], table: list[Standing]) -> list[list[Any]]:
    """A matrix in the table's order: row bot against column bot, over the games they sat
    in together, how often the row bot finished ahead, behind, or level (same rank). The
    diagonal is null."""
    order = {s.bot.bot_id: i for i, s in enumerate(table)}
    n = len(table)
    counts = [[[0, 0, 0, 0] for _ in range(n)] for _ in range(n)]  # games, ahead, behind, ties
    for game in games:
        seats = [(order[s.bot_id], s.rank) for s in game.seats if s.bot_id in order]
        for i, rank_i in seats:
            for j, rank_j in seats:
                if i == j:
                    continue
                cell = counts[i][j]
                cell[0] += 1
                cell[1 if rank_i < rank_j else 2 if rank_i > rank_j else 3] += 1
    return [
        [
            None if i == j else dict(zip(("games", "ahead", "behind", "ties"), c, strict=True))
            for j, c in enumerate(row)
        ]
        for i, row in enumerate(counts)
    ]


def _cut(text: str, most: int = MESSAGE_CHARS) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"


def _recent(
    game: GameResult, names: dict[int, tuple[str, str]], root: Path | None, logs: bool = True
) -> dict[str, Any]:
    linkable = GAME_ID.fullmatch(game.game_id) is not None
    record = servable(game.record_path, root) if linkable else None
    return {
        "id": game.game_id,
        "tournament": game.tournament_id,
        "variant": game.variant,
        "players": game.num_seats,
        "round": game.round,
        "end_reason": game.end_reason,
        "decisions": game.decisions,
        "finished_at": game.finished_at,
        "replay": replay_url(game.game_id) if record is not None else None,
        "replay_error": (
            "its record file is missing (or outside the records folder)"
            if record is None and game.record_path is not None
            else None
        ),
        "seats": [
            {
                "seat": s.seat,
                "bot_id": s.bot_id,
                "bot": names.get(s.bot_id, ("?", ""))[0],
                "version": names.get(s.bot_id, ("?", ""))[1],
                "score": s.score,
                "rank": s.rank,
                "faults": s.faults,
                "defaults": s.defaults,
                "log": (
                    log_url(game.game_id, s.seat)
                    if logs and linkable and servable(s.log_path, root) is not None
                    else None
                ),
            }
            for s in game.seats
        ],
        "faults_total": len(game.faults),
        "faults": [
            {
                "seat": f.seat,
                "turn": f.turn,
                "kind": f.kind,
                "rule": f.rule,
                "message": _cut(f.message),
            }
            for f in game.faults[:FAULTS_SHOWN]
        ],
    }
