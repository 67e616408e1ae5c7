"""Ticket to Ride: The Card Game, rule by rule: one table-driven test per rule.

Every case cites the rulebook line it checks as ``000:LINE`` (shared/seeds/000_*.txt, whose
columns are interleaved: one sentence may be split over lines that sit apart). The numbers
the tests compare with are written here from the rulebook and shared/data/cardgame/, never
read from the ruleset, so a wrong data file fails here. Situations are built from a real
dealt game with ``dataclasses.replace`` (``with_``), so each case changes only what it names.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import pytest

from referee.games.board.actions import DRAW_BLIND, DRAW_TICKETS, PASS
from referee.games.card import (
    IDLE_ROUNDS,
    CardAction,
    CardGameState,
    CardRuleset,
    DrawBlind,
    DrawFaceUp,
    DrawTickets,
    IllegalActionError,
    KeepTickets,
    Pass,
    Phase,
    PlaceMix,
    PlaceSuit,
    apply,
    keep,
    legal_actions,
    load_card_ruleset,
    mix,
    new_game,
    outcome,
    project,
    view,
)
from referee.games.card.events import (
    CardsDealt,
    DeckReshuffled,
    FinalRoundStarted,
    GameEnded,
    MovedOnTrack,
    PlayStalled,
    StackScored,
    TicketsRevealed,
    TrainRobbed,
)
from referee.games.card.state import EMPTY
from referee.games.common.cards import LOCOMOTIVE, NUM_CARD_KINDS, NUM_COLOURS

RULES = load_card_ruleset()
#: 000:8-10 "96 Train cards (10 of each color, plus 16 Locomotives)", per kind
BOX = (10,) * 8 + (16,)
L = LOCOMOTIVE
NO_CARDS = (0,) * NUM_CARD_KINDS
NO_YARD = (0,) * NUM_COLOURS

#: The card kinds by the card game's names (its ``purple`` is the shared kind ``pink``).
KIND = {
    "red": 0,
    "orange": 1,
    "yellow": 2,
    "green": 3,
    "blue": 4,
    "purple": 5,
    "black": 6,
    "white": 7,
    "loco": LOCOMOTIVE,
}
RED, ORANGE, YELLOW, GREEN, BLUE, PURPLE, BLACK, WHITE = range(NUM_COLOURS)

# ---------------------------------------------------------------------------------------------
# building situations (also used by tests/games/test_cardgame_engine.py)


def cards(**counts: int) -> tuple[int, ...]:
    """Per-kind counts by name: ``cards(red=2, loco=1)``."""
    out = [0] * NUM_CARD_KINDS
    for name, n in counts.items():
        out[KIND[name]] += n
    return tuple(out)


def row(**counts: int) -> tuple[int, ...]:
    """A Railyard's per-colour counts by name (Locomotives are a separate tuple)."""
    return cards(**counts)[:NUM_COLOURS]


def kinds(*names: str) -> tuple[int, ...]:
    """Card kinds by name, in the order given; ``-`` is an empty face-up slot."""
    return tuple(EMPTY if n == "-" else KIND[n] for n in names)


def deck_from_top(*names: str) -> tuple[int, ...]:
    """A Train deck listed from its top card down (the state keeps the top last)."""
    return tuple(reversed(kinds(*names)))


def with_(state: CardGameState, **changes: Any) -> CardGameState:
    """``dataclasses.replace`` that also takes a per-seat dict for per-seat tuple fields."""
    fixed: dict[str, Any] = {}
    for name, value in changes.items():
        if isinstance(value, dict):
            current = list(getattr(state, name))
            for seat, v in value.items():
                current[seat] = v
            value = tuple(current)
        fixed[name] = value
    return dataclasses.replace(state, **fixed)


def after_setup(num_seats: int = 2, seed: int = 1, rules: CardRuleset = RULES) -> CardGameState:
    """A game after every seat kept all six of its starting tickets: seat 0's first turn."""
    state = new_game(rules, num_seats, seed)
    while state.phase is Phase.SETUP_TICKETS:
        state = apply(state, keep(*state.offered[state.seat]))
    return state


def draw_turn(state: CardGameState) -> CardGameState:
    """The acting seat draws two blind cards: one whole turn."""
    state = apply(state, DRAW_BLIND)
    assert state.phase is Phase.SECOND_CARD
    return apply(state, DRAW_BLIND)


def rule_of(state: CardGameState, action: CardAction) -> str:
    """The rule id ``apply`` names when it refuses ``action``."""
    with pytest.raises(IllegalActionError) as refused:
        apply(state, action)
    return refused.value.rule


def kind_totals(state: CardGameState) -> tuple[int, ...]:
    return state.kind_counts()


# ---------------------------------------------------------------------------------------------
# the box: 000:6-29 and shared/data/cardgame/


def test_the_box_holds_what_the_rulebook_and_the_data_say() -> None:
    """A wrong number in data/cardgame.toml must fail here, so the facts are written out."""
    # 000:8-10 "96 Train cards (10 of each color, plus 16 Locomotives)"
    assert RULES.deck == (10,) * 8 + (16,)
    # 000:27-29 "46 Destination Ticket cards"; shared/data/cardgame/PROVENANCE.md: 1-5
    # circles (2, 17, 14, 11 and 2 tickets), never more than 2 of one colour, points by band.
    assert len(RULES.tickets) == 46
    sizes = [t.size for t in RULES.tickets]
    assert [sizes.count(k) for k in range(1, 6)] == [2, 17, 14, 11, 2]
    assert max(max(t.requires) for t in RULES.tickets) == 2
    bands = {1: (5, 5), 2: (6, 10), 3: (11, 15), 4: (16, 20), 5: (21, 22)}
    for t in RULES.tickets:
        low, high = bands[t.size]
        assert low <= t.points <= high, t
    assert sum(t.points for t in RULES.tickets) == 581
    # 000:11-12, 000:246-249 six Big Cities; values from shared/data/cardgame/big_cities.json
    assert [(b.name, b.points) for b in RULES.big_cities] == [
        ("Seattle", 8),
        ("Los Angeles", 12),
        ("Chicago", 12),
        ("Dallas", 10),
        ("New York", 15),
        ("Miami", 8),
    ]
    per_city = [sum(1 for t in RULES.tickets if b.index in t.big_cities) for b in RULES.big_cities]
    assert per_city == [10, 10, 11, 10, 11, 10]  # PROVENANCE.md "Tickets per big city"
    assert all(t.big_cities for t in RULES.tickets)  # every ticket names a Big City
    assert sum(1 for t in RULES.tickets if len(t.big_cities) == 2) == 16
    first, last = RULES.tickets[0], RULES.tickets[45]
    assert (first.a, first.b, first.points, first.requires) == (
        "Chicago",
        "New York",
        5,
        row(yellow=1),
    )
    assert (last.a, last.b, last.points, last.requires) == (
        "Seattle",
        "Miami",
        22,
        row(red=2, orange=1, white=1, black=1),
    )
    # 000:78 "Two or three player games", 000:196 "Four player game"
    assert (RULES.min_players, RULES.max_players) == (2, 4)
    # 000:124-129 the beginners' option is off by default: 000:119-122 hidden from all
    assert RULES.owners_see_stack is False


