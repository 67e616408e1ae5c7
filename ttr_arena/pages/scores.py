"""The final scores as a plain-text table: what ``ttr play``, ``ttr selfplay`` and the text
replay print at the end of a game."""

from __future__ import annotations

from typing import Any

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
