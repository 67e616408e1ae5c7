"""What happened in a Card Game transition, for records and for each seat's event stream.

The events both families share (a face-up card taken or dealt, a blind draw, tickets drawn and
kept, a pass, a reshuffle, the end) are defined once in referee/games/common/events.py and
projected by its :func:`~referee.games.common.events.project`; the Card Game's own events are
below.
As there, every event is public except where a field says otherwise, and :func:`project`
rebuilds hidden fields as ``None`` (an allow-list: nothing hidden is ever copied).
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


@dataclass(frozen=True, slots=True)
class MovedOnTrack:
    """Step 1 (000:109-117): the top card of each Railyard row went face down onto the seat's
    On-the-Track stack. The count is public; the cards are hidden from every seat, the owner
    included, unless the ruleset lets owners look at their stack (000:124-129)."""

    seat: int
    count: int
    cards: tuple[int, ...] | None  #: card kinds moved (hidden, see above)
    shown_to_owner: bool  #: the ruleset's ``owners_see_stack`` when it happened


@dataclass(frozen=True, slots=True)
class SuitPlaced:
    """000:125-126, 000:130-141: a suit went face up into ``seat``'s Railyard."""

    seat: int
    colour: int
    cards: int
    locomotives: int


@dataclass(frozen=True, slots=True)
class MixPlaced:
    """000:128, 000:157-159: three cards of three colours, one in each colour's row."""

    seat: int
    colours: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class TrainRobbed:
    """000:163-169: ``robber`` played more cards of ``colour`` than ``seat`` had in its row,
    so ``seat`` discarded the whole row (``cards`` of the colour, ``locomotives`` on top)."""

    robber: int
    seat: int
    colour: int
    cards: int
    locomotives: int


@dataclass(frozen=True, slots=True)
class FinalRoundStarted:
    """000:191-193: the last card left the Train deck; every seat gets one more turn.
    ``seat`` drew it (-1 when the second deck's deal used the last card)."""

    seat: int
    deck: int  #: which deck ran out: 1, or 2 for a four-player game's second deck


@dataclass(frozen=True, slots=True)
class PlayStalled:
    """The engine's guard against a game that never ends (docs/rules.md, "The Card Game"):
    ``turns`` turns have ended since a Train card last moved or a ticket was last kept; the
    deck is scored now, as if it had run out."""

    turns: int


@dataclass(frozen=True, slots=True)
class StackScored:
    """000:199-209: ``seat``'s On-the-Track stack is shown and used to complete tickets; the
    completed ones are set aside face down (their identity was public at the check, 000:185-191).
    Public: the verification is done in front of everyone."""

    seat: int
    deck: int  #: 1 for the first scoring, 2 for a four-player game's second
    stack: tuple[int, ...]  #: per-card-kind counts of the stack, revealed
    completed: tuple[int, ...]  #: ticket indices completed by this scoring
    points: int


@dataclass(frozen=True, slots=True)
class CardsDealt:
    """000:206-208: a four-player game's second deck deals each seat new cards."""

    seat: int
    count: int
    cards: tuple[int, ...] | None  #: card kinds dealt, hidden from every other seat


@dataclass(frozen=True, slots=True)
class TicketsRevealed:
    """000:243-245: at the end, the tickets still in hand are shown and subtracted."""

    seat: int
    tickets: tuple[int, ...]
    points: int  #: the sum subtracted (>= 0)


@dataclass(frozen=True, slots=True)
class BonusAwarded:
    """000:246-249, 000:216-223: the Big Cities Bonus card ``city`` (index into the ruleset's
    ``big_cities``) goes to every seat tied for the most completed tickets naming it."""

    city: int
    seats: tuple[int, ...]
    points: int


CardEvent = (
    FaceUpTaken
    | BlindDrawn
    | FaceUpDealt
    | DeckReshuffled
    | TicketsDrawn
    | TicketsKept
    | Passed
    | GameEnded
    | MovedOnTrack
    | SuitPlaced
    | MixPlaced
    | TrainRobbed
    | FinalRoundStarted
    | PlayStalled
    | StackScored
    | CardsDealt
    | TicketsRevealed
    | BonusAwarded
)


def project(event: CardEvent, seat: int) -> CardEvent:
    """The event as ``seat`` may see it."""
    match event:
        case MovedOnTrack(seat=s, count=n, shown_to_owner=shown):
            if s == seat and shown:
                return event
            return MovedOnTrack(s, n, None, shown)
        case CardsDealt(seat=s, count=n) if s != seat:
            return CardsDealt(s, n, None)
        case (
            FaceUpTaken()
            | BlindDrawn()
            | FaceUpDealt()
            | DeckReshuffled()
            | TicketsDrawn()
            | TicketsKept()
            | Passed()
            | GameEnded()
        ):
            return _shared(project_shared(event, seat))
        case _:
            return event


def _shared(event: object) -> CardEvent:
    """The shared projection, narrowed back to the Card Game's union (it returns the same
    class it was given)."""
    assert isinstance(
        event,
        FaceUpTaken
        | BlindDrawn
        | FaceUpDealt
        | DeckReshuffled
        | TicketsDrawn
        | TicketsKept
        | Passed
        | GameEnded,
    )
    return event


__all__ = [
    "BlindDrawn",
    "BonusAwarded",
    "CardEvent",
    "CardsDealt",
    "DeckReshuffled",
    "FaceUpDealt",
    "FaceUpTaken",
    "FinalRoundStarted",
    "GameEnded",
    "MixPlaced",
    "MovedOnTrack",
    "Passed",
    "PlayStalled",
    "StackScored",
    "SuitPlaced",
    "TicketsDrawn",
    "TicketsKept",
    "TicketsRevealed",
    "TrainRobbed",
    "project",
]
