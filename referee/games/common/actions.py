"""The actions both rules families share: drawing a train card (blind or face up), drawing
tickets, keeping tickets and passing mean the same in the board games and the card game, so
they are defined once, here, and each family adds its own (a route claim; Railyard
placements). Tiny frozen values: identical cards are interchangeable, so an action is the
smallest value that identifies it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class DrawFaceUp:
    """Take the face-up card in ``slot`` (0-based). 003:45, 003:49."""

    slot: int


@dataclass(frozen=True, slots=True)
class DrawBlind:
    """Take the top card of the train deck. 003:45."""


@dataclass(frozen=True, slots=True)
class DrawTickets:
    """Draw destination tickets from the top of the ticket deck. 003:59."""


@dataclass(frozen=True, slots=True)
class KeepTickets:
    """Keep these of the offered tickets (ticket indices, ascending); the rest go to the bottom
    of the ticket deck. 003:17, 003:59."""

    tickets: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Pass:
    """Only legal when the seat has no other legal action (RULINGS.md 5)."""


DRAW_BLIND = DrawBlind()


DRAW_TICKETS = DrawTickets()


PASS = Pass()


def keep(*tickets: int) -> KeepTickets:
    """A ``KeepTickets`` in its canonical (ascending) form."""
    return KeepTickets(tuple(sorted(tickets)))
