"""The final scores as a plain-text table: what ``ttr play``, ``ttr selfplay`` and the text
replay print at the end of a game."""

from __future__ import annotations

from typing import Any

from referee.games.board.scoring import connected
from referee.games.registry import AnyRuleset, family_of


def format_outcome(ruleset: AnyRuleset, result: Any, names: list[str] | None = None) -> str:
    """A plain-text score table with every scoring component the ruleset uses (its family's
    columns), so a bot author can see why a score is what it is: the columns add up to the
    total."""
    columns: list[tuple[str, int, list[str]]] = []  # header, width, cells (sorted seat order)
    seats = sorted(result.seats, key=lambda s: (s.rank, s.seat))

    def column(header: str, cells: list[str], left: bool = False) -> None:
        width = max(len(header), *(len(c) for c in cells))
        columns.append((header, -width if left else width, cells))

    column("rank", [str(s.rank) for s in seats])
    column("seat", [names[s.seat] if names else f"seat {s.seat}" for s in seats], left=True)
    column("total", [str(s.total) for s in seats])
    for header, cell in family_of(ruleset).columns(ruleset):
        column(header, [cell(s) for s in seats])

    def row(cells: list[str]) -> str:
        return "  ".join(
            f"{cell:<{-w}}" if w < 0 else f"{cell:>{w}}"
            for cell, (_, w, _) in zip(cells, columns, strict=True)
        ).rstrip()

    header = row([h for h, _, _ in columns])
    lines = [header, "-" * len(header)]
    lines.extend(row([cells[i] for _, _, cells in columns]) for i in range(len(seats)))
    return "\n".join(lines)


#: Names of the board games' bonus cards (``ruleset.BONUS_KINDS``) as the replays write them.
_BONUS_NAMES = {"longest_path": "Longest path", "globetrotter": "Globetrotter"}


def score_details(ruleset: Any, result: Any) -> list[dict[str, Any]]:
    """Why each seat's total is what it is, in seat order: its tickets completed and failed
    (``[ticket index, points]``, points signed as they count) and its parts (``[words,
    points]``, adding up to the total: routes, tickets, each bonus the variant gives). Made
    from the final outcome, which every seat is sent at the end (EndGame, referee/match.py):
    public once the game is over, in every perspective."""
    board = family_of(ruleset).name == "board"
    tickets = ruleset.tickets
    out: list[dict[str, Any]] = []
    for s in sorted(result.seats, key=lambda s: s.seat):
        done = s.tickets_completed if board else s.completed
        missed = s.tickets_failed if board else s.failed
        parts: list[list[Any]] = []
        if board:
            parts.append(["routes", s.route_points])
            parts.append(["tickets", s.ticket_points])
            for bonus in ruleset.bonuses:
                words = _BONUS_NAMES.get(bonus.kind, bonus.kind)
                if bonus.kind == "longest_path":
                    words += f" ({s.longest_path} trains)"
                else:
                    words += f" ({len(done)} ticket{'' if len(done) == 1 else 's'} completed)"
                parts.append([words, s.bonus_points(bonus.kind)])
            if ruleset.attraction_points:
                where = ", ".join(ruleset.game_map.cities[c].name for c in s.attractions) or "none"
                parts.append([f"Tourist Attractions ({where})", s.attraction_points])
        else:
            parts.append(["tickets completed", s.completed_points])
            parts.append(["tickets left in hand", -s.failed_points])
            for c in s.bonuses:
                city = ruleset.big_cities[c]
                parts.append([f"Big City {city.name}", city.points])
        out.append(
            {
                "seat": s.seat,
                "total": s.total,
                "completed": [[t, tickets[t].points] for t in done],
                "failed": [[t, -tickets[t].points] for t in missed],
                "parts": parts,
            }
        )
    return out


def detail_lines(details: list[dict[str, Any]], describe: Any) -> list[str]:
    """:func:`score_details` in words, four lines a seat (the end of ``ttr replay show``)."""
    lines: list[str] = []
    for d in details:

        def listed(pairs: list[list[int]]) -> str:
            return ", ".join(f"{describe.ticket(t)} ({p:+d})" for t, p in pairs) or "none"

        lines.append(f"{describe.seat(d['seat'])}: {d['total']} points")
        lines.append(f"  completed: {listed(d['completed'])}")
        lines.append(f"  failed: {listed(d['failed'])}")
        lines.append("  = " + " ".join(f"{w} {p:+d}" for w, p in d["parts"]))
    return lines


def tickets_so_far(ruleset: Any, view: Any) -> tuple[list[int], list[int]]:
    """A seat's own tickets as its own view tells them: (completed so far, not yet). The board
    games: a path of the seat's routes joins the ticket's cities (as the final scoring will
    judge it); the card game: completed at a scoring (public), or still in hand. Only ``view``
    is read, so nothing another seat holds can show (the text replay's ``--seat`` and the HTML
    replay's seat files use it)."""
    me = view.players[view.seat]
    if family_of(ruleset).name != "board":
        return list(me.completed), list(view.tickets)
    owned = sum(1 << r for r in me.routes)
    tickets = ruleset.tickets
    done = [
        t for t in view.tickets if connected(ruleset.game_map, owned, tickets[t].a, tickets[t].b)
    ]
    return done, [t for t in view.tickets if t not in done]
