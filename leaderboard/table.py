"""The leaderboard as text (for a terminal or a CI log), JSON (for programs), CSV (for a
spreadsheet) and Markdown (for a league's web page or a pull request), and the list of a
store's tournaments.

Plain aligned columns, no colour and no box-drawing: the same bytes read well in a terminal,
in a CI log and in a diff. Each pool (variant and seat count) is its own table, because
ratings from 2-player and 5-player games are not comparable.
"""

from __future__ import annotations

import csv
import io
import json
import shlex
import time
from typing import Any

from leaderboard.ratings import Standing, standings
from leaderboard.schedule import games_in
from leaderboard.store import Store, Tournament
from referee.games.protocol import printable
from referee.games.registry import matches_variant

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


def leaderboard(
    store: Store,
    variant: str | None = None,
    players: int | None = None,
    tournament_id: int | None = None,
) -> list[Pool]:
    """Every pool in the store with its table, optionally filtered.

    ``variant`` is either a full ruleset ident ("usa@1") or a bare name ("usa") that matches
    every version of it; each version stays its own pool, since a rules change may change
    what skill means. ``tournament_id`` rates that tournament's games alone.
    """
    pools = []
    for pool_variant, seats in store.pools(tournament_id):
        if variant is not None and not matches_variant(variant, pool_variant):
            continue
        if players is not None and seats != players:
            continue
        pools.append((pool_variant, seats, standings(store, pool_variant, seats, tournament_id)))
    return pools


def _game_count(players: int, table: list[Standing]) -> int:
    """Games in a pool: every game has ``players`` seats, each held by a different bot."""
    return sum(s.games for s in table) // players if players else 0


def _percent(x: float) -> str:
    return f"{100 * x:.0f}"


def _labels(table: list[Standing]) -> dict[int, str]:
    """``name version`` per bot_id; where two bots share it (the files changed but not the
    version), each also shows the start of its content hash, so the rows can be told apart."""
    plain = {s.bot.bot_id: printable(f"{s.bot.name} {s.bot.version}") for s in table}
    shared = {label for label in plain.values() if list(plain.values()).count(label) > 1}
    return {
        s.bot.bot_id: (
            f"{plain[s.bot.bot_id]} #{s.bot.content_hash[:8]}"
            if plain[s.bot.bot_id] in shared
            else plain[s.bot.bot_id]
        )
        for s in table
    }


HEADERS = _HEADERS  #: the columns of every table, as :func:`render_text` heads them


def text_rows(table: list[Standing]) -> list[tuple[str, ...]]:
    """Each row's cells exactly as :func:`render_text` prints them (bot names included):
    the league page shows the same figures, rounded the same way, as ``leaderboard show``."""
    labels = _labels(table)
    return [_row(s, labels[s.bot.bot_id]) for s in table]


DISABLED_MARK = " [disabled]"  #: after the bot's name in a row: disabled for its faults


def disabled_notes(table: list[Standing]) -> list[str]:
    """A line per bot of the table disabled for its faults (leaderboard/faults.py), with
    the tournament and why, as every text output lists them under the table."""
    labels = _labels(table)
    return [
        f"{labels[s.bot.bot_id]} in tournament #{d.tournament_id}: {d.reason}"
        for s in table
        for d in s.disabled
    ]


def _row(s: Standing, label: str) -> tuple[str, ...]:
    lo, hi = s.win_interval
    return (
        str(s.rank),
        label + (DISABLED_MARK if s.disabled else ""),
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


def tournament_title(tournament: Tournament) -> str:
    """How every output names a tournament: ``tournament #3 "spring league"``."""
    return f'tournament #{tournament.tournament_id} "{tournament.spec.name}"'


def render_text(pools: list[Pool], title: str | None = None) -> str:
    """One aligned table per pool under a heading such as ``usa@1, 4 players — 120 games``,
    below ``title`` if given. Numbers are right-aligned, the bot column left-aligned; lines
    carry no trailing spaces."""
    top = [] if title is None else [title]
    if not pools:
        return "\n".join([*top, NO_GAMES]) + "\n"
    blocks = ["\n".join(top)] if top else []
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
        lines += disabled_notes(table)
        blocks.append("\n".join(lines))
    return "\n\n".join([*blocks, LEGEND]) + "\n"


def to_json(pools: list[Pool], tournament: Tournament | None = None) -> dict[str, Any]:
    """The same tables as plain JSON values; figures are unrounded (rounding is display).
    With ``tournament`` (a table of its games alone), it is named too."""
    named = (
        {}
        if tournament is None
        else {"tournament": {"id": tournament.tournament_id, "name": tournament.spec.name}}
    )
    return {
        **named,
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
                        "disabled": [
                            {
                                "tournament": d.tournament_id,
                                "game_id": d.game_id,
                                "reason": d.reason,
                            }
                            for d in s.disabled
                        ],
                    }
                    for s in table
                ],
            }
            for variant, players, table in pools
        ],
    }


