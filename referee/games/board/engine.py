"""The rules of the board games (``usa`` and the variants that share its mechanics).

Pure and deterministic: no I/O, no clock, no global random state. Chance lives in the state
(the shuffled decks) and every reshuffle draws from an RNG derived from ``(seed, n)``, so the
same seed and the same actions give the same game, byte for byte, on every machine.

Rulebook references are ``003:LINE`` (shared/seeds/003_1611490a013a284e.txt, the precise
text), ``002:LINE`` (the base-game translation) and ``001:LINE`` (New York, whose rules are the
same mechanisms with other numbers: every number is in the ruleset file); ``RULINGS n`` is
shared/design/RULINGS.md, for situations the rulebooks leave open (all listed in
docs/rules.md).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import assert_never

from referee.games.board.actions import (
    DRAW_BLIND,
    DRAW_TICKETS,
    PASS,
    Action,
    ClaimRoute,
    DrawBlind,
    DrawFaceUp,
    DrawTickets,
    KeepTickets,
    Pass,
)
from referee.games.board.events import (
    BlindDrawn,
    DeckReshuffled,
    Event,
    FaceUpDealt,
    FaceUpFlushed,
    FaceUpTaken,
    GameEnded,
    LastRoundStarted,
    Passed,
    RouteClaimed,
    TicketsDrawn,
    TicketsKept,
)
from referee.games.board.ruleset import Ruleset
from referee.games.board.state import EMPTY, GameState, Phase
from referee.games.common.cards import GRAY, LOCOMOTIVE, NUM_CARD_KINDS, NUM_COLOURS, card_name
from referee.games.common.errors import IllegalActionError, MalformedActionError
from referee.games.common.seats import replaced
from referee.games.common.tickets import (
    KeepCache,
    checked_keep,
    keep_choices,
    new_keep_cache,
)

#: Engineering guard, not a rule: flushes in a row before the row is left as it is. With the
#: guard of RULINGS 1 and the lazy reshuffle of RULINGS 2 each flush has a positive chance to
#: end the run; the worst reachable case (3 non-Locomotives and 14 Locomotives outside the
#: hands) ends a flush with about 1.5% chance, so 10,000 flushes in a row happen with
#: probability below 1e-60. The cap only makes the loop provably finite.
MAX_FLUSHES_IN_A_ROW = 10_000


def _rng(seed: int, purpose: str) -> random.Random:
    """A private RNG for one use. String seeds hash with SHA-512 (CPython's seed version 2),
    which is the same on every platform and Python version we support."""
    return random.Random(f"ttr/{seed}/{purpose}")


# ---------------------------------------------------------------------------------------------
# per-ruleset tables (precomputed once: the hot path only indexes them)


@dataclass(frozen=True, slots=True)
class _Tables:
    lengths: tuple[int, ...]  #: route length by route index
    #: payable[c][n]: bitmask of the routes a payment in colour ``c`` can reach with ``n``
    #: cards (routes of colour c or gray, length <= n)
    payable: tuple[tuple[int, ...], ...]
    #: up_to[n]: bitmask of every route of length <= n (all-Locomotive payments)
    up_to: tuple[int, ...]
    claims: tuple[tuple[tuple[ClaimRoute, ...], ...], ...]  #: [route][colour][locos]
    draw_face_up: tuple[DrawFaceUp, ...]
    keep_choices: KeepCache


_TABLES: dict[int, tuple[Ruleset, _Tables]] = {}


def _tables(ruleset: Ruleset) -> _Tables:
    """The tables of ``ruleset``, keyed by identity: hashing a whole ruleset on every call
    would cost more than the lookup saves."""
    found = _TABLES.get(id(ruleset))
    if found is not None and found[0] is ruleset:
        return found[1]
    tables = _build_tables(ruleset)
    _TABLES[id(ruleset)] = (ruleset, tables)
    return tables


def _build_tables(ruleset: Ruleset) -> _Tables:
    routes = ruleset.game_map.routes
    claims = tuple(
        tuple(
            tuple(ClaimRoute(r.index, colour, k) for k in range(r.length + 1))
            for colour in range(NUM_CARD_KINDS)
        )
        for r in routes
    )
    # Reach is capped by the trains a seat has, so tables run up to the most trains anyone has.
    top = ruleset.trains + 1
    up_to = tuple(sum(1 << r.index for r in routes if r.length <= n) for n in range(top))
    payable = tuple(
        tuple(
            sum(1 << r.index for r in routes if r.length <= n and r.colour in (colour, GRAY))
            for n in range(top)
        )
        for colour in range(NUM_COLOURS)
    )
    return _Tables(
        tuple(r.length for r in routes),
        payable,
        up_to,
        claims,
        tuple(DrawFaceUp(i) for i in range(ruleset.face_up)),
        new_keep_cache(f"board.engine keep choices of {ruleset.ident}"),
    )


def _keep_choices(
    tables: _Tables, offered: tuple[int, ...], minimum: int
) -> tuple[KeepTickets, ...]:
    """Every subset of ``offered`` with at least ``minimum`` tickets, and at least one (003:17,
    003:59)."""
    return keep_choices(offered, minimum, tables.keep_choices, at_least_one=True)


# ---------------------------------------------------------------------------------------------
# a transition in progress: a mutable copy of the fields, frozen once at the end


class _Tx:
    __slots__ = (
        "blocked",
        "deck",
        "discards",
        "end_reason",
        "events",
        "face_up",
        "hands",
        "last_round",
        "offered",
        "owned",
        "passes",
        "phase",
        "route_points",
        "ruleset",
        "s",
        "seat",
        "shuffles",
        "ticket_deck",
        "tickets",
        "trains",
        "turn",
    )

    def __init__(self, s: GameState) -> None:
        self.s = s
        self.ruleset = s.ruleset
        self.phase = s.phase
        self.seat = s.seat
        self.deck = s.deck
        self.discards = s.discards
        self.face_up = s.face_up
        self.hands = s.hands
        self.trains = s.trains
        self.route_points = s.route_points
        self.owned = s.owned
        self.blocked = s.blocked
        self.tickets = s.tickets
        self.offered = s.offered
        self.ticket_deck = s.ticket_deck
        self.shuffles = s.shuffles
        self.turn = s.turn
        self.last_round = s.last_round
        self.passes = s.passes
        self.end_reason = s.end_reason
        self.events: list[Event] = []

    def freeze(self) -> GameState:
        s = self.s
        return GameState(
            self.ruleset,
            s.num_seats,
            s.seed,
            self.phase,
            self.seat,
            self.deck,
            self.discards,
            self.face_up,
            self.hands,
            self.trains,
            self.route_points,
            self.owned,
            self.blocked,
            self.tickets,
            self.offered,
            self.ticket_deck,
            self.shuffles,
            self.turn,
            self.last_round,
            self.passes,
            self.end_reason,
            tuple(self.events),
        )

    # -- small per-seat updates ---------------------------------------------------------------

    def add_to_hand(self, seat: int, card: int) -> None:
        hand = list(self.hands[seat])
        hand[card] += 1
        self.hands = replaced(self.hands, seat, tuple(hand))

    # -- the train deck, the discards and the face-up row --------------------------------------

    def reshuffle_if_exhausted(self) -> None:
        """003:75 "When the deck is exhausted, the discards are thoroughly reshuffled to form a
        new deck." (001:139-140 the same.) Done as soon as the deck runs out, so an empty deck
        means no cards to draw anywhere (RULINGS 3)."""
        if self.deck or not any(self.discards):
            return
        cards = [kind for kind, n in enumerate(self.discards) for _ in range(n)]
        _rng(self.s.seed, f"reshuffle/{self.shuffles}").shuffle(cards)
        self.shuffles += 1
        self.deck = tuple(cards)
        self.discards = (0,) * NUM_CARD_KINDS
        self.events.append(DeckReshuffled(len(cards)))

    def draw_top(self) -> int:
        """Take the top card. The caller records the draw, then reshuffles an exhausted deck
        (so the events read in the order things happened)."""
        card = self.deck[-1]
        self.deck = self.deck[:-1]
        return card

    def fill_row(self) -> None:
        """003:49 "you immediately turn a replacement card faceup from the deck"; a slot stays
        empty only while no card is left to draw (RULINGS 3)."""
        if EMPTY not in self.face_up:
            return
        row = list(self.face_up)
        for slot, card in enumerate(row):
            if card == EMPTY:
                if not self.deck:
                    # Reshuffle only when a card is needed: after a flush the old row is then
                    # already in the discards (RULINGS 2).
                    self.reshuffle_if_exhausted()
                    if not self.deck:
                        break
                row[slot] = self.draw_top()
                self.events.append(FaceUpDealt(slot, row[slot]))
        self.face_up = tuple(row)

    def settle_row(self) -> None:
        """Refill the row and apply the three-Locomotive flush until it holds.

        003:73 "If at any time, 3 of the faceup cards are Locomotives, all 5 cards are
        immediately discarded and 5 new ones drawn to replace them." (001:135-137 the same
        with Taxi cards; 001:92-94 at setup too.) Guarded by RULINGS 1 (only
        while deck + discards + row hold enough non-Locomotives to deal a row that stands) and
        ordered by RULINGS 2 (old row to the discards first, reshuffle only if the deck runs
        out while dealing). Called after every transition that moves cards, so a row left
        standing by the guard is re-checked once a claim returns cards to the discards.
        """
        self.reshuffle_if_exhausted()
        self.fill_row()
        rules = self.ruleset
        needed = rules.face_up - rules.flush_locomotives + 1
        flushes = 0
        while self.face_up.count(LOCOMOTIVE) >= rules.flush_locomotives:
            pool_non_locos = (
                len(self.deck)
                - self.deck.count(LOCOMOTIVE)
                + sum(self.discards)
                - self.discards[LOCOMOTIVE]
                + sum(1 for c in self.face_up if c not in (EMPTY, LOCOMOTIVE))
            )
            if pool_non_locos < needed or flushes >= MAX_FLUSHES_IN_A_ROW:
                break
            flushes += 1
            old = tuple(c for c in self.face_up if c != EMPTY)
            discards = list(self.discards)
            for c in old:
                discards[c] += 1
            self.discards = tuple(discards)
            self.face_up = (EMPTY,) * rules.face_up
            self.events.append(FaceUpFlushed(old))
            self.fill_row()
        # 003:75 an exhausted deck is reshuffled now that the row stands. Not earlier: had a
        # deck of exactly 5 been reshuffled as soon as a new row emptied it, the next flush
        # would deal the old row back, and two 3-Locomotive rows could swap forever (RULINGS 2).
        self.reshuffle_if_exhausted()

    # -- turn bookkeeping --------------------------------------------------------------------

    def end_turn(self, passed: bool = False) -> None:
        """Close the acting seat's turn: end trigger, final round, passes, next seat."""
        seat = self.seat
        n = self.s.num_seats
        self.turn += 1
        self.passes = self.passes + 1 if passed else 0
        if self.last_round > 0:
            # 003:101 "each player, including that player, gets one final turn" / 003:103.
            self.last_round -= 1
            if self.last_round == 0:
                self.finish("last_round")
                return
        elif self.trains[seat] <= self.ruleset.trains_trigger:
            # 003:101 "When one player's stock of Trains is down to 2 or less at the end of
            # his turn" (the check is at the end of the turn, so it is made here); 001:36-37
            # "two or fewer plastic Taxis left". The number is the ruleset's trains_trigger.
            self.last_round = n
            self.events.append(LastRoundStarted(seat, self.trains[seat]))
        if self.passes >= n:
            # RULINGS 5: every seat passed in a row; nobody can ever act again.
            self.finish("all_passed")
            return
        self.seat = (seat + 1) % n  # 003:19 "Play proceeds clockwise."
        self.phase = Phase.TURN

    def finish(self, reason: str) -> None:
        self.phase = Phase.OVER
        self.end_reason = reason
        self.events.append(GameEnded(reason))


