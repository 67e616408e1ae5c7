"""What one seat may know of a Card Game: the only door from a state to anything bot-facing.

Built by allow-list, field by field, like the board games' view (referee/games/board/view.py): the
opponent part has no field that could hold a card of a hand or a stack, or a ticket in hand.
Public: the face-up row, the Railyards (cards are placed face up, 000:120-123), the discards,
every count (hand, stack, tickets, decks), the tickets completed at a scoring (shown for the
check, 000:185-191) and their points. Secret: hands, tickets in hand and on offer (only their
owner sees them), deck orders, and every On-the-Track stack, its owner's included (000:119-122)
unless the ruleset lets owners look (000:124-129).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from referee.games.card.state import CardGameState, Phase


@dataclass(frozen=True, slots=True)
class CardPlayerPublic:
    """What everyone knows about a seat."""

    seat: int
    hand_size: int  #: Train cards in hand (never which)
    tickets: int  #: tickets in hand, not yet completed (never which)
    tickets_pending: int  #: tickets drawn and not yet decided
    #: the Railyard, per colour (shared card order, 8 colours): the row's Train cards ...
    railyard: tuple[int, ...]
    #: ... and the Locomotives on top of that row
    railyard_locomotives: tuple[int, ...]
    stack_size: int  #: cards in the On-the-Track stack (never which)
    completed: tuple[int, ...]  #: tickets completed at the scorings so far (ticket indices)
    ticket_points: int  #: points of those tickets


@dataclass(frozen=True, slots=True)
class CardSeatView:
    variant: str  #: ``name@version`` of the ruleset
    num_seats: int
    seat: int  #: whose view this is
    to_act: int  #: the seat to act (-1 when the game is over)
    phase: str
    turn: int
    deck_number: int  #: 1, or 2 during a four-player game's second deck
    face_up: tuple[int, ...]  #: card kinds, -1 for an empty slot
    deck_size: int
    discards: tuple[int, ...]  #: per-card-kind counts
    ticket_deck_size: int
    last_round: int  #: turns left in the final round, -1 before it starts
    end_reason: str
    players: tuple[CardPlayerPublic, ...]
    hand: tuple[int, ...]  #: this seat's per-card-kind counts
    tickets: tuple[int, ...]  #: this seat's tickets in hand
    offered: tuple[int, ...]  #: tickets drawn (or dealt) to this seat, not yet decided
    #: this seat's On-the-Track stack (per-card-kind counts) where the ruleset lets owners
    #: look (000:124-129); ``None`` otherwise
    stack: tuple[int, ...] | None


def view(state: CardGameState, seat: int) -> CardSeatView:
    """The state as ``seat`` sees it."""
    if not 0 <= seat < state.num_seats:
        raise ValueError(f"seat {seat} is not in this {state.num_seats}-seat game")
    players = tuple(
        CardPlayerPublic(
            seat=s,
            hand_size=sum(state.hands[s]),
            tickets=len(state.tickets[s]),
            tickets_pending=len(state.offered[s]),
            railyard=state.yard_cards[s],
            railyard_locomotives=state.yard_locos[s],
            stack_size=sum(state.stacks[s]),
            completed=state.completed[s],
            ticket_points=state.ticket_points[s],
        )
        for s in range(state.num_seats)
    )
    return CardSeatView(
        variant=state.ruleset.ident,
        num_seats=state.num_seats,
        seat=seat,
        to_act=-1 if state.phase is Phase.OVER else state.seat,
        phase=state.phase.name.lower(),
        turn=state.turn,
        deck_number=state.deck_number,
        face_up=state.face_up,
        deck_size=len(state.deck),
        discards=state.discards,
        ticket_deck_size=len(state.ticket_deck),
        last_round=state.last_round,
        end_reason=state.end_reason,
        players=players,
        hand=state.hands[seat],
        tickets=state.tickets[seat],
        offered=state.offered[seat],
        stack=state.stacks[seat] if state.ruleset.owners_see_stack else None,
    )


def view_json(state: CardGameState, seat: int) -> str:
    """Canonical serialisation of a view; the leak tests compare these byte for byte."""
    return json.dumps(asdict(view(state, seat)), sort_keys=True, separators=(",", ":"))