CSV_COLUMNS = (
    "variant",
    "players",
    "rank",
    "bot",
    "version",
    "bot_id",
    "rating",
    "mu",
    "sigma",
    "games",
    "wins",
    "win_rate",
    "win_low",
    "win_high",
    "avg_score",
    "faults",
    "disabled",  #: why it was disabled for its faults ('' if it was not)
)


def render_csv(pools: list[Pool]) -> str:
    """One row per bot and pool under a header row (the header alone when there are no
    games), figures unrounded as in JSON: a spreadsheet rounds for itself."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for variant, players, table in pools:
        for s in table:
            writer.writerow(
                (
                    variant,
                    players,
                    s.rank,
                    s.bot.name,
                    s.bot.version,
                    s.bot.bot_id,
                    s.rating.conservative,
                    s.rating.mu,
                    s.rating.sigma,
                    s.games,
                    s.wins,
                    s.win_rate,
                    *s.win_interval,
                    s.avg_score,
                    s.faults,
                    "; ".join(f"tournament #{d.tournament_id}: {d.reason}" for d in s.disabled),
                )
            )
    return out.getvalue()


def _markdown_cell(text: str) -> str:
    """A bot name may hold ``|``, which would end the cell."""
    return text.replace("\\", "\\\\").replace("|", "\\|")


def render_markdown(pools: list[Pool], title: str | None = None) -> str:
    """The text tables as GitHub-flavoured Markdown: a heading per pool, numbers
    right-aligned, the legend below; ``title`` as the top heading."""
    lines = [] if title is None else [f"## {_markdown_cell(title)}", ""]
    if not pools:
        return "\n".join([*lines, NO_GAMES]) + "\n"
    for variant, players, table in pools:
        labels = _labels(table)
        lines.append(f"### {_heading(variant, players, _game_count(players, table))}")
        lines.append("")
        lines.append("| " + " | ".join(_HEADERS) + " |")
        lines.append(
            "|" + "|".join(":---" if i == 1 else "---:" for i in range(len(_HEADERS))) + "|"
        )
        for s in table:
            cells = _row(s, labels[s.bot.bot_id])
            lines.append("| " + " | ".join(_markdown_cell(c) for c in cells) + " |")
        lines.append("")
        notes = disabled_notes(table)
        if notes:
            lines += [f"- {_markdown_cell(note)}" for note in notes] + [""]
    lines.append(LEGEND.replace("\n", " "))
    return "\n".join(lines) + "\n"


FORMATS = ("text", "json", "csv", "markdown")  #: what ``ttr leaderboard show --format`` takes


def render(pools: list[Pool], fmt: str, tournament: Tournament | None = None) -> str:
    """The leaderboard in ``fmt`` (one of :data:`FORMATS`), ending with a newline; a table of
    one tournament's games is headed with its name (CSV, pure data, has no heading)."""
    title = None if tournament is None else f"{tournament_title(tournament)}: its games alone"
    if fmt == "json":
        return json.dumps(to_json(pools, tournament), indent=2) + "\n"
    if fmt == "csv":
        return render_csv(pools)
    if fmt == "markdown":
        return render_markdown(pools, title)
    if fmt == "text":
        return render_text(pools, title)
    raise ValueError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")


# the tournaments of a store