# ---------------------------------------------------------------------------------------------
# setup


def new_game(ruleset: Ruleset, num_seats: int, seed: int) -> GameState:
    """A game after the deal, waiting for seat 0 to choose its starting tickets.

    003:9-17: trains, 4 cards each, 5 face up, 3 tickets each (kept >= 2 in the first
    decisions); 001:85-104 the same steps with New York's numbers (the ruleset's). Seat 0
    starts (003:19 leaves the choice to the players; the referee seats the starting player at
    0).
    """
    if isinstance(num_seats, bool) or not isinstance(num_seats, int):
        raise ValueError(f"number of seats must be an integer, got {num_seats!r}")
    if not ruleset.min_players <= num_seats <= ruleset.max_players:
        raise ValueError(
            f"{ruleset.name} is for {ruleset.min_players}-{ruleset.max_players} players, "
            f"not {num_seats}"
        )
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed must be an integer, got {seed!r}")

    deck = [kind for kind, n in enumerate(ruleset.initial_deck_counts()) for _ in range(n)]
    _rng(seed, "deck").shuffle(deck)
    hands = []
    for _ in range(num_seats):
        hand = [0] * NUM_CARD_KINDS
        for _ in range(ruleset.hand_size):
            hand[deck.pop()] += 1
        hands.append(tuple(hand))
    tickets = list(range(len(ruleset.tickets)))
    _rng(seed, "tickets").shuffle(tickets)
    offered = []
    for _ in range(num_seats):
        dealt = tickets[-ruleset.setup_tickets_dealt :] if ruleset.setup_tickets_dealt else []
        del tickets[len(tickets) - len(dealt) :]
        offered.append(tuple(reversed(dealt)))

    zeros = (0,) * num_seats
    state = GameState(
        ruleset=ruleset,
        num_seats=num_seats,
        seed=seed,
        phase=Phase.SETUP_TICKETS,
        seat=0,
        deck=tuple(deck),
        discards=(0,) * NUM_CARD_KINDS,
        face_up=(EMPTY,) * ruleset.face_up,
        hands=tuple(hands),
        trains=(ruleset.trains,) * num_seats,
        route_points=zeros,
        owned=zeros,
        blocked=zeros,
        tickets=((),) * num_seats,
        offered=tuple(offered),
        ticket_deck=tuple(tickets),
        shuffles=0,
        turn=0,
        last_round=-1,
        passes=0,
        end_reason="",
        events=(),
    )
    tx = _Tx(state)
    tx.settle_row()  # 003:11 turn 5 cards faceup; 003:73 "at any time" covers the first row
    if ruleset.setup_tickets_dealt == 0:
        tx.phase = Phase.TURN
    return tx.freeze()