# ---------------------------------------------------------------------------------------------
# setup: 000:37-58


@pytest.mark.parametrize(
    ("num_seats", "seed"),
    [
        pytest.param(2, 1, id="2p-000:37-51"),
        pytest.param(3, 2, id="3p-000:37-51"),
        pytest.param(4, 3, id="4p-000:37-51"),
        pytest.param(4, 99, id="4p-other-seed-000:37-51"),
    ],
)
def test_setup_deals_one_locomotive_seven_cards_five_up_and_six_tickets(
    num_seats: int, seed: int
) -> None:
    state = new_game(RULES, num_seats, seed)
    # 000:37-38 "Give each player 1 Locomotive"; 000:39-41 "Shuffle the rest ... deal 7"
    for h in state.hands:
        assert sum(h) == 8
        assert h[L] >= 1
    assert len(state.face_up) == 5 and EMPTY not in state.face_up  # 000:44-46
    assert len(state.deck) == 96 - 8 * num_seats - 5
    assert kind_totals(state) == (10,) * 8 + (16,)  # 000:8-10, every card somewhere
    # 000:49-51 "deal 6 to each player. Place the remaining Tickets face down"
    assert all(len(o) == 6 for o in state.offered)
    dealt = [t for o in state.offered for t in o]
    assert len(set(dealt)) == 6 * num_seats
    assert sorted(dealt + list(state.ticket_deck)) == list(range(46))
    # 000:52-54 each player chooses: one decision per seat, seat 0 first (000:105)
    assert state.phase is Phase.SETUP_TICKETS and state.seat == 0


@pytest.mark.parametrize(
    "num_seats",
    [
        pytest.param(1, id="1p-refused-000:78"),
        pytest.param(5, id="5p-refused-000:196"),
    ],
)
def test_the_card_game_is_for_two_to_four_players(num_seats: int) -> None:
    with pytest.raises(ValueError, match="2-4 players"):
        new_game(RULES, num_seats, 1)


def test_the_rest_of_the_locomotives_are_shuffled_into_the_deck() -> None:
    """000:39-41 "including any Locomotives left over": over many deals a seat's hand holds
    more than its given Locomotive, so the 7 are dealt from a deck that has them."""
    extra = sum(new_game(RULES, 4, seed).hands[0][L] - 1 for seed in range(60))
    assert extra > 0


@pytest.mark.parametrize(
    ("kept", "rule"),
    [
        pytest.param((), "tickets.keep_min", id="keep-none-refused-000:54"),
        pytest.param((0,), None, id="keep-1-000:54"),
        pytest.param((0, 2, 4), None, id="keep-3-000:54-56"),
        pytest.param((0, 1, 2, 3, 4, 5), None, id="keep-all-6-000:55-56"),
    ],
)
def test_starting_tickets_keep_at_least_one_and_shuffle_back_the_rest(
    kept: tuple[int, ...], rule: str | None
) -> None:
    state = new_game(RULES, 3, 5)
    offered = state.offered[0]
    choice = keep(*(offered[i] for i in kept))
    if rule is not None:
        assert rule_of(state, choice) == rule
        assert choice not in legal_actions(state)
        return
    assert choice in legal_actions(state)
    after = apply(state, choice)
    assert after.tickets[0] == choice.tickets
    returned = set(offered) - set(choice.tickets)
    # 000:56-57 "Unwanted Tickets are shuffled back into the Ticket deck"
    assert set(after.ticket_deck) == set(state.ticket_deck) | returned
    assert after.seat == 1 and after.phase is Phase.SETUP_TICKETS


def test_every_seat_chooses_then_seat_zero_plays_first() -> None:
    # 000:52-58 every player chooses, then 000:105 "The youngest player goes first"
    state = new_game(RULES, 4, 8)
    for seat in range(4):
        assert (state.phase, state.seat) == (Phase.SETUP_TICKETS, seat)
        assert len(legal_actions(state)) == 2**6 - 1  # every non-empty subset of 6
        state = apply(state, keep(state.offered[seat][0]))
    assert (state.phase, state.seat, state.turn) == (Phase.TURN, 0, 0)
    assert len(state.ticket_deck) == 46 - 4  # 20 shuffled back into 22 undealt


# ---------------------------------------------------------------------------------------------
# Step 1: 000:109-132


@dataclass(frozen=True)
class StepOneCase:
    yard: tuple[int, ...]
    locos: tuple[int, ...]
    moved: tuple[int, ...]  #: per-kind counts that go onto the stack
    yard_after: tuple[int, ...]
    locos_after: tuple[int, ...]


