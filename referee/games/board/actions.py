"""The board games' actions: the shared draws and ticket choices (common/actions.py) and a
route claim, as a closed union of tiny frozen values.

A payment is the smallest value that identifies it: the colour of the non-Locomotive cards and
the number of Locomotives (identical cards are interchangeable). An all-Locomotive payment is
written with ``colour=LOCOMOTIVE`` so that every payment has exactly one spelling.
"""

from __future__ import annotations

from dataclasses import dataclass

from referee.games.common.actions import (
    DRAW_BLIND,
    DRAW_TICKETS,
    PASS,
    DrawBlind,
    DrawFaceUp,
    DrawTickets,
    KeepTickets,
    Pass,
    keep,
)

__all__ = [
    "DRAW_BLIND",
    "DRAW_TICKETS",
    "PASS",
    "Action",
    "ClaimRoute",
    "DrawBlind",
    "DrawFaceUp",
    "DrawTickets",
    "KeepTickets",
    "Pass",
    "keep",
]


@dataclass(frozen=True, slots=True)
class ClaimRoute:
    """Claim route ``route`` (index into the map's routes) paying ``length - locomotives`` cards
    of ``colour`` plus ``locomotives`` Locomotives. 003:53."""

    route: int
    colour: int
    locomotives: int


Action = DrawFaceUp | DrawBlind | ClaimRoute | DrawTickets | KeepTickets | Pass