# ---------------------------------------------------------------------------------------------
# legal actions


def legal_actions(state: GameState) -> tuple[Action, ...]:
    """Every legal action of the acting seat, in a fixed order (the wire sends their indices).

    Derived only from facts the acting seat can see (its hand and tickets, the row, deck
    sizes, claims), which the view-invariance tests check.
    """
    phase = state.phase
    if phase is Phase.TURN:
        actions: list[Action] = []
        tables = _tables(state.ruleset)
        face_up = state.face_up
        if state.deck:
            actions.append(DRAW_BLIND)  # 003:45 "draw from the deck"
        for slot, card in enumerate(face_up):
            if card != EMPTY:
                actions.append(tables.draw_face_up[slot])  # 003:45 "any of the faceup cards"
        _claims(state, tables, actions)
        if state.ticket_deck:
            actions.append(DRAW_TICKETS)  # 003:59, 003:93 "draws only what is available"
        if not actions:
            return (PASS,)  # RULINGS 5
        return tuple(actions)
    if phase is Phase.SECOND_CARD:
        return _second_card_actions(state)
    if phase is Phase.KEEP_TICKETS:
        return _keep_choices(
            _tables(state.ruleset), state.offered[state.seat], state.ruleset.tickets_keep_min
        )
    if phase is Phase.SETUP_TICKETS:
        return _keep_choices(
            _tables(state.ruleset),
            state.offered[state.seat],
            state.ruleset.setup_tickets_keep_min,
        )
    return ()


