"""The rules of Ticket to Ride: The Card Game, the second rules family beside the board games.

Pure and deterministic like the board engine (referee/games/board/engine.py), with the same shape:
``new_game(ruleset, num_seats, seed)``, ``legal_actions(state)``, ``apply(state, action)``
raising :class:`IllegalActionError` / :class:`MalformedActionError` with a rule id. Chance
lives in the state (the shuffled decks) and every shuffle draws from an RNG derived from
``(seed, purpose)``, so the same seed and the same actions give the same game on every machine.

Rulebook references are ``000:LINE`` (shared/seeds/000_b9e41e9f26451a5e.txt, whose columns
are interleaved: one sentence may be split over lines that sit apart). Where the text leaves a
situation open, the reading chosen is written beside its code and listed in docs/rules.md
("The Card Game").

A turn (000:105-107 "A player's turn consists of 2 separate steps"): Step 1, moving the top
card of each Railyard row onto the On-the-Track stack, is automatic and happens as the turn
begins (it is no decision). Step 2 is one decision (``Phase.TURN``), followed by the second
card of a draw (``Phase.SECOND_CARD``) or the choice of the drawn tickets
(``Phase.KEEP_TICKETS``) as decisions of their own, as in the board games.
"""

from __future__ import annotations

import random
from itertools import combinations
from typing import Final, NoReturn, assert_never

from referee.games.card.actions import (
    DRAW_BLIND,
    DRAW_TICKETS,
    PASS,
    CardAction,
    DrawBlind,
    DrawFaceUp,
    DrawTickets,
    KeepTickets,
    Pass,
    PlaceMix,
    PlaceSuit,
)
from referee.games.card.events import (
    BlindDrawn,
    BonusAwarded,
    CardEvent,
    CardsDealt,
    DeckReshuffled,
    FaceUpDealt,
    FaceUpTaken,
    FinalRoundStarted,
    GameEnded,
    MixPlaced,
    MovedOnTrack,
    Passed,
    PlayStalled,
    StackScored,
    SuitPlaced,
    TicketsDrawn,
    TicketsKept,
    TicketsRevealed,
    TrainRobbed,
)
from referee.games.card.ruleset import CardRuleset
from referee.games.card.scoring import best_completion, big_city_winners, ticket_points
from referee.games.card.state import EMPTY, CardGameState, Phase
from referee.games.common.cards import LOCOMOTIVE, NUM_CARD_KINDS, NUM_COLOURS, card_name
from referee.games.common.errors import IllegalActionError, MalformedActionError
from referee.games.common.seats import replaced
from referee.games.common.tickets import (
    checked_keep,
    keep_choices,
    new_keep_cache,
)

#: Engineering guard, not a rule: when this many full rounds of turns (``IDLE_ROUNDS`` times
#: the number of seats) have ended since a Train card last moved anywhere or a ticket was
#: last kept, the current deck is scored as if it had run out. Drawing a card is possible
#: until the deck runs out (000:114-118), and once it has the game ends within a round
#: (000:191-193), so the rulebook needs no such rule: only seats that choose, all of them,
#: turn after turn, to draw tickets and keep none (000:180-181 allows it) could otherwise
#: play forever. Such a turn changes nothing but the ticket deck's order, and the guard
#: waits for Step 1 to empty every Railyard first, so it ends only positions that are
#: frozen (docs/rules.md, "The Card Game").
IDLE_ROUNDS: Final = 3

_NO_CARDS: Final = (0,) * NUM_CARD_KINDS
_NO_COLOURS: Final = (0,) * NUM_COLOURS


def _rng(seed: int, purpose: str) -> random.Random:
    """A private RNG for one use (string seeds hash with SHA-512: the same everywhere)."""
    return random.Random(f"ttr-cardgame/{seed}/{purpose}")


def _kinds(counts: tuple[int, ...]) -> tuple[int, ...]:
    """Card kinds, one entry per card, ascending, of per-kind counts."""
    return tuple(kind for kind, n in enumerate(counts) for _ in range(n))


def _tally(kinds: list[int]) -> tuple[int, ...]:
    out = [0] * NUM_CARD_KINDS
    for c in kinds:
        out[c] += 1
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# a transition in progress: a mutable copy of the fields, frozen once at the end