STEP_ONE_CASES = [
    pytest.param(
        StepOneCase(NO_YARD, NO_YARD, NO_CARDS, NO_YARD, NO_YARD),
        id="empty-railyard-skipped-000:131-132",
    ),
    pytest.param(
        StepOneCase(row(red=3), NO_YARD, cards(red=1), row(red=2), NO_YARD),
        id="one-card-of-a-suit-000:111-117",
    ),
    pytest.param(
        StepOneCase(row(red=1), NO_YARD, cards(red=1), NO_YARD, NO_YARD),
        id="last-card-of-a-row-000:113-117",
    ),
    pytest.param(
        StepOneCase(
            row(red=1, yellow=1, blue=1), NO_YARD, cards(red=1, yellow=1, blue=1), NO_YARD, NO_YARD
        ),
        id="a-mix-is-three-rows-000:114-000:173-175",
    ),
    pytest.param(
        StepOneCase(
            row(green=2, black=4),
            row(green=2),
            cards(loco=1, black=1),
            row(green=2, black=3),
            row(green=1),
        ),
        id="locomotives-on-top-move-first-000:133-135",
    ),
    pytest.param(
        StepOneCase(row(green=1), row(green=1), cards(loco=1), row(green=1), NO_YARD),
        id="then-the-coloured-card-000:133-135",
    ),
]


@pytest.mark.parametrize("case", STEP_ONE_CASES)
def test_step_one_moves_one_card_of_each_row_onto_the_stack(case: StepOneCase) -> None:
    state = with_(after_setup(2, 4), yard_cards={1: case.yard}, yard_locos={1: case.locos})
    state = draw_turn(state)  # seat 0's turn ends: seat 1's begins with Step 1
    assert state.seat == 1 and state.phase is Phase.TURN
    assert state.stacks[1] == case.moved
    assert (state.yard_cards[1], state.yard_locos[1]) == (case.yard_after, case.locos_after)
    moves = [e for e in state.events if isinstance(e, MovedOnTrack)]
    if sum(case.moved):
        assert moves == [MovedOnTrack(1, sum(case.moved), _sorted_kinds(case.moved), False)]
    else:
        assert moves == []