def _second_card_actions(state: GameState) -> tuple[Action, ...]:
    """003:71: never a face-up Locomotive as the second card (whether it was there before or
    just turned up as the replacement). A blind Locomotive is just a card (see docs/rules.md)."""
    draw_face_up = _tables(state.ruleset).draw_face_up
    actions: list[Action] = [DRAW_BLIND] if state.deck else []
    for slot, card in enumerate(state.face_up):
        if card != EMPTY and card != LOCOMOTIVE:
            actions.append(draw_face_up[slot])
    return tuple(actions)


def _claims(state: GameState, tables: _Tables, out: list[Action]) -> None:
    """Every (route, payment) the acting seat can claim now, grouped by payment colour
    (colours in card order, then all-Locomotive payments), each group in route order.

    003:53 cards matching colour and quantity; 003:83 gray = any one colour; 003:67
    Locomotives are wild; 003:79 one route per turn; trains: a route needs one train per space
    (003:53 "placing one train on each space"); 003:87 double routes (in ``blocked``).
    New York: 001:155-159 cards of the route's colour, 001:1-2 gray, 001:120-122 Taxi cards
    are wild, 001:5-6 one route per turn, 001:8-9 one Taxi per space, 001:147-153 doubles.
    Candidate routes come from precomputed bitmasks, so the work is proportional to the
    claims found rather than to the size of the map.
    """
    seat = state.seat
    hand = state.hands[seat]
    locos = hand[LOCOMOTIVE]
    trains = state.trains[seat]
    open_routes = ~state.blocked[seat]
    claims = tables.claims
    lengths = tables.lengths
    payable = tables.payable
    for colour in range(NUM_COLOURS):
        n = hand[colour]
        if not n:
            continue
        reach = n + locos
        mask = payable[colour][reach if reach < trains else trains] & open_routes
        while mask:
            low = mask & -mask
            index = low.bit_length() - 1
            mask ^= low
            length = lengths[index]
            # locomotives from (length - n) up to (length - 1): at least one coloured card
            out.extend(
                claims[index][colour][
                    (length - n if n < length else 0) : (locos if locos < length else length - 1)
                    + 1
                ]
            )
    if locos:
        mask = tables.up_to[locos if locos < trains else trains] & open_routes
        while mask:
            low = mask & -mask
            index = low.bit_length() - 1
            mask ^= low
            out.append(claims[index][LOCOMOTIVE][lengths[index]])