class _Tx:
    __slots__ = (
        "completed",
        "deck",
        "deck_number",
        "discards",
        "end_reason",
        "events",
        "face_up",
        "hands",
        "idle_turns",
        "last_round",
        "offered",
        "phase",
        "rules",
        "s",
        "seat",
        "shuffles",
        "stacks",
        "ticket_deck",
        "ticket_points",
        "tickets",
        "turn",
        "yard_cards",
        "yard_locos",
    )

    def __init__(self, s: CardGameState) -> None:
        self.s = s
        self.rules = s.ruleset
        self.phase = s.phase
        self.seat = s.seat
        self.deck = s.deck
        self.discards = s.discards
        self.face_up = s.face_up
        self.hands = s.hands
        self.yard_cards = s.yard_cards
        self.yard_locos = s.yard_locos
        self.stacks = s.stacks
        self.tickets = s.tickets
        self.offered = s.offered
        self.completed = s.completed
        self.ticket_points = s.ticket_points
        self.ticket_deck = s.ticket_deck
        self.shuffles = s.shuffles
        self.turn = s.turn
        self.deck_number = s.deck_number
        self.last_round = s.last_round
        self.idle_turns = s.idle_turns
        self.end_reason = s.end_reason
        self.events: list[CardEvent] = []

    def freeze(self) -> CardGameState:
        s = self.s
        return CardGameState(
            self.rules,
            s.num_seats,
            s.seed,
            self.phase,
            self.seat,
            self.deck,
            self.discards,
            self.face_up,
            self.hands,
            self.yard_cards,
            self.yard_locos,
            self.stacks,
            self.tickets,
            self.offered,
            self.completed,
            self.ticket_points,
            self.ticket_deck,
            self.shuffles,
            self.turn,
            self.deck_number,
            self.last_round,
            self.idle_turns,
            self.end_reason,
            tuple(self.events),
        )

    def add_to_hand(self, seat: int, card: int) -> None:
        hand = list(self.hands[seat])
        hand[card] += 1
        self.hands = replaced(self.hands, seat, tuple(hand))

    def draw_top(self) -> int:
        card = self.deck[-1]
        self.deck = self.deck[:-1]
        return card

    # -- turns ----------------------------------------------------------------------------------

    def begin_turn(self) -> None:
        """Step 1 (000:109-117): "he must take 1 card from each colored row of Train cards in
        his Railyard and place these cards face down, in a single, separate stack: his
        On-the-Track stack." 000:130-132: skipped on the first turn and with an empty
        Railyard (a seat's first turn always finds its Railyard empty).

        Which card of a row: its top one. 000:133-135 Locomotives "must all be placed on top
        of the row", so they move first, one per turn, then the row's coloured cards. A
        three-colour mix lies in three rows of one card (000:170-175: John's mix gives him a
        blue row of one that Paul can rob), so all three move at the next Step 1."""
        seat = self.seat
        cards = self.yard_cards[seat]
        if not any(cards):
            return
        locos = self.yard_locos[seat]
        new_cards = list(cards)
        new_locos = list(locos)
        stack = list(self.stacks[seat])
        moved: list[int] = []
        for c in range(NUM_COLOURS):
            if cards[c]:
                if locos[c]:
                    new_locos[c] -= 1
                    moved.append(LOCOMOTIVE)
                else:
                    new_cards[c] -= 1
                    moved.append(c)
        for c in moved:
            stack[c] += 1
        self.idle_turns = 0  # cards moved: the position is not frozen (IDLE_ROUNDS)
        self.yard_cards = replaced(self.yard_cards, seat, tuple(new_cards))
        self.yard_locos = replaced(self.yard_locos, seat, tuple(new_locos))
        self.stacks = replaced(self.stacks, seat, tuple(stack))
        self.events.append(
            MovedOnTrack(seat, len(moved), tuple(sorted(moved)), self.rules.owners_see_stack)
        )

    def end_turn(self, idle: bool = False) -> None:
        """Close the acting seat's turn: the final round, the idle guard, the next seat.
        ``idle``: Step 2 moved no card and kept no ticket (tickets drawn and all returned, or
        a pass)."""
        seat = self.seat
        n = self.s.num_seats
        self.turn += 1
        self.idle_turns = self.idle_turns + 1 if idle else 0
        if self.last_round > 0:
            # 000:191-193 "each player gets 1 more turn, including the player who drew the
            # last card from the deck": the final round is the n turns after the one that
            # emptied the deck; a passed turn counts.
            self.last_round -= 1
            if self.last_round == 0:
                self.score_deck("deck_out")
                return
        elif not self.deck:
            # 000:191 "When the last card is drawn from the Train deck" (checked as the turn
            # ends, so a turn whose draw emptied the deck is over first).
            self.last_round = n
            self.events.append(FinalRoundStarted(seat, self.deck_number))
        elif self.idle_turns >= IDLE_ROUNDS * n:
            self.events.append(PlayStalled(self.idle_turns))
            self.score_deck("stalled")
            return
        self.seat = (seat + 1) % n  # 000:105-106 "Play then proceeds clockwise"
        self.phase = Phase.TURN
        self.begin_turn()

    # -- the end of a deck ------------------------------------------------------------------------

    def score_deck(self, reason: str) -> None:
        """000:199-209: each seat completes what its On-the-Track stack can (exactly the best
        completion, scoring.best_completion); completed tickets are set aside with their points
        (000:185-191). Then a four-player game's first deck goes on to the second deck
        (000:196-214); otherwise the game ends (000:192-193)."""
        rules = self.rules
        n = self.s.num_seats
        for seat in range(n):
            stack = self.stacks[seat]
            done = best_completion(rules, stack, self.tickets[seat])
            points = ticket_points(rules, done)
            self.completed = replaced(
                self.completed, seat, tuple(sorted(self.completed[seat] + done))
            )
            self.tickets = replaced(
                self.tickets, seat, tuple(t for t in self.tickets[seat] if t not in done)
            )
            self.ticket_points = replaced(
                self.ticket_points, seat, self.ticket_points[seat] + points
            )
            self.events.append(StackScored(seat, self.deck_number, stack, done, points))
        if self.deck_number == 1 and n >= rules.second_deck_min_players:
            self.second_deck()
        else:
            self.finish(reason)

    def second_deck(self) -> None:
        """000:199-214, four players: tickets not completed and cards in hand are kept; "All
        other Train cards, including those used for just-completed Tickets, and any unused
        cards left in the players' On-the-Track stack or Railyard, are discarded. The discards
        are thoroughly reshuffled and form a new Train deck. Deal each player 4 Train cards
        ... Play then resumes exactly as before, beginning with the player to the left of the
        player who took the last turn, until the Train deck runs out again."

        Readings (docs/rules.md): the face-up row is among "all other Train cards" and goes
        into the new deck; the 4 cards are dealt one at a time round the table from the seat
        that plays next, then a new row of 5 is laid as at setup (000:41-46), so "exactly as
        before" has a row to draw from; a deck too short for all that deals what it has, and a
        deck emptied by the deal starts the final round at once. The second deck ends like the
        first: one more turn each after its last card is drawn."""
        rules = self.rules
        n = self.s.num_seats
        last = self.seat
        pool = list(self.discards)
        for c in self.deck:  # cards left only when the deck is scored by the stall guard
            pool[c] += 1
        for c in self.face_up:
            if c != EMPTY:
                pool[c] += 1
        for seat in range(n):
            for kind, k in enumerate(self.stacks[seat]):
                pool[kind] += k
            for colour, k in enumerate(self.yard_cards[seat]):
                pool[colour] += k
            pool[LOCOMOTIVE] += sum(self.yard_locos[seat])
        cards = list(_kinds(tuple(pool)))
        _rng(self.s.seed, f"shuffle/{self.shuffles}").shuffle(cards)
        self.shuffles += 1
        self.deck = tuple(cards)
        self.discards = _NO_CARDS
        self.face_up = (EMPTY,) * rules.face_up
        self.stacks = (_NO_CARDS,) * n
        self.yard_cards = (_NO_COLOURS,) * n
        self.yard_locos = (_NO_COLOURS,) * n
        self.events.append(DeckReshuffled(len(cards)))
        self.deck_number = 2
        self.last_round = -1
        self.idle_turns = 0
        start = (last + 1) % n
        dealt: list[list[int]] = [[] for _ in range(n)]
        for _ in range(rules.second_deck_deal):
            for k in range(n):
                if self.deck:
                    seat = (start + k) % n
                    card = self.draw_top()
                    dealt[seat].append(card)
                    self.add_to_hand(seat, card)
        for k in range(n):
            seat = (start + k) % n
            self.events.append(CardsDealt(seat, len(dealt[seat]), tuple(sorted(dealt[seat]))))
        row = list(self.face_up)
        for slot in range(rules.face_up):
            if self.deck:
                row[slot] = self.draw_top()
                self.events.append(FaceUpDealt(slot, row[slot]))
        self.face_up = tuple(row)
        self.seat = start
        self.phase = Phase.TURN
        if not self.deck:
            self.last_round = n
            self.events.append(FinalRoundStarted(-1, 2))
        self.begin_turn()

    def finish(self, reason: str) -> None:
        """000:243-249: tickets still in hand are shown and subtracted; the Big Cities Bonus
        cards go to the most completed tickets naming each city, ties all scoring."""
        rules = self.rules
        for seat in range(self.s.num_seats):
            held = tuple(sorted(self.tickets[seat]))
            self.events.append(TicketsRevealed(seat, held, ticket_points(rules, held)))
        for city, seats in enumerate(big_city_winners(rules, self.completed)):
            if seats:
                self.events.append(BonusAwarded(city, seats, rules.big_cities[city].points))
        self.phase = Phase.OVER
        self.end_reason = reason
        self.events.append(GameEnded(reason))


