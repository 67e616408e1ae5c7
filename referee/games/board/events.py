"""What happened in a board-game transition, for records and for each seat's event stream:
the events both families share (common/events.py) and the board games' own, which are all
public.
"""

from __future__ import annotations

from dataclasses import dataclass

from referee.games.common.events import (
    BlindDrawn,
    DeckReshuffled,
    FaceUpDealt,
    FaceUpTaken,
    GameEnded,
    Passed,
    TicketsDrawn,
    TicketsKept,
)
from referee.games.common.events import project as project_shared

__all__ = [
    "BlindDrawn",
    "DeckReshuffled",
    "Event",
    "FaceUpDealt",
    "FaceUpFlushed",
    "FaceUpTaken",
    "GameEnded",
    "LastRoundStarted",
    "Passed",
    "RouteClaimed",
    "TicketsDrawn",
    "TicketsKept",
    "project",
]


@dataclass(frozen=True, slots=True)
class FaceUpFlushed:
    """003:73: three face-up Locomotives, the whole row discarded."""

    cards: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class RouteClaimed:
    seat: int
    route: int
    colour: int
    locomotives: int
    points: int


@dataclass(frozen=True, slots=True)
class LastRoundStarted:
    """003:101: ``seat`` ended its turn with ``trains`` left; everyone gets one final turn."""

    seat: int
    trains: int


Event = (
    FaceUpTaken
    | BlindDrawn
    | FaceUpDealt
    | FaceUpFlushed
    | DeckReshuffled
    | RouteClaimed
    | TicketsDrawn
    | TicketsKept
    | Passed
    | LastRoundStarted
    | GameEnded
)


def project(event: Event, seat: int) -> Event:
    """The event as ``seat`` may see it: the board games' own events are public, the shared
    ones hide what the shared rules hide."""
    if isinstance(event, FaceUpFlushed | RouteClaimed | LastRoundStarted):
        return event
    return project_shared(event, seat)