# ---------------------------------------------------------------------------------------------
# apply


def apply(state: GameState, action: Action) -> GameState:
    """The state after ``action``; raises :class:`IllegalActionError` naming the broken rule
    (or :class:`MalformedActionError` for a value that is no action) and leaves ``state`` as it
    was (states are immutable)."""
    phase = state.phase
    if phase is Phase.OVER:
        raise IllegalActionError("game.over", "the game is over; no action is legal")
    tx = _Tx(state)
    match action:
        case DrawBlind():
            if phase is not Phase.TURN and phase is not Phase.SECOND_CARD:
                _wrong_phase(state, "draw a train card")
            if not state.deck:
                raise IllegalActionError(
                    "draw.deck_empty", "the train deck and the discards are empty (RULINGS 3)"
                )
            card = tx.draw_top()
            tx.add_to_hand(state.seat, card)
            tx.events.append(BlindDrawn(state.seat, card))
            tx.settle_row()
            # 003:45 "Draw 2 Train cards"; a blind Locomotive counts as one card (docs/rules.md)
            _after_card(tx, first=phase is Phase.TURN)
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
            card = state.face_up[slot]
            if card == EMPTY:
                raise IllegalActionError(
                    "draw.slot_empty", f"face-up slot {slot} is empty (RULINGS 3)"
                )
            if card == LOCOMOTIVE and phase is Phase.SECOND_CARD:
                raise IllegalActionError(
                    "draw.second_locomotive",
                    "a face-up Locomotive cannot be taken as the second card (003:71, 001:132)",
                )
            tx.face_up = (*state.face_up[:slot], EMPTY, *state.face_up[slot + 1 :])
            tx.add_to_hand(state.seat, card)
            tx.events.append(FaceUpTaken(state.seat, slot, card))
            tx.settle_row()  # 003:49 "immediately turn a replacement card faceup"
            if card == LOCOMOTIVE:
                # 003:69 "If a player selects a faceup Locomotive card, it is the only card he
                # may pick this turn." 001:131-132 the same for a face-up Taxi card.
                tx.end_turn()
            else:
                _after_card(tx, first=phase is Phase.TURN)
        case ClaimRoute():
            if phase is not Phase.TURN:
                _wrong_phase(state, "claim a route")
            _claim(state, tx, action)
            tx.end_turn()
        case DrawTickets():
            if phase is not Phase.TURN:
                _wrong_phase(state, "draw destination tickets")
            if not state.ticket_deck:
                raise IllegalActionError("tickets.deck_empty", "the ticket deck is empty")
            # 003:59 "Draw 3 ... from the top"; 003:93 "If there are less than 3 Tickets left,
            # the player draws only what is available." 001:24-25 draw two; 001:30-31 "If there
            # is only one ... left ... you can still do this action but must keep the card"
            # (keep >= min(keep_min, drawn), in _keep)
            n = min(state.ruleset.tickets_drawn, len(state.ticket_deck))
            drawn = tuple(reversed(state.ticket_deck[-n:]))
            tx.ticket_deck = state.ticket_deck[:-n]
            tx.offered = replaced(state.offered, state.seat, drawn)
            tx.phase = Phase.KEEP_TICKETS
            tx.events.append(TicketsDrawn(state.seat, n, drawn))
        case KeepTickets(tickets=kept):
            if phase is Phase.SETUP_TICKETS:
                minimum = state.ruleset.setup_tickets_keep_min  # 003:17 "keep at least 2"
            elif phase is Phase.KEEP_TICKETS:
                minimum = state.ruleset.tickets_keep_min  # 003:59 "You must keep at least 1"
            else:
                _wrong_phase(state, "keep tickets")
            _keep(state, tx, kept, minimum)
            if phase is Phase.SETUP_TICKETS:
                if state.seat + 1 < state.num_seats:
                    tx.seat = state.seat + 1
                else:
                    tx.seat = 0
                    tx.phase = Phase.TURN
            else:
                tx.end_turn()
        case Pass():
            if phase is not Phase.TURN or legal_actions(state) != (PASS,):
                raise IllegalActionError(
                    "pass.not_allowed",
                    "passing is legal only with no other legal action (RULINGS 5)",
                )
            tx.events.append(Passed(state.seat))
            tx.end_turn(passed=True)
        case _:
            if isinstance(
                action, DrawBlind | DrawFaceUp | ClaimRoute | DrawTickets | KeepTickets | Pass
            ):
                assert_never(action)
            raise MalformedActionError("action.type", f"{action!r} is not an action")
    return tx.freeze()


