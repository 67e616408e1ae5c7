"""The Card Game's state: one frozen, slotted value holding every fact, hidden ones included.

Nothing bot-facing may read it directly: bots see ``view(state, seat)`` only. Built for speed
like the board games' state: hands, Railyards and On-the-Track stacks are per-card-kind count
tuples (identical cards are interchangeable, so counts are the whole truth), and a transition
copies only what changed. The phases are shared (referee/games/common/phase.py): the same
four decisions (starting tickets, a turn's action, the second card, the ticket choice).
"""

from __future__ import annotations

from dataclasses import dataclass

from referee.games.card.events import CardEvent
from referee.games.card.ruleset import CardRuleset
from referee.games.common.cards import LOCOMOTIVE
from referee.games.common.phase import EMPTY, Phase

__all__ = ["EMPTY", "CardGameState", "Phase"]


@dataclass(frozen=True, slots=True)
class CardGameState:
    ruleset: CardRuleset
    num_seats: int
    seed: int
    phase: Phase
    seat: int  #: the seat to act
    deck: tuple[int, ...]  #: Train deck, top card last (hidden order)
    discards: tuple[int, ...]  #: per-card-kind counts (every discarded card was seen face up)
    face_up: tuple[int, ...]  #: the row; ``EMPTY`` for a slot the empty deck could not refill
    hands: tuple[tuple[int, ...], ...]  #: per seat, per-card-kind counts (secret)
    #: per seat, per colour: the Train cards of that colour's Railyard row (public)
    yard_cards: tuple[tuple[int, ...], ...]
    #: per seat, per colour: the Locomotives on top of that colour's row (public)
    yard_locos: tuple[tuple[int, ...], ...]
    #: per seat, per-card-kind counts of the On-the-Track stack (secret, its size public)
    stacks: tuple[tuple[int, ...], ...]
    tickets: tuple[tuple[int, ...], ...]  #: tickets in hand per seat (secret, count public)
    offered: tuple[tuple[int, ...], ...]  #: tickets drawn or dealt and not yet decided
    #: tickets completed at a scoring and set aside, per seat (public since the check)
    completed: tuple[tuple[int, ...], ...]
    ticket_points: tuple[int, ...]  #: points of the completed tickets, per seat
    ticket_deck: tuple[int, ...]  #: top ticket last; returns go to the front (the bottom)
    shuffles: int  #: shuffles so far: each one's RNG is derived from (seed, n)
    turn: int  #: completed turns (setup choices excluded)
    deck_number: int  #: 1, or 2 once a four-player game plays its second deck
    last_round: int  #: turns left in the final round, -1 before it starts
    #: turns ended since a Train card last moved or a ticket was last kept (engine.IDLE_ROUNDS)
    idle_turns: int
    end_reason: str  #: why the game ended ('' while it runs)
    events: tuple[CardEvent, ...]  #: what the transition into this state did

    @property
    def is_over(self) -> bool:
        return self.phase is Phase.OVER

    def yard_size(self, seat: int, colour: int) -> int:
        """Cards in ``seat``'s row of ``colour``, Locomotives on top included."""
        return self.yard_cards[seat][colour] + self.yard_locos[seat][colour]

    def card_count(self) -> int:
        """Every Train card in the game, wherever it is (an invariant: the deck size)."""
        return (
            len(self.deck)
            + sum(self.discards)
            + sum(1 for c in self.face_up if c != EMPTY)
            + sum(sum(h) for h in self.hands)
            + sum(sum(y) for y in self.yard_cards)
            + sum(sum(y) for y in self.yard_locos)
            + sum(sum(s) for s in self.stacks)
        )

    def kind_counts(self) -> tuple[int, ...]:
        """Train cards of each kind, wherever they are (each is conserved: 000:8-10)."""
        out = list(self.discards)
        for c in self.deck:
            out[c] += 1
        for c in self.face_up:
            if c != EMPTY:
                out[c] += 1
        for seat in range(self.num_seats):
            for kind, n in enumerate(self.hands[seat]):
                out[kind] += n
            for kind, n in enumerate(self.stacks[seat]):
                out[kind] += n
            for colour, n in enumerate(self.yard_cards[seat]):
                out[colour] += n
            out[LOCOMOTIVE] += sum(self.yard_locos[seat])
        return tuple(out)