# ---------------------------------------------------------------------------------------------
# setup


def new_game(ruleset: CardRuleset, num_seats: int, seed: int) -> CardGameState:
    """A game after the deal, waiting for seat 0 to choose its starting tickets.

    000:37-43: each player gets 1 Locomotive, the rest is shuffled and 7 dealt to each;
    000:44-46: 5 face up; 000:49-57: 6 tickets each, kept >= 1 in the first decisions (one per
    seat, in seat order). Seat 0 starts (000:105 "The youngest player goes first": the
    referee seats the starting player at 0 and tournaments rotate seats).
    """
    if isinstance(num_seats, bool) or not isinstance(num_seats, int):
        raise ValueError(f"number of seats must be an integer, got {num_seats!r}")
    if not ruleset.min_players <= num_seats <= ruleset.max_players:
        raise ValueError(
            f"{ruleset.title} is for {ruleset.min_players}-{ruleset.max_players} players, "
            f"not {num_seats}"
        )
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed must be an integer, got {seed!r}")

    counts = list(ruleset.deck)
    counts[LOCOMOTIVE] -= ruleset.starting_locomotives * num_seats
    deck = list(_kinds(tuple(counts)))
    _rng(seed, "deck").shuffle(deck)
    hands = []
    for _ in range(num_seats):
        hand = [0] * NUM_CARD_KINDS
        hand[LOCOMOTIVE] = ruleset.starting_locomotives
        for _ in range(ruleset.hand_size):
            hand[deck.pop()] += 1
        hands.append(tuple(hand))
    events: list[CardEvent] = []
    row = []
    for slot in range(ruleset.face_up):
        row.append(deck.pop())
        events.append(FaceUpDealt(slot, row[-1]))
    tickets = list(range(len(ruleset.tickets)))
    _rng(seed, "tickets").shuffle(tickets)
    offered = []
    for _ in range(num_seats):
        dealt = tickets[-ruleset.setup_tickets_dealt :]
        del tickets[-ruleset.setup_tickets_dealt :]
        offered.append(tuple(reversed(dealt)))
    zeros = (0,) * num_seats
    return CardGameState(
        ruleset=ruleset,
        num_seats=num_seats,
        seed=seed,
        phase=Phase.SETUP_TICKETS,
        seat=0,
        deck=tuple(deck),
        discards=_NO_CARDS,
        face_up=tuple(row),
        hands=tuple(hands),
        yard_cards=(_NO_COLOURS,) * num_seats,
        yard_locos=(_NO_COLOURS,) * num_seats,
        stacks=(_NO_CARDS,) * num_seats,
        tickets=((),) * num_seats,
        offered=tuple(offered),
        completed=((),) * num_seats,
        ticket_points=zeros,
        ticket_deck=tuple(tickets),
        shuffles=0,
        turn=0,
        deck_number=1,
        last_round=-1,
        idle_turns=0,
        end_reason="",
        events=tuple(events),
    )


