"""What one seat may know: the only door from a game state to anything bot-facing.

Built by allow-list, field by field (STYLE.md): the opponent part has no field that could hold
a card or a ticket, so a field added to ``GameState`` later cannot leak by accident.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from referee.games.board.scoring import owned_routes
from referee.games.board.state import GameState, Phase
from referee.games.common.memo import memoized


@dataclass(frozen=True, slots=True)
class PlayerPublic:
    """What everyone knows about a seat."""

    seat: int
    hand_size: int  #: the number of train cards in hand (never which)
    tickets: int  #: number of tickets kept (003:91 they are secret, their count is not)
    tickets_pending: int  #: tickets drawn and not yet decided
    trains: int
    route_points: int  #: the scoring track (003:55 points are recorded as routes are claimed)
    routes: tuple[int, ...]  #: route indices claimed


@dataclass(frozen=True, slots=True)
class SeatView:
    variant: str  #: ``name@version`` of the ruleset
    num_seats: int
    seat: int  #: whose view this is
    to_act: int  #: the seat to act (-1 when the game is over)
    phase: str
    turn: int
    face_up: tuple[int, ...]  #: card kinds, -1 for an empty slot
    deck_size: int
    discards: tuple[int, ...]  #: per-card-kind counts (every discard was seen face up)
    ticket_deck_size: int
    last_round: int  #: turns left in the final round, -1 before it starts
    end_reason: str
    players: tuple[PlayerPublic, ...]
    hand: tuple[int, ...]  #: this seat's per-card-kind counts
    tickets: tuple[int, ...]  #: this seat's kept tickets (ticket indices)
    offered: tuple[int, ...]  #: tickets drawn (or dealt) to this seat, not yet decided


#: the route indices of an ownership bitmask, kept: a seat's routes change only when it
#: claims, and every view lists every seat's routes
def _owned_tuple(owned: int) -> tuple[int, ...]:
    return tuple(owned_routes(owned))


_routes_of = memoized(_owned_tuple)


def view(state: GameState, seat: int) -> SeatView:
    """The state as ``seat`` sees it."""
    if not 0 <= seat < state.num_seats:
        raise ValueError(f"seat {seat} is not in this {state.num_seats}-seat game")
    players = tuple(
        PlayerPublic(
            seat=s,
            hand_size=sum(state.hands[s]),
            tickets=len(state.tickets[s]),
            tickets_pending=len(state.offered[s]),
            trains=state.trains[s],
            route_points=state.route_points[s],
            routes=_routes_of(state.owned[s]),
        )
        for s in range(state.num_seats)
    )
    return SeatView(
        variant=state.ruleset.ident,
        num_seats=state.num_seats,
        seat=seat,
        to_act=-1 if state.phase is Phase.OVER else state.seat,
        phase=state.phase.name.lower(),
        turn=state.turn,
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
    )


def view_json(state: GameState, seat: int) -> str:
    """Canonical serialisation of a view; the leak tests compare these byte for byte."""
    return json.dumps(asdict(view(state, seat)), sort_keys=True, separators=(",", ":"))