def _wrong_phase(state: GameState, what: str) -> None:
    expected = {
        Phase.SETUP_TICKETS: "choose which starting tickets to keep",
        Phase.TURN: "draw cards, claim a route or draw tickets",
        Phase.SECOND_CARD: "draw the second train card",
        Phase.KEEP_TICKETS: "choose which drawn tickets to keep",
        Phase.OVER: "nothing (the game is over)",
    }[state.phase]
    raise IllegalActionError(
        "turn.phase", f"cannot {what} now: seat {state.seat} must {expected} (003:41)"
    )


def _after_card(tx: _Tx, first: bool) -> None:
    """After the first card, the same seat decides the second unless there is none it may
    take (RULINGS 4); after the second, the turn ends."""
    if first and (
        tx.deck or any(c != EMPTY and c != LOCOMOTIVE for c in tx.face_up)
    ):  # the same test as _second_card_actions, on the state being built
        tx.phase = Phase.SECOND_CARD
        return
    tx.end_turn()


def _claim(state: GameState, tx: _Tx, action: ClaimRoute) -> None:
    rules = state.ruleset
    routes = rules.game_map.routes
    index, colour, locos = action.route, action.colour, action.locomotives
    for name, value in (("route", index), ("colour", colour), ("locomotives", locos)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise MalformedActionError(
                f"action.{name}", f"{name} must be an integer, got {value!r}"
            )
    if not 0 <= index < len(routes):
        raise MalformedActionError(
            "action.route", f"route {index} does not exist (0-{len(routes) - 1})"
        )
    route = routes[index]
    label = rules.game_map.route_label(index)
    length = route.length
    if not 0 <= colour < NUM_CARD_KINDS:
        raise MalformedActionError("action.colour", f"card colour {colour} does not exist")
    if not 0 <= locos <= length:
        raise MalformedActionError(
            "action.locomotives", f"{locos} Locomotives for {label}, which has {length} spaces"
        )
    if (colour == LOCOMOTIVE) != (locos == length):
        raise MalformedActionError(
            "action.payment",
            "an all-Locomotive payment is written colour=locomotive, locomotives=length; "
            "any other payment names the colour of its non-Locomotive cards",
        )
    seat = state.seat
    if state.blocked[seat] >> index & 1:
        owner = next((s for s in range(state.num_seats) if state.owned[s] >> index & 1), None)
        if owner is not None:
            raise IllegalActionError("claim.taken", f"{label} is already claimed by seat {owner}")
        sibling = route.sibling
        if sibling is not None and state.owned[seat] >> sibling & 1:
            raise IllegalActionError(
                "claim.double_route_same_player",
                f"seat {seat} owns the other track of {label}; "
                "one player cannot claim both routes of a double (003:87)",
            )
        raise IllegalActionError(
            "claim.double_route_closed",
            f"the other track of {label} is claimed, and with fewer than "
            f"{rules.both_tracks_min_players} players only one track of a double route can "
            "be used (003:87, 001:152-153)",
        )
    if state.trains[seat] < length:
        raise IllegalActionError(
            "claim.trains",
            f"{label} needs {length} trains; seat {seat} has {state.trains[seat]} (003:53)",
        )
    if route.colour != GRAY and colour not in (route.colour, LOCOMOTIVE):
        raise IllegalActionError(
            "claim.colour",
            f"{label} takes {card_name(route.colour)} cards (or Locomotives), "
            f"not {card_name(colour)} (003:53)",
        )
    hand = list(state.hands[seat])
    coloured = length - locos
    if hand[LOCOMOTIVE] < locos or (coloured and hand[colour] < coloured):
        have = f"{hand[colour]} {card_name(colour)}" if colour != LOCOMOTIVE else ""
        raise IllegalActionError(
            "claim.cards",
            f"paying {coloured} {card_name(colour)} + {locos} locomotive for {label} needs "
            f"cards seat {seat} does not hold (has {have + ', ' if have else ''}"
            f"{hand[LOCOMOTIVE]} locomotive) (003:53, 003:67)",
        )
    # 003:55 "Discard the cards and record the appropriate score for that route's length".
    discards = list(state.discards)
    hand[LOCOMOTIVE] -= locos
    discards[LOCOMOTIVE] += locos
    if coloured:
        hand[colour] -= coloured
        discards[colour] += coloured
    tx.hands = replaced(state.hands, seat, tuple(hand))
    tx.discards = tuple(discards)
    tx.trains = replaced(state.trains, seat, state.trains[seat] - length)
    points = rules.route_points[length]  # 002:89-95 scoring table
    tx.route_points = replaced(state.route_points, seat, state.route_points[seat] + points)
    bit = 1 << index
    tx.owned = replaced(state.owned, seat, state.owned[seat] | bit)
    blocked = [b | bit for b in state.blocked]
    sibling = route.sibling
    if sibling is not None:
        sbit = 1 << sibling
        blocked[seat] |= sbit  # 003:87 "One player cannot claim both routes." (001:149-150)
        if state.num_seats < rules.both_tracks_min_players:
            # 003:87 "In 2 or 3 player games, only one of the Double Routes can be used."
            # 001:152-153 in two-player games only (New York's threshold is 3 seats).
            blocked = [b | sbit for b in blocked]
    tx.blocked = tuple(blocked)
    tx.events.append(RouteClaimed(seat, index, colour, locos, points))
    # Discards changed: a row left standing by RULINGS 1, or empty slots waiting for cards
    # (RULINGS 3), are settled now.
    if (
        not state.deck
        or EMPTY in state.face_up
        or (state.face_up.count(LOCOMOTIVE) >= rules.flush_locomotives)
    ):
        tx.settle_row()


def _keep(state: GameState, tx: _Tx, kept: object, minimum: int) -> None:
    seat = state.seat
    offered = state.offered[seat]
    kept = checked_keep(offered, kept, minimum, dealt="drawn", rules="003:17, 003:59")
    returned = tuple(t for t in offered if t not in kept)
    tx.tickets = replaced(state.tickets, seat, state.tickets[seat] + kept)
    tx.offered = replaced(state.offered, seat, ())
    # 003:17, 003:59 "Returned cards go to the bottom of the deck" (RULINGS 6: at setup, in
    # seat order); 001:27-28, 001:100-102 the same. The bottom is the front of the tuple.
    tx.ticket_deck = returned + state.ticket_deck  # returned[0] ends deepest
    tx.events.append(TicketsKept(seat, len(kept), len(returned), kept))