def _sorted_kinds(counts: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(k for k, n in enumerate(counts) for _ in range(n))


def test_step_one_is_skipped_on_every_first_turn() -> None:
    # 000:131-132 "On the player's first turn ... this step is skipped."
    state = after_setup(4, 6)
    for seat in range(4):
        assert state.seat == seat
        assert not any(isinstance(e, MovedOnTrack) for e in state.events)
        state = draw_turn(state)


@pytest.mark.parametrize(
    ("owners_see", "owner_sees"),
    [
        pytest.param(False, False, id="hidden-from-its-owner-000:119-122"),
        pytest.param(True, True, id="beginners-option-owner-looks-000:124-129"),
    ],
)
def test_the_on_the_track_stack_is_hidden(owners_see: bool, owner_sees: bool) -> None:
    rules = dataclasses.replace(RULES, owners_see_stack=owners_see)
    state = with_(after_setup(2, 4, rules), yard_cards={1: row(red=2)})
    state = draw_turn(state)
    assert state.stacks[1] == cards(red=1)
    moved = next(e for e in state.events if isinstance(e, MovedOnTrack))
    assert view(state, 1).stack == (cards(red=1) if owner_sees else None)
    # seat 0 sees its own (empty) stack at most, and of seat 1's only the size
    assert view(state, 0).stack == (NO_CARDS if owner_sees else None)
    assert [p.stack_size for p in view(state, 0).players] == [0, 1]  # the size is public
    assert project(moved, 1) == (moved if owner_sees else MovedOnTrack(1, 1, None, owners_see))
    assert project(moved, 0) == MovedOnTrack(1, 1, None, owners_see)


# ---------------------------------------------------------------------------------------------
# Step 2 A, drawing Train cards: 000:102-118, 000:147-151, 000:194-198


ROW5 = ("red", "blue", "green", "white", "black")
DECK = ("yellow", "orange", "purple", "red", "blue", "green", "white", "black")


@dataclass(frozen=True)
class DrawCase:
    face_up: tuple[str, ...]
    deck: tuple[str, ...]  #: top first
    actions: tuple[CardAction, ...]
    #: after each action: the seat to act and its phase
    after: tuple[tuple[int, Phase], ...]
    gained: tuple[int, ...]  #: seat 0's hand grew by these per-kind counts
    face_up_after: tuple[str, ...]
    refused: tuple[CardAction, str] | None = None  #: then this is refused with this rule


DRAW_CASES = [
    pytest.param(
        DrawCase(
            ROW5,
            DECK,
            (DRAW_BLIND, DRAW_BLIND),
            ((0, Phase.SECOND_CARD), (1, Phase.TURN)),
            cards(yellow=1, orange=1),
            ROW5,
        ),
        id="two-blind-000:102-104",
    ),
    pytest.param(
        DrawCase(
            ROW5,
            DECK,
            (DrawFaceUp(1), DrawFaceUp(1)),
            ((0, Phase.SECOND_CARD), (1, Phase.TURN)),
            cards(blue=1, yellow=1),
            ("red", "orange", "green", "white", "black"),
        ),
        id="face-up-replaced-before-the-next-pick-000:104-107",
    ),
    pytest.param(
        DrawCase(
            ("loco", "blue", "green", "white", "black"),
            DECK,
            (DrawFaceUp(0),),
            ((1, Phase.TURN),),
            cards(loco=1),
            ("yellow", "blue", "green", "white", "black"),
        ),
        id="face-up-locomotive-is-the-whole-draw-000:108-111",
    ),
    pytest.param(
        DrawCase(
            ("loco", "blue", "green", "white", "black"),
            DECK,
            (DrawFaceUp(1),),
            ((0, Phase.SECOND_CARD),),
            cards(blue=1),
            ("loco", "yellow", "green", "white", "black"),
            (DrawFaceUp(0), "draw.second_locomotive"),
        ),
        id="face-up-locomotive-never-second-000:108-111-000:147-149",
    ),
    pytest.param(
        DrawCase(
            ROW5,
            ("loco", "loco", "red"),
            (DRAW_BLIND, DRAW_BLIND),
            ((0, Phase.SECOND_CARD), (1, Phase.TURN)),
            cards(loco=2),
            ROW5,
        ),
        id="blind-locomotives-are-single-picks-000:111-112",
    ),
    pytest.param(
        DrawCase(
            ("loco", "loco", "green", "white", "black"),
            ("loco", "red", "red"),
            (DrawFaceUp(2), DRAW_BLIND),
            ((0, Phase.SECOND_CARD), (1, Phase.TURN)),
            cards(green=1, red=1),
            ("loco", "loco", "loco", "white", "black"),
        ),
        id="three-face-up-locomotives-do-not-flush-000:149-151",
    ),
    pytest.param(
        DrawCase(
            ROW5,
            ("yellow",),
            (DRAW_BLIND,),
            ((1, Phase.TURN),),
            cards(yellow=1),
            ROW5,
        ),
        id="last-card-alone-is-the-turn-000:194-196",
    ),
    pytest.param(
        DrawCase(
            ROW5,
            ("yellow",),
            (DrawFaceUp(0),),
            ((1, Phase.TURN),),
            cards(red=1),
            ("yellow", "blue", "green", "white", "black"),
        ),
        id="face-up-replaced-by-the-last-card-ends-the-draw-000:194-198",
    ),
    pytest.param(
        DrawCase(
            ROW5,
            (),
            (),
            (),
            NO_CARDS,
            ROW5,
            (DrawFaceUp(0), "draw.deck_out"),
        ),
        id="no-face-up-card-once-the-deck-is-out-000:196-198",
    ),
    pytest.param(
        DrawCase(ROW5, (), (), (), NO_CARDS, ROW5, (DRAW_BLIND, "draw.deck_out")),
        id="no-blind-card-once-the-deck-is-out-000:116-118",
    ),
]


@pytest.mark.parametrize("case", DRAW_CASES)
def test_drawing_train_cards(case: DrawCase) -> None:
    start = with_(
        after_setup(2, 3),
        face_up=kinds(*case.face_up),
        deck=deck_from_top(*case.deck),
        hands={0: NO_CARDS},
    )
    state = start
    for action, (seat, phase) in zip(case.actions, case.after, strict=True):
        assert action in legal_actions(state)
        state = apply(state, action)
        assert (state.seat, state.phase) == (seat, phase)
    assert state.hands[0] == case.gained
    assert state.face_up == kinds(*case.face_up_after)
    if case.refused is not None:
        action, rule = case.refused
        assert action not in legal_actions(state)
        assert rule_of(state, action) == rule


def test_the_draw_is_always_available_while_the_deck_lasts() -> None:
    # 000:114-118 "There is no limit to the number of cards a player may have in hand"
    state = with_(after_setup(2, 3), hands={0: cards(red=60)})
    assert DRAW_BLIND in legal_actions(state)


# ---------------------------------------------------------------------------------------------
# Step 2 B, placing Train cards in the Railyard: 000:120-175


@dataclass(frozen=True)
class PlaceCase:
    hand: tuple[int, ...]
    action: CardAction
    rule: str | None  #: the rule that refuses it, or None when it is legal
    own_yard: tuple[int, ...] = NO_YARD
    #: seat 1's Railyard: per-colour cards and Locomotives on top
    other_yard: tuple[int, ...] = NO_YARD
    other_locos: tuple[int, ...] = NO_YARD
    yard_after: tuple[int, ...] = NO_YARD  #: seat 0's Railyard cards afterwards
    locos_after: tuple[int, ...] = NO_YARD
    robbed: tuple[int, ...] = NO_CARDS  #: what seat 1 discarded (per kind)


PLACE_CASES = [
    pytest.param(
        PlaceCase(cards(red=3), PlaceSuit(RED, 2, 0), None, yard_after=row(red=2)),
        id="suit-of-2-000:125-126",
    ),
    pytest.param(
        PlaceCase(cards(red=5), PlaceSuit(RED, 5, 0), None, yard_after=row(red=5)),
        id="suit-of-5-000:125-126-or-more",
    ),
    pytest.param(
        PlaceCase(
            cards(green=2, loco=2),
            PlaceSuit(GREEN, 2, 2),
            None,
            yard_after=row(green=2),
            locos_after=row(green=2),
        ),
        id="green-suit-of-4-with-2-locomotives-000:153-155",
    ),
    pytest.param(
        PlaceCase(
            cards(green=1, loco=1),
            PlaceSuit(GREEN, 1, 1),
            None,
            yard_after=row(green=1),
            locos_after=row(green=1),
        ),
        id="locomotives-count-toward-the-2-000:125-126-000:153-155",
    ),
    pytest.param(
        PlaceCase(cards(red=1, loco=3), PlaceSuit(RED, 1, 0), "place.suit_size"),
        id="one-card-is-no-suit-000:125-126",
    ),
    pytest.param(
        PlaceCase(cards(loco=3), PlaceSuit(RED, 0, 2), "place.suit_colour"),
        id="locomotives-alone-are-no-suit-000:133-135",
    ),
    pytest.param(
        PlaceCase(cards(red=1), PlaceSuit(RED, 2, 0), "place.cards"),
        id="only-cards-in-hand-000:120-123",
    ),
    pytest.param(
        PlaceCase(
            cards(red=1, yellow=1, blue=1),
            mix(RED, YELLOW, BLUE),
            None,
            yard_after=row(red=1, yellow=1, blue=1),
        ),
        id="mix-of-3-colours-000:128",
    ),
    pytest.param(
        PlaceCase(cards(red=1, yellow=1), mix(RED, YELLOW), "place.mix_size"),
        id="mix-of-2-refused-000:157-158",
    ),
    pytest.param(
        PlaceCase(
            cards(red=1, yellow=1, blue=1, green=1), mix(RED, YELLOW, GREEN, BLUE), "place.mix_size"
        ),
        id="mix-of-4-refused-000:157-158-exactly-3",
    ),
    pytest.param(
        PlaceCase(cards(red=1, yellow=1, loco=1), mix(RED, YELLOW, L), "place.mix_locomotive"),
        id="no-locomotive-in-a-mix-000:158-159",
    ),
    pytest.param(
        PlaceCase(cards(red=3), PlaceMix((RED, RED, YELLOW)), "place.mix_colours"),
        id="mix-colours-all-different-000:128",
    ),
    pytest.param(
        PlaceCase(cards(red=3), PlaceSuit(RED, 3, 0), "place.own_colour", own_yard=row(red=1)),
        id="never-a-colour-of-the-own-railyard-000:160-162",
    ),
    pytest.param(
        PlaceCase(
            cards(red=1, yellow=1, blue=1),
            mix(RED, YELLOW, BLUE),
            "place.own_colour",
            own_yard=row(blue=2),
        ),
        id="not-in-a-mix-either-000:160-162",
    ),
    pytest.param(
        PlaceCase(cards(blue=2), PlaceSuit(BLUE, 2, 0), "place.robbing", other_yard=row(blue=2)),
        id="as-many-as-the-opponent-is-not-enough-000:163-165",
    ),
    pytest.param(
        PlaceCase(
            cards(blue=3),
            PlaceSuit(BLUE, 3, 0),
            None,
            other_yard=row(red=1, yellow=1, blue=1),
            yard_after=row(blue=3),
            robbed=cards(blue=1),
        ),
        id="john-and-paul-3-blue-rob-1-000:165-175",
    ),
    pytest.param(
        PlaceCase(
            cards(red=1, green=1, blue=1),
            mix(RED, GREEN, BLUE),
            "place.robbing",
            other_yard=row(blue=1),
        ),
        id="a-mix-card-never-beats-a-row-000:163-165",
    ),
    pytest.param(
        PlaceCase(
            cards(red=3),
            PlaceSuit(RED, 3, 0),
            "place.robbing",
            other_yard=row(red=2),
            other_locos=row(red=1),
        ),
        id="the-opponents-locomotives-count-000:163-165-000:153-155",
    ),
    pytest.param(
        PlaceCase(
            cards(red=3, loco=1),
            PlaceSuit(RED, 3, 1),
            None,
            other_yard=row(red=2),
            other_locos=row(red=1),
            yard_after=row(red=3),
            locos_after=row(red=1),
            robbed=cards(red=2, loco=1),
        ),
        id="locomotives-count-for-the-robber-and-go-with-the-row-000:165-169",
    ),
]


@pytest.mark.parametrize("case", PLACE_CASES)
def test_placing_cards_in_the_railyard(case: PlaceCase) -> None:
    state = with_(
        after_setup(2, 7),
        hands={0: case.hand},
        yard_cards={0: case.own_yard, 1: case.other_yard},
        yard_locos={1: case.other_locos},
    )
    if case.rule is not None:
        assert case.action not in legal_actions(state)
        assert rule_of(state, case.action) == case.rule
        return
    assert case.action in legal_actions(state)
    after = apply(state, case.action)
    assert after.yard_cards[0] == case.yard_after
    assert after.yard_locos[0] == case.locos_after
    placed = tuple(a - b for a, b in zip(state.hands[0], after.hands[0], strict=True))
    assert sum(placed) == sum(case.yard_after) + sum(case.locos_after)
    assert after.discards == case.robbed
    if sum(case.robbed):
        # 000:166-168 "his opponent must immediately discard all his original cards of that
        # color from his Railyard"
        colour = next(c for c in range(NUM_COLOURS) if case.robbed[c])
        assert after.yard_cards[1][colour] == 0 and after.yard_locos[1][colour] == 0
        robbery = [e for e in after.events if isinstance(e, TrainRobbed)]
        assert robbery == [TrainRobbed(0, 1, colour, case.robbed[colour], case.robbed[L])]
    assert kind_totals(after) == kind_totals(state)  # robbing never loses a card
    assert after.seat == 1  # placing is the whole of Step 2 (000:135-143)


def test_robbing_takes_more_than_every_opponent_and_robs_them_all() -> None:
    """000:163-169 with two opponents holding the colour: the suit must beat the larger row,
    and each of them discards its row."""
    state = with_(
        after_setup(3, 7),
        hands={0: cards(blue=4)},
        yard_cards={1: row(blue=1), 2: row(blue=3)},
    )
    assert rule_of(state, PlaceSuit(BLUE, 3, 0)) == "place.robbing"
    after = apply(state, PlaceSuit(BLUE, 4, 0))
    assert after.yard_cards[1] == NO_YARD and after.yard_cards[2] == NO_YARD
    assert after.discards == cards(blue=4)
    assert [e.seat for e in after.events if isinstance(e, TrainRobbed)] == [1, 2]


def test_legal_placements_are_every_suit_and_mix_the_hand_allows() -> None:
    """The list the wire sends, counted by hand from 000:125-165: a hand of 2 red, 1 yellow,
    1 blue and 1 Locomotive next to an opponent's red row of 2."""
    state = with_(
        after_setup(2, 7),
        hands={0: cards(red=2, yellow=1, blue=1, loco=1)},
        yard_cards={1: row(red=2)},
    )
    placements = {a for a in legal_actions(state) if isinstance(a, PlaceSuit | PlaceMix)}
    assert placements == {
        PlaceSuit(RED, 2, 1),  # 3 > 2: robs (000:163-165)
        PlaceSuit(YELLOW, 1, 1),  # 000:153-155
        PlaceSuit(BLUE, 1, 1),
        # no mix: red is in a Railyard, yellow + blue is two colours (000:157-158)
    }


# ---------------------------------------------------------------------------------------------
# Step 2 C, drawing Destination Tickets: 000:177-182


@pytest.mark.parametrize(
    ("deck_size", "kept_positions"),
    [
        pytest.param(10, (), id="keep-none-000:180-181"),
        pytest.param(10, (0, 3), id="keep-two-000:180"),
        pytest.param(10, (0, 1, 2, 3), id="keep-all-four-000:180"),
        pytest.param(2, (1,), id="short-deck-draws-what-is-left-000:178-179"),
    ],
)
def test_drawing_tickets_draws_four_and_returns_the_rest_to_the_bottom(
    deck_size: int, kept_positions: tuple[int, ...]
) -> None:
    base = after_setup(2, 9)
    spare = tuple(t for t in range(46) if t not in base.tickets[0] + base.tickets[1])
    state = with_(base, ticket_deck=spare[:deck_size])
    state = apply(state, DRAW_TICKETS)
    drawn = state.offered[0]
    # 000:178-179 "draws 4 new Destination Tickets from the top" (the top is the end)
    assert drawn == tuple(reversed(spare[:deck_size][-4:]))
    assert state.phase is Phase.KEEP_TICKETS
    assert len(legal_actions(state)) == 2 ** len(drawn)  # any number, none included
    kept = keep(*(drawn[i] for i in kept_positions))
    after = apply(state, kept)
    returned = tuple(t for t in drawn if t not in kept.tickets)
    # 000:181-182 "Unwanted Tickets are placed back to the bottom of the Ticket deck"
    assert after.ticket_deck == returned + state.ticket_deck
    assert after.tickets[0] == base.tickets[0] + kept.tickets
    assert after.seat == 1


@pytest.mark.parametrize(
    ("action", "rule"),
    [
        pytest.param(DRAW_TICKETS, "tickets.deck_empty", id="empty-ticket-deck-000:178-179"),
        pytest.param(KeepTickets((0,)), "turn.phase", id="keep-without-drawing-000:135-143"),
    ],
)
def test_ticket_actions_refused(action: CardAction, rule: str) -> None:
    state = with_(after_setup(2, 9), ticket_deck=())
    assert action not in legal_actions(state)
    assert rule_of(state, action) == rule


def test_a_ticket_not_drawn_cannot_be_kept() -> None:
    state = apply(after_setup(2, 9), DRAW_TICKETS)
    stranger = next(t for t in range(46) if t not in state.offered[0])
    assert rule_of(state, keep(stranger)) == "tickets.not_offered"


# ---------------------------------------------------------------------------------------------
# one action per turn: 000:135-143


@pytest.mark.parametrize(
    ("setup", "action"),
    [
        pytest.param("second_card", PlaceSuit(RED, 2, 0), id="no-placing-mid-draw-000:136-137"),
        pytest.param("second_card", DRAW_TICKETS, id="no-tickets-mid-draw-000:136-137"),
        pytest.param("keep_tickets", DRAW_BLIND, id="no-draw-while-choosing-000:136-137"),
        pytest.param("setup", DRAW_BLIND, id="no-draw-before-the-choice-000:52-58"),
    ],
)
def test_step_two_is_one_action(setup: str, action: CardAction) -> None:
    state = with_(after_setup(2, 2), hands={0: cards(red=4)})
    if setup == "second_card":
        state = apply(state, DRAW_BLIND)
    elif setup == "keep_tickets":
        state = apply(state, DRAW_TICKETS)
    else:
        state = new_game(RULES, 2, 2)
    assert action not in legal_actions(state)
    assert rule_of(state, action) == "turn.phase"


# ---------------------------------------------------------------------------------------------
# when the Train deck runs out: 000:183-214


@pytest.mark.parametrize(
    ("num_seats", "drawer"),
    [
        pytest.param(2, 0, id="2p-seat0-draws-last-000:191-193"),
        pytest.param(2, 1, id="2p-seat1-draws-last-000:191-193"),
        pytest.param(3, 1, id="3p-000:191-193"),
        pytest.param(3, 2, id="3p-last-seat-000:191-193"),
    ],
)
def test_after_the_last_card_every_player_gets_one_more_turn_then_it_ends(
    num_seats: int, drawer: int
) -> None:
    state = after_setup(num_seats, 11)
    while state.seat != drawer:
        state = draw_turn(state)
    state = with_(state, deck=deck_from_top("red", "red"))
    state = draw_turn(state)  # the drawer empties the deck
    assert FinalRoundStarted(drawer, 1) in state.events
    assert state.last_round == num_seats
    seats = []
    while not state.is_over:
        seats.append(state.seat)
        assert DRAW_BLIND not in legal_actions(state)  # 000:196-198 no more Train cards
        state = apply(state, DRAW_TICKETS) if state.ticket_deck else apply(state, PASS)
        if state.phase is Phase.KEEP_TICKETS:
            state = apply(state, keep())
    # 000:192-193 "each player gets 1 more turn, including the player who drew the last card"
    assert seats == [(drawer + k) % num_seats for k in range(1, num_seats + 1)]
    # 000:192-193 "If there are 2 or 3 players, the game is over"
    assert state.is_over and state.end_reason == "deck_out"
    assert state.events[-1] == GameEnded("deck_out")
    assert sum(isinstance(e, StackScored) for e in state.events) == num_seats


def test_passing_only_with_nothing_else_to_do() -> None:
    """The engine's pass (as in the board games): legal only when no Train card can be drawn
    (000:196-198), nothing placed and no ticket drawn."""
    state = with_(after_setup(2, 11), deck=(), ticket_deck=(), hands={0: cards(red=1)})
    assert legal_actions(state) == (PASS,)
    state = with_(state, hands={0: cards(red=2)})
    assert PASS not in legal_actions(state)
    assert rule_of(state, Pass()) == "pass.not_allowed"


@dataclass(frozen=True)
class StackCase:
    stack: tuple[int, ...]
    tickets: tuple[int, ...]
    completed: tuple[int, ...]


#: Ticket indices (shared/data/cardgame/tickets.json order) used below.
CHI_NY = 0  # yellow, 5
NY_CHI = 1  # blue, 5
CHI_DAL = 2  # yellow + green, 6
SEA_CHI = 31  # yellow x2 + black, 15
LA_NY = 43  # blue x2 + white x2, 20

STACK_CASES = [
    pytest.param(
        StackCase(cards(yellow=1, blue=1), (CHI_NY, NY_CHI), (CHI_NY, NY_CHI)),
        id="same-colours-and-quantity-000:206-208",
    ),
    pytest.param(
        StackCase(cards(yellow=1), (CHI_NY, CHI_DAL), (CHI_NY,)),
        id="each-card-one-ticket-000:203-204",
    ),
    pytest.param(
        StackCase(cards(yellow=1, loco=1), (CHI_DAL,), (CHI_DAL,)),
        id="locomotives-replace-any-colour-000:204-205",
    ),
    pytest.param(
        StackCase(cards(green=1, loco=1), (CHI_DAL, CHI_NY), (CHI_DAL,)),
        id="most-points-not-most-tickets-000:199-201",
    ),
    pytest.param(
        StackCase(cards(yellow=2, black=1, green=1), (SEA_CHI, CHI_DAL, CHI_NY), (SEA_CHI,)),
        id="one-15-beats-two-worth-11-000:199-201",
    ),
    pytest.param(
        StackCase(cards(yellow=2, loco=3), (SEA_CHI, CHI_DAL, CHI_NY), (CHI_DAL, SEA_CHI)),
        id="locomotives-spread-over-two-tickets-000:204-205",
    ),
    pytest.param(
        StackCase(cards(blue=2, white=1, loco=1), (LA_NY, NY_CHI), (LA_NY,)),
        id="locomotive-fills-the-missing-white-000:238-239",
    ),
    pytest.param(
        StackCase(cards(red=5), (CHI_NY, NY_CHI), ()), id="wrong-colours-complete-nothing-000:206"
    ),
]


@pytest.mark.parametrize("case", STACK_CASES)
def test_the_stack_completes_the_tickets_that_score_the_most(case: StackCase) -> None:
    state = with_(
        after_setup(2, 12),
        deck=deck_from_top("red", "red"),
        stacks={0: case.stack, 1: NO_CARDS},
        tickets={0: case.tickets, 1: ()},
    )
    state = draw_turn(state)  # the deck runs out: one more turn each, then the scoring
    while not state.is_over:
        state = _idle(state)
    scored = next(e for e in state.events if isinstance(e, StackScored) and e.seat == 0)
    assert scored.completed == case.completed
    points = sum(RULES.tickets[t].points for t in case.completed)
    assert scored.points == points
    left = tuple(sorted(set(case.tickets) - set(case.completed)))
    # 000:243-245 uncompleted tickets still in hand are subtracted
    lost = sum(RULES.tickets[t].points for t in left)
    assert TicketsRevealed(0, left, lost) in state.events
    assert outcome(state).seats[0].completed_points == points


def _idle(state: CardGameState) -> CardGameState:
    """A turn that changes nothing: draw tickets and keep none (or pass)."""
    if DRAW_TICKETS in legal_actions(state):
        return apply(apply(state, DRAW_TICKETS), keep())
    return apply(state, legal_actions(state)[0])


def test_four_players_play_a_second_deck() -> None:
    """000:196-214: the first scoring, then everything but the hands and the tickets not
    completed is reshuffled into a new deck, 4 cards are dealt to each, and play resumes left
    of the player who took the last turn until the new deck runs out; the second scoring is
    added to the first."""
    state = after_setup(4, 13)
    while state.seat != 2:
        state = draw_turn(state)
    state = with_(
        state,
        deck=deck_from_top("red", "red"),
        hands={0: cards(blue=3), 1: cards(), 2: cards(yellow=2), 3: cards(loco=1)},
        stacks={0: cards(yellow=1), 1: cards(white=2), 2: cards(), 3: cards(red=1)},
        yard_cards={1: row(black=2)},
        tickets={0: (CHI_NY, NY_CHI), 1: (), 2: (CHI_DAL,), 3: ()},
        discards=cards(green=1),
    )
    # every other card of the 96 lies in the discards (robbed rows, 000:166-168)
    have = state.kind_counts()
    state = with_(
        state,
        discards=tuple(d + full - h for d, full, h in zip(state.discards, BOX, have, strict=True)),
    )
    assert min(state.discards) >= 0 and state.kind_counts() == BOX
    state = draw_turn(state)  # seat 2 draws the last 2 cards
    assert FinalRoundStarted(2, 1) in state.events
    for _ in range(3):
        state = _idle(state)
    assert state.seat == 2
    hands_before = state.hands
    tickets_left = {0: (NY_CHI,), 1: (), 2: (CHI_DAL,), 3: ()}
    state = _idle(state)  # seat 2's final turn: the first scoring
    scored = {e.seat: e for e in state.events if isinstance(e, StackScored)}
    assert scored[0].completed == (CHI_NY,) and scored[0].deck == 1  # 000:199-209
    assert not state.is_over and state.deck_number == 2  # 000:196-197 "the game continues"
    # 000:199-201 tickets not completed stay secret in hand; completed set aside (000:185-191)
    assert {s: state.tickets[s] for s in range(4)} == tickets_left
    assert state.completed[0] == (CHI_NY,) and state.ticket_points[0] == 5
    # 000:200-201 cards in hand stay; 000:206-208 "Deal each player 4 Train cards"
    for s in range(4):
        assert sum(state.hands[s]) == sum(hands_before[s]) + 4
    assert [e.count for e in state.events if isinstance(e, CardsDealt)] == [4, 4, 4, 4]
    # 000:203-206 Railyards, stacks, the row and the discards make the new deck
    assert state.yard_cards == (NO_YARD,) * 4 and state.stacks == (NO_CARDS,) * 4
    in_hands = sum(sum(h) for h in hands_before)
    assert DeckReshuffled(96 - in_hands) in state.events
    assert len(state.deck) == 96 - in_hands - 16 - 5 and EMPTY not in state.face_up
    assert state.discards == NO_CARDS
    assert state.kind_counts() == BOX
    # 000:210-211 "beginning with the player to the left of the player who took the last turn"
    assert (state.seat, state.phase, state.last_round) == (3, Phase.TURN, -1)
    # the second deck runs out like the first (000:211-212), then the second scoring adds up
    state = with_(state, deck=deck_from_top("blue"), stacks={0: cards(blue=1)})
    state = apply(state, DRAW_BLIND)  # seat 3 draws the last card alone (000:194-196)
    assert FinalRoundStarted(3, 2) in state.events
    for _ in range(4):
        state = _idle(state)
    assert state.is_over
    second = {e.seat: e for e in state.events if isinstance(e, StackScored)}
    assert second[0].completed == (NY_CHI,) and second[0].deck == 2
    assert state.completed[0] == (CHI_NY, NY_CHI) and state.ticket_points[0] == 10  # 000:213-214
    assert outcome(state).seats[2].failed == (CHI_DAL,)


# ---------------------------------------------------------------------------------------------
# final scores: 000:216-228, 000:241-249


@dataclass(frozen=True)
class ScoreCase:
    completed: tuple[tuple[int, ...], ...]
    in_hand: tuple[tuple[int, ...], ...]
    totals: tuple[int, ...]
    bonuses: tuple[tuple[int, ...], ...]  #: Big Cities won, by index
    ranks: tuple[int, ...]


SEA, LA, CHI, DAL, NY, MIA = range(6)
SEA_LA = 8  # 9 points, Seattle and Los Angeles
CHI_MIA = 11  # 10 points, Chicago and Miami
DAL_RAL = 6  # 8 points, Dallas only
MIA_OMA = 21  # 11 points, Miami only
DAL_HEL = 16  # 10 points, Dallas only

SCORE_CASES = [
    pytest.param(
        ScoreCase(
            ((DAL_RAL,), ()),
            ((), (CHI_DAL,)),
            (8 + 10, -6),
            ((DAL,), ()),
            (1, 2),
        ),
        id="uncompleted-subtracted-and-dallas-bonus-000:243-249",
    ),
    pytest.param(
        ScoreCase(
            ((SEA_LA,), ()),
            ((), ()),
            (9 + 8 + 12, 0),
            ((SEA, LA), ()),
            (1, 2),
        ),
        id="two-big-cities-count-for-both-000:221-223",
    ),
    pytest.param(
        ScoreCase(
            ((DAL_RAL,), (DAL_HEL,)),
            ((), ()),
            (8 + 10, 10 + 10),
            ((DAL,), (DAL,)),
            (2, 1),
        ),
        id="tied-players-all-score-the-bonus-000:218-221",
    ),
    pytest.param(
        ScoreCase(
            ((), ()),
            ((CHI_NY,), (NY_CHI,)),
            (-5, -5),
            ((), ()),
            (1, 1),
        ),
        id="no-completed-ticket-no-bonus-shared-rank-000:246-248",
    ),
    pytest.param(
        ScoreCase(
            ((CHI_NY, NY_CHI), (CHI_MIA,)),
            ((DAL_RAL,), (DAL_RAL,)),
            (5 + 5 + 12 + 15 - 8, 10 + 8 - 8),
            ((CHI, NY), (MIA,)),
            (1, 2),
        ),
        id="most-tickets-to-each-city-000:246-248",
    ),
]


@pytest.mark.parametrize("case", SCORE_CASES)
def test_final_scores(case: ScoreCase) -> None:
    state = after_setup(2, 14)
    state = with_(
        state,
        completed=dict(enumerate(case.completed)),
        tickets=dict(enumerate(case.in_hand)),
        ticket_points={
            s: sum(RULES.tickets[t].points for t in done) for s, done in enumerate(case.completed)
        },
    )
    result = outcome(state)
    assert tuple(s.total for s in result.seats) == case.totals
    assert tuple(s.bonuses for s in result.seats) == case.bonuses
    assert tuple(s.rank for s in result.seats) == case.ranks


@pytest.mark.parametrize(
    ("completed", "points", "ranks"),
    [
        # Chicago-New York + New York-Chicago win Chicago and New York (27); Chicago-Dallas
        # wins Dallas (10): 0 + 27 = 17 + 10.
        pytest.param(
            ((CHI_NY, NY_CHI), (CHI_DAL,)), (0, 17), (1, 2), id="most-tickets-000:225-227"
        ),
        # Seattle-Los Angeles wins two bonus cards (8 + 12), Dallas-Raleigh one (10).
        pytest.param(((SEA_LA,), (DAL_RAL,)), (0, 10), (1, 2), id="most-bonus-cards-000:227-228"),
        # the same two cities each: every tie-break is equal
        pytest.param(
            ((CHI_NY,), (NY_CHI,)), (5, 5), (1, 1), id="still-tied-share-the-rank-000:224"
        ),
    ],
)
def test_tie_breaks(
    completed: tuple[tuple[int, ...], ...], points: tuple[int, ...], ranks: tuple[int, ...]
) -> None:
    """Equal totals (the ticket points are set to make them equal), so only the tie-breaks
    decide."""
    state = with_(
        after_setup(2, 14),
        completed=dict(enumerate(completed)),
        ticket_points=points,
        tickets=((), ()),
    )
    result = outcome(state)
    assert result.seats[0].total == result.seats[1].total
    assert tuple(s.rank for s in result.seats) == ranks


# ---------------------------------------------------------------------------------------------
# the engine's guard: IDLE_ROUNDS (docs/rules.md, "The Card Game")


def test_a_game_nobody_moves_is_scored_after_idle_rounds() -> None:
    """Seats that only draw tickets and keep none would play forever; the guard scores the
    deck once IDLE_ROUNDS rounds pass with no card moved and no ticket kept, and waits for
    Step 1 to empty the Railyards first."""
    state = with_(after_setup(2, 15), yard_cards={0: row(red=2)})
    # seat 0's red row drains at its next two Step 1s, which are not idle
    turns = 0
    while not state.is_over:
        state = _idle(state)
        turns += 1
        assert turns < 50
    assert state.end_reason == "stalled"
    assert PlayStalled(IDLE_ROUNDS * 2) in state.events
    assert state.stacks[0] == cards(red=2)
    # seat 0's 2nd and 3rd turns each begin by moving a red card (4 turns in all), then
    # IDLE_ROUNDS rounds of 2 idle turns
    assert turns == 4 + IDLE_ROUNDS * 2


def test_a_kept_ticket_resets_the_guard() -> None:
    state = after_setup(2, 15)
    for _ in range(IDLE_ROUNDS * 2 - 1):
        state = _idle(state)
    assert state.idle_turns == IDLE_ROUNDS * 2 - 1
    state = apply(state, DRAW_TICKETS)
    state = apply(state, keep(state.offered[state.seat][0]))
    assert state.idle_turns == 0 and not state.is_over


def test_every_face_up_slot_is_drawable_by_index() -> None:
    state = with_(after_setup(2, 3), face_up=kinds(*ROW5))
    draws = [a for a in legal_actions(state) if isinstance(a, DrawBlind | DrawFaceUp)]
    assert draws == [DRAW_BLIND, *(DrawFaceUp(i) for i in range(5))]
    assert DrawTickets() in legal_actions(state)


def test_keep_choices_are_every_subset() -> None:
    state = apply(after_setup(2, 3), DRAW_TICKETS)
    offered = sorted(state.offered[0])
    expected = {keep(*c) for k in range(5) for c in combinations(offered, k)}
    assert set(legal_actions(state)) == expected
