"""The Card Game's actions: the shared draw and ticket actions plus two placements.

Drawing a train card (blind or face up), drawing tickets, keeping tickets and passing mean the
same in both families, so they are the shared values (referee/games/common/actions.py, the one
place they are defined); only placing cards in a Railyard is new. Like a board-game payment,
a placement is the smallest value that identifies it: identical cards are interchangeable.
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


@dataclass(frozen=True, slots=True)
class PlaceSuit:
    """Place a suit in the Railyard: ``cards`` Train cards of ``colour`` (at least 1) with
    ``locomotives`` Locomotives on top of the row, at least 2 cards in all (the ruleset's
    ``suit_min``; 000:153-155 counts the Locomotives). 000:125-126, 000:130-141."""

    colour: int
    cards: int
    locomotives: int


@dataclass(frozen=True, slots=True)
class PlaceMix:
    """Place exactly 3 cards of 3 different colours, no Locomotive, one in each colour's row;
    ``colours`` ascending. 000:128, 000:157-159."""

    colours: tuple[int, ...]


def mix(*colours: int) -> PlaceMix:
    """A ``PlaceMix`` in its canonical (ascending) form."""
    return PlaceMix(tuple(sorted(colours)))


CardAction = DrawFaceUp | DrawBlind | PlaceSuit | PlaceMix | DrawTickets | KeepTickets | Pass

__all__ = [
    "DRAW_BLIND",
    "DRAW_TICKETS",
    "PASS",
    "CardAction",
    "DrawBlind",
    "DrawFaceUp",
    "DrawTickets",
    "KeepTickets",
    "Pass",
    "PlaceMix",
    "PlaceSuit",
    "keep",
    "mix",
]
