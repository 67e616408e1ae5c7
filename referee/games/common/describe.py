"""How a game reads in words: card names, counts, payments, and the :class:`Describer` each
family extends with its own tickets, events and views.

The text replay (``ttr replay show``), the HTML replay's step list and ``ttr play --verbose``
all print through a family's describer (``Family.describer``), so none of them asks which
game it shows. Colours are the wire's names (``CardColour``: red ... white, locomotive;
cards.py names them in the same order).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from referee.games.common import events as shared_events
from referee.games.common.cards import CARD_NAMES, LOCOMOTIVE
from referee.games.common.phase import EMPTY


def card(kind: int) -> str:
    """A card kind by its wire name (``CardColour`` without the prefix, lower case)."""
    return CARD_NAMES[kind] if 0 <= kind < len(CARD_NAMES) else f"card {kind}"


def count(n: int, noun: str) -> str:
    """``1 card``, ``2 cards``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def cards(counts: Sequence[int], empty: str = "no cards") -> str:
    """Per-kind counts (a hand, a stack) as ``2 red, 1 locomotive``."""
    parts = [f"{n} {card(kind)}" for kind, n in enumerate(counts) if n]
    return ", ".join(parts) if parts else empty


def row(face_up: Sequence[int]) -> str:
    """The face-up row, slot by slot."""
    return ", ".join("(empty)" if c == EMPTY else card(c) for c in face_up)


def payment(colour: int, count: int, locomotives: int) -> str:
    """``3 red + 1 locomotive``: ``count`` cards of ``colour`` and ``locomotives`` wild cards
    (an all-Locomotive payment is written with the Locomotive as its colour)."""
    if colour == LOCOMOTIVE:
        return f"{count + locomotives} locomotive"
    parts = [f"{count} {card(colour)}"] if count else []
    if locomotives:
        parts.append(f"{locomotives} locomotive")
    return " + ".join(parts)


_END_REASONS = {
    "last_round": "the last round is over",
    "all_passed": "every seat passed",
    "deck_out": "the Train deck ran out",
    "stalled": "play stalled",
}


class Describer:
    """What one rules family's tickets, events and views look like in words. ``names[i]`` is
    seat i as printed (``0:greedy``). The events both families share
    (common/events.py) are described here, once."""

    #: the running score a view shows for each seat (``players[i]``), and what it counts
    score_label = "points"

    def __init__(self, ruleset: Any, names: Sequence[str]) -> None:
        self.ruleset = ruleset
        self.names = names

    def seat(self, seat: int) -> str:
        return self.names[seat] if 0 <= seat < len(self.names) else f"seat {seat}"

    def ticket(self, index: int) -> str:
        raise NotImplementedError

    def tickets(self, indices: Sequence[int] | None, empty: str = "none") -> str:
        if indices is None:
            return "(hidden)"
        return ", ".join(self.ticket(i) for i in indices) if indices else empty

    def score(self, player: Any) -> int:
        raise NotImplementedError

    def event(self, e: Any) -> str:
        """One event as a sentence with its own subject."""
        match e:
            case shared_events.FaceUpTaken(seat=s, slot=slot, card=c):
                return f"{self.seat(s)} takes {card(c)} from the row (slot {slot})"
            case shared_events.BlindDrawn(seat=s, card=c):
                drawn = "" if c is None else f": {card(c)}"
                return f"{self.seat(s)} draws a card from the deck{drawn}"
            case shared_events.FaceUpDealt(slot=slot, card=c):
                return f"{card(c)} is turned face up in slot {slot}"
            case shared_events.DeckReshuffled(size=n):
                return f"the discards are shuffled into a new deck of {count(n, 'card')}"
            case shared_events.TicketsDrawn(seat=s, count=n, tickets=ts):
                shown = "" if ts is None else f": {self.tickets(ts)}"
                return f"{self.seat(s)} draws {count(n, 'ticket')}{shown}"
            case shared_events.TicketsKept(seat=s, kept_count=k, returned_count=r, kept=ts):
                shown = "" if ts is None else f" ({self.tickets(ts)})"
                return f"{self.seat(s)} keeps {count(k, 'ticket')}{shown}, returns {r}"
            case shared_events.Passed(seat=s):
                return f"{self.seat(s)} passes"
            case shared_events.GameEnded(reason=reason):
                return f"game over: {_END_REASONS.get(reason, reason.replace('_', ' '))}"
        return f"{type(e).__name__} {e}"  # an event this version cannot name: shown raw

    def standing(self, view: Any) -> str:
        """The running scores, from a view's public part."""
        scores = ", ".join(f"{self.seat(p.seat)} {self.score(p)}" for p in view.players)
        return f"{self.score_label}: {scores}"

    def view_lines(self, view: Any) -> list[str]:
        """A seat's view: what it holds, then what it knows of the others."""
        raise NotImplementedError
