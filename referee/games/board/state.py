"""The game state: one frozen, slotted value holding every fact of a game, hidden ones included.

Nothing bot-facing may read it directly: bots see ``view(state, seat)`` only. Inside it is
built for speed: hands are per-colour count tuples, claims are int bitmasks over route indices,
and a transition copies only what changed.
"""

from __future__ import annotations

from dataclasses import dataclass

from referee.games.board.events import Event
from referee.games.board.ruleset import Ruleset
from referee.games.common.phase import EMPTY, Phase

__all__ = ["EMPTY", "GameState", "Phase"]


@dataclass(frozen=True, slots=True)
class GameState:
    ruleset: Ruleset
    num_seats: int
    seed: int
    phase: Phase
    seat: int  #: the seat to act
    deck: tuple[int, ...]  #: train deck, top card last (hidden order)
    discards: tuple[int, ...]  #: per-card-kind counts of the discard pile
    face_up: tuple[int, ...]  #: the row; ``EMPTY`` for a slot left empty
    hands: tuple[tuple[int, ...], ...]  #: per seat, per-card-kind counts
    trains: tuple[int, ...]  #: trains left, per seat
    route_points: tuple[int, ...]  #: points scored for routes so far, per seat
    owned: tuple[int, ...]  #: per seat, bitmask of route indices claimed
    blocked: tuple[int, ...]  #: per seat, bitmask of routes that seat may not claim
    tickets: tuple[tuple[int, ...], ...]  #: kept tickets per seat (ticket indices)
    offered: tuple[tuple[int, ...], ...]  #: tickets drawn and not yet decided, per seat
    ticket_deck: tuple[int, ...]  #: top ticket last; returns go to the front (the bottom)
    shuffles: int  #: how many reshuffles so far: each one's RNG is derived from (seed, n)
    turn: int  #: completed turns (setup choices excluded)
    last_round: int  #: turns left in the final round, -1 before it starts
    passes: int  #: consecutive passed turns (RULINGS.md 5)
    end_reason: str  #: why the game ended ('' while it runs)
    events: tuple[Event, ...]  #: what the transition into this state did

    @property
    def is_over(self) -> bool:
        return self.phase is Phase.OVER

    def card_count(self) -> int:
        """Every train card in the game, wherever it is (an invariant: the deck size)."""
        in_row = sum(1 for c in self.face_up if c != EMPTY)
        return len(self.deck) + sum(self.discards) + in_row + sum(sum(h) for h in self.hands)