# ---------------------------------------------------------------------------------------------
# legal actions


_FACE_UP: Final = tuple(DrawFaceUp(i) for i in range(64))
_KEEP_CHOICES = new_keep_cache("card.engine._KEEP_CHOICES")


def _keep_choices(offered: tuple[int, ...], minimum: int) -> tuple[KeepTickets, ...]:
    """Every subset of ``offered`` with at least ``minimum`` tickets (000:54, 000:180-181:
    the minimum may be none), smallest first, each ascending."""
    return keep_choices(offered, minimum, _KEEP_CHOICES, at_least_one=False)


def _placements_for(
    key: tuple[tuple[int, ...], int, tuple[int, ...], int, int],
) -> tuple[PlaceSuit | PlaceMix, ...]:
    """Every placement a hand allows: suits by colour, size and Locomotives, then mixes.

    ``key`` = (hand, the seat's own colours as a bitmask, per colour the largest opponent row,
    suit_min, mix_size). 000:125-126 a suit of >= 2 Train cards of one colour, Locomotives
    counted (000:153-155 "A suit of 4 Train cards in green, including 2 Locomotives") but at
    least one card of the colour, the row the Locomotives sit on (000:133-135); 000:128,
    000:157-159 exactly 3 of 3 colours, no Locomotive; 000:160-162 never a colour of the
    seat's own Railyard; 000:163-165 a colour in an opponent's Railyard only with more cards
    than its row there. Row sizes count Locomotives on both sides (docs/rules.md), so a single
    mix card can never beat a row: a mix takes only colours no Railyard holds.
    """
    hand, own, opp, suit_min, mix_size = key
    locos = hand[LOCOMOTIVE]
    out: list[PlaceSuit | PlaceMix] = []
    free: list[int] = []
    for c in range(NUM_COLOURS):
        have = hand[c]
        if not have or own >> c & 1:
            continue
        beat = opp[c]
        if not beat:
            free.append(c)
        for k in range(1, have + 1):
            for loco in range(max(0, suit_min - k, beat + 1 - k), locos + 1):
                out.append(PlaceSuit(c, k, loco))
    out.extend(PlaceMix(combo) for combo in combinations(free, mix_size))
    return tuple(out)


