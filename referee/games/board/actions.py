"""Actions: a closed union of tiny frozen values.

A payment is the smallest value that identifies it: the colour of the non-Locomotive cards and
the number of Locomotives (identical cards are interchangeable). An all-Locomotive payment is
written with ``colour=LOCOMOTIVE`` so that every payment has exactly one spelling.
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
class ClaimRoute:
    """Claim route ``route`` (index into the map's routes) paying ``length - locomotives`` cards
    of ``colour`` plus ``locomotives`` Locomotives. 003:53."""

    route: int
    colour: int
    locomotives: int


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


Action = DrawFaceUp | DrawBlind | ClaimRoute | DrawTickets | KeepTickets | Pass

DRAW_BLIND = DrawBlind()
DRAW_TICKETS = DrawTickets()
PASS = Pass()


def keep(*tickets: int) -> KeepTickets:
    """A ``KeepTickets`` in its canonical (ascending) form."""
    return KeepTickets(tuple(sorted(tickets)))
