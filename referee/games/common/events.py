"""The events both rules families share (a face-up card taken or dealt, a blind draw, a
reshuffle, tickets drawn and kept, a pass, the end), and what one seat may see of them.

Every event is public except where a field says otherwise; :func:`project` gives the copy one
seat may see (allow-list: the hidden fields are rebuilt as ``None``, never copied). Each
family's own events module adds its events and projects them, handing these to this one.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class FaceUpTaken:
    seat: int
    slot: int
    card: int


@dataclass(frozen=True, slots=True)
class BlindDrawn:
    seat: int
    card: int | None  #: hidden from every other seat


@dataclass(frozen=True, slots=True)
class FaceUpDealt:
    """A card turned face up into ``slot`` (replacement, refill or a new row after a flush)."""

    slot: int
    card: int


@dataclass(frozen=True, slots=True)
class DeckReshuffled:
    """003:75: the discards became the new deck (its order stays hidden)."""

    size: int


@dataclass(frozen=True, slots=True)
class TicketsDrawn:
    seat: int
    count: int
    tickets: tuple[int, ...] | None  #: hidden from every other seat


@dataclass(frozen=True, slots=True)
class TicketsKept:
    seat: int
    kept_count: int
    returned_count: int
    kept: tuple[int, ...] | None  #: hidden from every other seat


@dataclass(frozen=True, slots=True)
class Passed:
    seat: int


@dataclass(frozen=True, slots=True)
class GameEnded:
    reason: str  #: ``last_round`` or ``all_passed``


def project(event: SharedEvent, seat: int) -> SharedEvent:
    """The event as ``seat`` may see it."""
    match event:
        case BlindDrawn(seat=s) if s != seat:
            return BlindDrawn(s, None)
        case TicketsDrawn(seat=s, count=n) if s != seat:
            return TicketsDrawn(s, n, None)
        case TicketsKept(seat=s, kept_count=k, returned_count=r) if s != seat:
            return TicketsKept(s, k, r, None)
        case _:
            return event


SharedEvent = (
    FaceUpTaken
    | BlindDrawn
    | FaceUpDealt
    | DeckReshuffled
    | TicketsDrawn
    | TicketsKept
    | Passed
    | GameEnded
)