#: Not memoized: a hand and the Railyards seldom recur (26,302 distinct keys in 26,363 calls of
#: 200 four-player random games), so a memo cost its sizing and upkeep and saved nothing.
_placements = _placements_for


def _placement_key(
    state: CardGameState,
) -> tuple[tuple[int, ...], int, tuple[int, ...], int, int]:
    seat = state.seat
    own = 0
    for c, k in enumerate(state.yard_cards[seat]):
        if k:
            own |= 1 << c
    opp = [0] * NUM_COLOURS
    for other in range(state.num_seats):
        if other == seat:
            continue
        cards, locos = state.yard_cards[other], state.yard_locos[other]
        for c in range(NUM_COLOURS):
            size = cards[c] + locos[c]
            if size > opp[c]:
                opp[c] = size
    rules = state.ruleset
    return (state.hands[seat], own, tuple(opp), rules.suit_min, rules.mix_size)


def legal_actions(state: CardGameState) -> tuple[CardAction, ...]:
    """Every legal action of the seat to act, in a fixed order (the wire sends indices into
    it): draws (blind, then face-up slots), placements, the ticket draw; a pass only when
    nothing else is legal."""
    phase = state.phase
    if phase is Phase.TURN:
        out: list[CardAction] = []
        if state.deck:
            # 000:147-151 as in the board game; 000:194-198 not once the deck has run out.
            out.append(DRAW_BLIND)
            out.extend(_FACE_UP[i] for i, c in enumerate(state.face_up) if c != EMPTY)
        out.extend(_placements(_placement_key(state)))
        if state.ticket_deck:
            out.append(DRAW_TICKETS)
        return tuple(out) if out else (PASS,)
    if phase is Phase.SECOND_CARD:
        # 000:108-111 a face-up Locomotive counts as two picks: never the second card.
        return (
            DRAW_BLIND,
            *(_FACE_UP[i] for i, c in enumerate(state.face_up) if c != EMPTY and c != LOCOMOTIVE),
        )
    if phase is Phase.KEEP_TICKETS:
        return _keep_choices(state.offered[state.seat], state.ruleset.tickets_keep_min)
    if phase is Phase.SETUP_TICKETS:
        return _keep_choices(state.offered[state.seat], state.ruleset.setup_tickets_keep_min)
    return ()


# ---------------------------------------------------------------------------------------------
# apply