def _scheduled(store: Store, t: Tournament) -> int | None:
    """Games in the tournament's schedule, or None while not every bot is validated (the
    schedule depends on how many pass)."""
    entries = store.entries(t.tournament_id)
    if len(entries) < len(t.spec.config.get("bots", ())) or not entries:
        return None
    accepted = sum(1 for _, _, ok, _ in entries if ok)
    return games_in(accepted, t.spec.players, t.spec.rounds)


def tournaments_json(store: Store, now: float | None = None) -> list[dict[str, Any]]:
    """Every tournament of the store, oldest first, with its state and games stored. The
    base seed is left out: it stays secret until the tournament is finished (and even then
    ``ttr tournament run`` is where it is shown). ``running`` judges an unfinished one's
    heartbeat at ``now`` (default: the store's clock, never a browser's)."""
    now = store.clock() if now is None else now
    counts = store.game_counts()
    skipped = store.skip_counts()
    return [
        {
            "id": t.tournament_id,
            "name": t.spec.name,
            "state": t.state,
            "variant": t.spec.variant,
            "players": t.spec.players,
            "rounds": t.spec.rounds,
            "games_stored": counts.get(t.tournament_id, 0),
            "games_scheduled": _scheduled(store, t),
            #: games of a bot disabled for its faults, left unplayed (not in games_stored)
            "games_skipped": skipped.get(t.tournament_id, 0),
            "created_at": t.created_at,
            "finished_at": t.finished_at,
            "abandoned_at": t.abandoned_at,
            #: unfinished, and its run's heartbeat fresh (Tournament.running): false for a
            #: killed run; the last heartbeat, or None once the run ended
            "running": t.running(now),
            "heartbeat_at": t.heartbeat_at,
            #: a competition server's season (leaderboard/ladder/): no schedule, never ends;
            #: its pools as [variant, players]
            "ladder": bool(t.spec.config.get("ladder")),
            "pools": [p[:2] for p in t.spec.config.get("pools", [])]
            if t.spec.config.get("ladder")
            else [],
        }
        for t in store.tournaments()
    ]


def unfinished_note(store: Store, tournament: Tournament | None = None) -> str | None:
    """One line on the store's unfinished tournament (or on ``tournament``, if given and
    unfinished) for after ``leaderboard show``'s table, which it is still changing or left
    half done: running or stopped, by its heartbeat at the store's clock. None if there is
    none; a competition server's season, which never finishes, is not one."""
    t = store.unfinished_tournament() if tournament is None else tournament
    if t is None or t.state != "unfinished" or t.spec.config.get("ladder"):
        return None
    if t.running(store.clock()):
        return f"{tournament_title(t)} is running: these tables change as it stores games"
    db = shlex.quote(str(store.path))
    return (
        f"{tournament_title(t)} is unfinished and not running (killed?): resume it with "
        f"`ttr tournament run --db {db} --resume` or give it up with "
        f"`ttr tournament abandon --db {db} --id {t.tournament_id}`"
    )


def render_tournaments(rows: list[dict[str, Any]]) -> str:
    """:func:`tournaments_json`'s rows as an aligned table; games as stored/scheduled, and
    how many were skipped for a disabled bot if any were."""
    if not rows:
        return "no tournaments in this store\n"
    headers = ("#", "name", "state", "variant", "players", "rounds", "games", "created")
    table = [headers]
    for r in rows:
        scheduled = "?" if r["games_scheduled"] is None else str(r["games_scheduled"])
        table.append(
            (
                str(r["id"]),
                r["name"],
                r["state"],
                r["variant"],
                str(r["players"]),
                "ladder" if r.get("ladder") else str(r["rounds"]),
                f"{r['games_stored']}"
                if r.get("ladder")
                else f"{r['games_stored']}/{scheduled}"
                + (f" ({r['games_skipped']} skipped)" if r.get("games_skipped") else ""),
                time.strftime("%Y-%m-%d %H:%M", time.localtime(r["created_at"])),
            )
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(headers))]
    left = {1, 2, 3, 7}
    lines = [
        "  ".join(
            cell.ljust(w) if i in left else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in table
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines) + "\n"