def apply(state: CardGameState, action: CardAction) -> CardGameState:
    """The state after ``action``; raises :class:`IllegalActionError` naming the broken rule
    (or :class:`MalformedActionError` for a value that is no action) and leaves ``state`` as it
    was (states are immutable)."""
    phase = state.phase
    if phase is Phase.OVER:
        raise IllegalActionError("game.over", "the game is over; no action is legal")
    tx = _Tx(state)
    seat = state.seat
    match action:
        case DrawBlind():
            if phase is not Phase.TURN and phase is not Phase.SECOND_CARD:
                _wrong_phase(state, "draw a train card")
            _check_deck(state)
            card = tx.draw_top()
            tx.add_to_hand(seat, card)
            tx.events.append(BlindDrawn(seat, card))
            # 000:111-112 "Locomotives drawn blindly ... count as regular (single) picks"
            _after_pick(tx, first=phase is Phase.TURN)
        case DrawFaceUp(slot=slot):
            if phase is not Phase.TURN and phase is not Phase.SECOND_CARD:
                _wrong_phase(state, "draw a train card")
            if (
                isinstance(slot, bool)
                or not isinstance(slot, int)
                or not 0 <= slot < len(state.face_up)
            ):
                raise MalformedActionError(
                    "action.slot",
                    f"face-up slot {slot!r} does not exist (0-{len(state.face_up) - 1})",
                )
            _check_deck(state)
            card = state.face_up[slot]
            if card == EMPTY:  # only with an empty deck, refused above; kept for safety
                raise IllegalActionError("draw.slot_empty", f"face-up slot {slot} is empty")
            if card == LOCOMOTIVE and phase is Phase.SECOND_CARD:
                raise IllegalActionError(
                    "draw.second_locomotive",
                    "a face-up Locomotive counts as a 2 card pick: it cannot be the second "
                    "card (000:108-111)",
                )
            tx.add_to_hand(seat, card)
            tx.events.append(FaceUpTaken(seat, slot, card))
            # 000:104-107 "immediately replaced, by revealing a new card from the Train deck"
            # (the deck holds a card: face-up draws need one, _check_deck)
            replacement = tx.draw_top()
            tx.face_up = (*state.face_up[:slot], replacement, *state.face_up[slot + 1 :])
            tx.events.append(FaceUpDealt(slot, replacement))
            if card == LOCOMOTIVE:
                # 000:108-111 "Locomotives drawn face-up count as a 2 card pick; the player's
                # turn ends immediately thereafter."
                tx.end_turn()
            else:
                _after_pick(tx, first=phase is Phase.TURN)
        case PlaceSuit():
            if phase is not Phase.TURN:
                _wrong_phase(state, "place cards in the Railyard")
            _place_suit(state, tx, action)
            tx.end_turn()
        case PlaceMix():
            if phase is not Phase.TURN:
                _wrong_phase(state, "place cards in the Railyard")
            _place_mix(state, tx, action)
            tx.end_turn()
        case DrawTickets():
            if phase is not Phase.TURN:
                _wrong_phase(state, "draw destination tickets")
            if not state.ticket_deck:
                raise IllegalActionError(
                    "tickets.deck_empty", "the ticket deck is empty (000:178-179)"
                )
            # 000:178-179 "draws 4 new Destination Tickets from the top"; a shorter deck
            # gives what it has (docs/rules.md, as 003:93 in the board game).
            n = min(state.ruleset.tickets_drawn, len(state.ticket_deck))
            drawn = tuple(reversed(state.ticket_deck[-n:]))
            tx.ticket_deck = state.ticket_deck[:-n]
            tx.offered = replaced(state.offered, seat, drawn)
            tx.phase = Phase.KEEP_TICKETS
            tx.events.append(TicketsDrawn(seat, n, drawn))
        case KeepTickets(tickets=kept):
            if phase is Phase.SETUP_TICKETS:
                minimum = state.ruleset.setup_tickets_keep_min  # 000:54 "at least 1"
            elif phase is Phase.KEEP_TICKETS:
                minimum = state.ruleset.tickets_keep_min  # 000:180-181 "including none"
            else:
                _wrong_phase(state, "keep tickets")
            kept_sorted = _check_keep(state, kept, minimum)
            returned = tuple(t for t in state.offered[seat] if t not in kept_sorted)
            tx.tickets = replaced(state.tickets, seat, state.tickets[seat] + kept_sorted)
            tx.offered = replaced(state.offered, seat, ())
            tx.events.append(TicketsKept(seat, len(kept_sorted), len(returned), kept_sorted))
            if phase is Phase.SETUP_TICKETS:
                # 000:56-57 "Unwanted Tickets are shuffled back into the Ticket deck" (each
                # seat's returns as it decides: nobody draws tickets before every seat has)
                if returned:
                    pile = list(returned + state.ticket_deck)
                    _rng(state.seed, f"shuffle/{state.shuffles}").shuffle(pile)
                    tx.shuffles += 1
                    tx.ticket_deck = tuple(pile)
                if seat + 1 < state.num_seats:
                    tx.seat = seat + 1
                else:
                    tx.seat = 0
                    tx.phase = Phase.TURN
                    tx.begin_turn()  # the first turn: Step 1 is skipped (000:130-132)
            else:
                # 000:181-182 "Unwanted Tickets are placed back to the bottom of the Ticket
                # deck" (the bottom is the front of the tuple; the first returned ends deepest)
                tx.ticket_deck = returned + state.ticket_deck
                tx.end_turn(idle=not kept_sorted)
        case Pass():
            if phase is not Phase.TURN or legal_actions(state) != (PASS,):
                raise IllegalActionError(
                    "pass.not_allowed", "passing is legal only with no other legal action"
                )
            tx.events.append(Passed(seat))
            tx.end_turn(idle=True)
        case _:
            if isinstance(
                action,
                DrawBlind | DrawFaceUp | PlaceSuit | PlaceMix | DrawTickets | KeepTickets | Pass,
            ):
                assert_never(action)
            raise MalformedActionError("action.type", f"{action!r} is not an action")
    return tx.freeze()


def _wrong_phase(state: CardGameState, what: str) -> NoReturn:
    expected = {
        Phase.SETUP_TICKETS: "choose which starting tickets to keep",
        Phase.TURN: "draw cards, place cards in the Railyard or draw tickets",
        Phase.SECOND_CARD: "draw the second train card",
        Phase.KEEP_TICKETS: "choose which drawn tickets to keep",
        Phase.OVER: "nothing (the game is over)",
    }[state.phase]
    raise IllegalActionError(
        "turn.phase", f"cannot {what} now: seat {state.seat} must {expected} (000:135-143)"
    )


def _check_deck(state: CardGameState) -> None:
    if not state.deck:
        raise IllegalActionError(
            "draw.deck_out",
            "the Train deck has run out: no Train card may be drawn, face up or blind; "
            "draw tickets or place cards instead (000:194-198)",
        )


def _after_pick(tx: _Tx, first: bool) -> None:
    """After the first pick the same seat picks again, unless that pick emptied the deck:
    000:194-196 "If there is only 1 Train card left to pick up, a player may decide to use his
    turn to draw this single card", and once the deck has run out no card may be drawn
    (000:196-198). After the second pick the turn ends.

    000:102 "draws up to 2 Train cards" is read with 000:147-149 ("Same rules as for drawing
    Train cards in the Ticket to Ride boardgame", where two are drawn): the second pick is a
    decision of its own and must be made while a card can be drawn; "up to" is the face-up
    Locomotive (000:108-111) and the last card (000:194-196) (docs/rules.md)."""
    if first and tx.deck:
        tx.phase = Phase.SECOND_CARD
        return
    tx.end_turn()


def _check_keep(state: CardGameState, kept: object, minimum: int) -> tuple[int, ...]:
    return checked_keep(state.offered[state.seat], kept, minimum, dealt="dealt", rules="000:54")


def _ints(**values: object) -> None:
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int):
            raise MalformedActionError(
                f"action.{name}", f"{name} must be an integer, got {value!r}"
            )


def _check_colour_free(state: CardGameState, colour: int, count: int) -> None:
    """000:160-165: a colour of the seat's own Railyard never; one in an opponent's Railyard
    only with more cards than its row there (Locomotives counted on both sides)."""
    seat = state.seat
    if state.yard_cards[seat][colour]:
        raise IllegalActionError(
            "place.own_colour",
            f"{card_name(colour)} is already in seat {seat}'s Railyard: that colour cannot be "
            "played until its row is gone (000:160-162)",
        )
    for other in range(state.num_seats):
        if other != seat:
            there = state.yard_size(other, colour)
            if there and count <= there:
                raise IllegalActionError(
                    "place.robbing",
                    f"seat {other} has {there} card(s) in its {card_name(colour)} row: playing "
                    f"{card_name(colour)} takes more than that, not {count} (000:163-165)",
                )


def _rob(state: CardGameState, tx: _Tx, colour: int) -> None:
    """000:165-169 "his opponent must immediately discard all his original cards of that
    color from his Railyard. This is called Train robbing." The whole row goes, Locomotives
    on top of it included (they were played as part of that suit)."""
    n = state.num_seats
    seat = state.seat
    discards = list(tx.discards)
    for k in range(1, n):
        other = (seat + k) % n
        cards = state.yard_cards[other][colour]
        if not cards:
            continue
        locos = state.yard_locos[other][colour]
        discards[colour] += cards
        discards[LOCOMOTIVE] += locos
        row_cards = list(tx.yard_cards[other])
        row_locos = list(tx.yard_locos[other])
        row_cards[colour] = 0
        row_locos[colour] = 0
        tx.yard_cards = replaced(tx.yard_cards, other, tuple(row_cards))
        tx.yard_locos = replaced(tx.yard_locos, other, tuple(row_locos))
        tx.events.append(TrainRobbed(seat, other, colour, cards, locos))
    tx.discards = tuple(discards)


def _place_suit(state: CardGameState, tx: _Tx, action: PlaceSuit) -> None:
    colour, cards, locos = action.colour, action.cards, action.locomotives
    _ints(colour=colour, cards=cards, locomotives=locos)
    if not 0 <= colour < NUM_COLOURS:
        raise MalformedActionError(
            "action.colour",
            f"a suit's colour is one of the {NUM_COLOURS} colours (0-{NUM_COLOURS - 1}), "
            f"not {colour}: Locomotives join a suit of a colour (000:133-135)",
        )
    if cards < 0 or locos < 0:
        raise MalformedActionError("action.cards", "card counts cannot be negative")
    rules = state.ruleset
    seat = state.seat
    if cards < 1:
        # 000:133-135 Locomotives "may be played as part of that suit, but must all be placed
        # on top of the row": a suit is a row of its colour, so it holds a card of that colour.
        raise IllegalActionError(
            "place.suit_colour",
            f"a suit holds at least one {card_name(colour)} card, the row its Locomotives sit "
            "on top of (000:133-135)",
        )
    if cards + locos < rules.suit_min:
        # 000:125-126 "A suit of 2 or more Train cards of the same color"; Locomotives count
        # toward it: 000:153-155 "A suit of 4 Train cards in green, including 2 Locomotives".
        raise IllegalActionError(
            "place.suit_size",
            f"a suit is {rules.suit_min} or more Train cards, Locomotives included, not "
            f"{cards + locos} (000:125-126, 000:153-155)",
        )
    hand = list(state.hands[seat])
    if hand[colour] < cards or hand[LOCOMOTIVE] < locos:
        raise IllegalActionError(
            "place.cards",
            f"seat {seat} holds {hand[colour]} {card_name(colour)} and {hand[LOCOMOTIVE]} "
            f"locomotive, not the {cards} + {locos} placed (000:120-123)",
        )
    _check_colour_free(state, colour, cards + locos)
    hand[colour] -= cards
    hand[LOCOMOTIVE] -= locos
    tx.hands = replaced(state.hands, seat, tuple(hand))
    tx.events.append(SuitPlaced(seat, colour, cards, locos))
    _rob(state, tx, colour)
    # 000:130-135 one row, Locomotives on top
    tx.yard_cards = replaced(tx.yard_cards, seat, replaced(tx.yard_cards[seat], colour, cards))
    tx.yard_locos = replaced(tx.yard_locos, seat, replaced(tx.yard_locos[seat], colour, locos))


def _place_mix(state: CardGameState, tx: _Tx, action: PlaceMix) -> None:
    colours = action.colours
    if not isinstance(colours, tuple) or not all(
        isinstance(c, int) and not isinstance(c, bool) for c in colours
    ):
        raise MalformedActionError(
            "action.colours", f"colours must be a tuple of ints, got {colours!r}"
        )
    if not all(0 <= c < NUM_CARD_KINDS for c in colours):
        raise MalformedActionError("action.colours", f"no such card kind in {colours!r}")
    if list(colours) != sorted(colours):
        raise MalformedActionError(
            "action.colours", f"list a mix's colours ascending, not {colours!r}"
        )
    rules = state.ruleset
    if len(colours) != rules.mix_size:
        raise IllegalActionError(
            "place.mix_size",
            f"a mix is exactly {rules.mix_size} cards, not {len(colours)} (000:157-158)",
        )
    if LOCOMOTIVE in colours:
        raise IllegalActionError(
            "place.mix_locomotive",
            "Locomotives can never be played as part of a mix (000:158-159)",
        )
    if len(set(colours)) != len(colours):
        raise IllegalActionError(
            "place.mix_colours", "a mix is cards of different colours, one each (000:128)"
        )
    seat = state.seat
    hand = list(state.hands[seat])
    missing = [card_name(c) for c in colours if not hand[c]]
    if missing:
        raise IllegalActionError(
            "place.cards", f"seat {seat} holds no {', '.join(missing)} (000:120-123)"
        )
    for c in colours:
        _check_colour_free(state, c, 1)
    cards = list(state.yard_cards[seat])
    for c in colours:
        hand[c] -= 1
        cards[c] = 1  # each card its own colour's row (000:170-175)
    tx.hands = replaced(state.hands, seat, tuple(hand))
    tx.yard_cards = replaced(state.yard_cards, seat, tuple(cards))
    tx.events.append(MixPlaced(seat, colours))


__all__ = ["IDLE_ROUNDS", "apply", "legal_actions", "new_game"]
