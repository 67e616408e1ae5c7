"""Drawing train cards: the two-decision draw, Locomotives, the face-up row and its flush.

003:45-49 (draw 2, replacement), 003:69-73 (Locomotives, flush), 003:75 (reshuffle),
002:55-71, RULINGS 1-4. Each case id or comment cites the line it checks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from referee.games.board import (
    Action,
    DrawBlind,
    DrawFaceUp,
    GameState,
    IllegalActionError,
    Phase,
    apply,
    legal_actions,
)
from referee.games.board.actions import DRAW_BLIND, ClaimRoute
from referee.games.board.events import (
    DeckReshuffled,
    FaceUpDealt,
    FaceUpFlushed,
    FaceUpTaken,
)
from referee.games.board.state import EMPTY
from referee.games.common.cards import LOCOMOTIVE, NUM_CARD_KINDS
from tests.helpers import USA, after_setup, card, hand, route_index, with_

L = LOCOMOTIVE
NO_DISCARDS = (0,) * NUM_CARD_KINDS


def cards(*names: str) -> tuple[int, ...]:
    """Card kinds by name; ``-`` is an empty face-up slot."""
    return tuple(EMPTY if n == "-" else card(n) for n in names)


def deck_from_top(*names: str) -> tuple[int, ...]:
    """A train deck listed from its top card down (the state keeps the top last)."""
    return tuple(reversed(cards(*names)))


def tally(kinds: tuple[int, ...]) -> tuple[int, ...]:
    out = [0] * NUM_CARD_KINDS
    for c in kinds:
        if c != EMPTY:
            out[c] += 1
    return tuple(out)


def plus(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(x + y for x, y in zip(a, b, strict=True))


def kind_totals(state: GameState) -> tuple[int, ...]:
    """Every train card by kind, wherever it lies."""
    totals = plus(tally(state.deck), tally(state.face_up))
    totals = plus(totals, state.discards)
    for h in state.hands:
        totals = plus(totals, h)
    return totals


def pool_non_locomotives(state: GameState) -> int:
    """RULINGS 1's count: non-Locomotives in deck + discards + row."""
    return (
        sum(1 for c in state.deck if c != L)
        + sum(state.discards[:L])
        + sum(1 for c in state.face_up if c not in (EMPTY, L))
    )


def assert_row_settled(state: GameState) -> None:
    """003:73 + RULINGS 1: a row with 3 Locomotives stands only while the guard forbids a
    flush; a slot is empty only while deck and discards are empty (RULINGS 3)."""
    if state.face_up.count(L) >= 3:
        assert pool_non_locomotives(state) < 3, state.face_up
    if EMPTY in state.face_up:
        assert state.deck == ()
        assert state.discards == NO_DISCARDS


def situation(
    row: tuple[str, ...],
    deck: tuple[str, ...],
    discards: tuple[int, ...] = NO_DISCARDS,
    seat0_hand: tuple[int, ...] | None = None,
    num_seats: int = 4,
) -> GameState:
    """Seat 0 to play its first turn with the given row, deck (top first) and discards, and
    an empty hand unless given (so hands after a draw are exact)."""
    base = after_setup(num_seats, seed=1)
    return with_(
        base,
        face_up=cards(*row),
        deck=deck_from_top(*deck),
        discards=discards,
        hands={0: hand() if seat0_hand is None else seat0_hand},
    )


ROW = ("red", "blue", "green", "white", "black")
DECK = ("yellow", "orange", "pink", "red", "blue", "green", "white", "black", "yellow", "pink")


# ---------------------------------------------------------------------------------------------
# two draws as two decisions


@dataclass(frozen=True)
class DrawCase:
    row: tuple[str, ...]
    deck: tuple[str, ...]  #: top first
    actions: tuple[Action, ...]
    phases: tuple[Phase, ...]  #: the phase after each action
    seats: tuple[int, ...]  #: the seat to act after each action
    want_hand: dict[str, int]
    want_row: tuple[str, ...]
    want_deck: tuple[str, ...]  #: top first
    #: legal actions after each action that leaves the seat in SECOND_CARD
    want_second: tuple[Action, ...] | None = None
    discards: tuple[int, ...] = field(default=NO_DISCARDS)


SECOND_ALL: tuple[Action, ...] = (DRAW_BLIND, *(DrawFaceUp(i) for i in range(5)))

DRAW_CASES = [
    pytest.param(
        DrawCase(
            ROW,
            DECK,
            (DRAW_BLIND, DRAW_BLIND),
            (Phase.SECOND_CARD, Phase.TURN),
            (0, 1),
            {"yellow": 1, "orange": 1},
            ROW,
            DECK[2:],
            SECOND_ALL,
        ),
        id="blind-then-blind-003:45",
    ),
    pytest.param(
        DrawCase(
            ROW,
            DECK,
            (DRAW_BLIND, DrawFaceUp(1)),
            (Phase.SECOND_CARD, Phase.TURN),
            (0, 1),
            {"yellow": 1, "blue": 1},
            ("red", "orange", "green", "white", "black"),
            DECK[2:],
            SECOND_ALL,
        ),
        id="blind-then-face-up-003:45-002:60",
    ),
    pytest.param(
        DrawCase(
            ROW,
            DECK,
            (DrawFaceUp(0), DRAW_BLIND),
            (Phase.SECOND_CARD, Phase.TURN),
            (0, 1),
            {"red": 1, "orange": 1},
            ("yellow", "blue", "green", "white", "black"),
            DECK[2:],
            SECOND_ALL,
        ),
        id="face-up-then-blind-003:49",
    ),
    pytest.param(
        DrawCase(
            ROW,
            DECK,
            (DrawFaceUp(0), DrawFaceUp(0)),
            (Phase.SECOND_CARD, Phase.TURN),
            (0, 1),
            {"red": 1, "yellow": 1},
            ("orange", "blue", "green", "white", "black"),
            DECK[2:],
            SECOND_ALL,
        ),
        id="face-up-then-its-replacement-003:49",
    ),
    pytest.param(
        DrawCase(
            ("loco", "blue", "green", "white", "black"),
            DECK,
            (DrawFaceUp(0),),
            (Phase.TURN,),
            (1,),
            {"loco": 1},
            ("yellow", "blue", "green", "white", "black"),
            DECK[1:],
        ),
        id="face-up-locomotive-first-ends-turn-003:69-002:69",
    ),
    pytest.param(
        DrawCase(
            ROW,
            ("loco", *DECK),
            (DRAW_BLIND, DRAW_BLIND),
            (Phase.SECOND_CARD, Phase.TURN),
            (0, 1),
            {"loco": 1, "yellow": 1},
            ROW,
            DECK[1:],
            SECOND_ALL,
        ),
        id="blind-locomotive-counts-as-one-card-003:45",
    ),
    pytest.param(
        DrawCase(
            ROW,
            ("loco", "loco", *DECK),
            (DRAW_BLIND, DRAW_BLIND),
            (Phase.SECOND_CARD, Phase.TURN),
            (0, 1),
            {"loco": 2},
            ROW,
            DECK,
            SECOND_ALL,
        ),
        id="two-blind-locomotives-003:45-003:69",
    ),
    pytest.param(
        DrawCase(
            ROW,
            ("loco", *DECK),
            (DRAW_BLIND, DrawFaceUp(4)),
            (Phase.SECOND_CARD, Phase.TURN),
            (0, 1),
            {"loco": 1, "black": 1},
            ("red", "blue", "green", "white", "yellow"),
            DECK[1:],
            SECOND_ALL,
        ),
        id="blind-locomotive-then-face-up-003:45",
    ),
    pytest.param(
        DrawCase(
            ROW,
            ("yellow", "loco", *DECK[1:]),
            (DrawFaceUp(2), DRAW_BLIND),
            (Phase.SECOND_CARD, Phase.TURN),
            (0, 1),
            {"green": 1, "loco": 1},
            ("red", "blue", "yellow", "white", "black"),
            DECK[1:],
            SECOND_ALL,
        ),
        id="face-up-then-blind-locomotive-003:71",
    ),
    pytest.param(
        DrawCase(
            ("red", "loco", "green", "loco", "black"),
            DECK,
            (DrawFaceUp(0),),
            (Phase.SECOND_CARD,),
            (0,),
            {"red": 1},
            ("yellow", "loco", "green", "loco", "black"),
            DECK[1:],
            (DRAW_BLIND, DrawFaceUp(0), DrawFaceUp(2), DrawFaceUp(4)),
        ),
        id="second-card-choices-exclude-face-up-locomotives-003:71",
    ),
]


@pytest.mark.parametrize("case", DRAW_CASES)
def test_draw_sequences(case: DrawCase) -> None:
    s = situation(case.row, case.deck, case.discards)
    turn0 = s.turn
    for action, phase, seat in zip(case.actions, case.phases, case.seats, strict=True):
        assert action in legal_actions(s)
        s = apply(s, action)
        assert s.phase is phase
        assert s.seat == seat
        if phase is Phase.SECOND_CARD:
            assert s.turn == turn0  # still the same turn: the second card is its own decision
            assert legal_actions(s) == case.want_second
    assert s.turn == turn0 + (1 if s.phase is Phase.TURN else 0)
    assert s.hands[0] == hand(**case.want_hand)
    assert s.face_up == cards(*case.want_row)
    assert s.deck == deck_from_top(*case.want_deck)
    assert s.discards == case.discards


def test_second_card_phase_offers_only_draws() -> None:
    # 003:45 the draw is one action: after the first card only a second card may follow
    s = situation(ROW, DECK, seat0_hand=hand(red=6, loco=2))
    before = legal_actions(s)
    assert any(isinstance(a, ClaimRoute) for a in before)
    s = apply(s, DRAW_BLIND)
    assert s.phase is Phase.SECOND_CARD
    assert all(isinstance(a, DrawBlind | DrawFaceUp) for a in legal_actions(s))


def test_replacement_turned_up_immediately() -> None:
    # 003:49 "you immediately turn a replacement card faceup from the deck", 002:61
    s = situation(ROW, DECK)
    after = apply(s, DrawFaceUp(3))
    assert after.face_up == cards("red", "blue", "green", "yellow", "black")
    assert after.deck == deck_from_top(*DECK[1:])
    assert after.events == (FaceUpTaken(0, 3, card("white")), FaceUpDealt(3, card("yellow")))


# ---------------------------------------------------------------------------------------------
# face-up Locomotive as the second card: 003:71


@pytest.mark.parametrize(
    ("row", "deck", "first", "second"),
    [
        pytest.param(
            ("red", "loco", "green", "white", "black"),
            DECK,
            DrawFaceUp(0),
            DrawFaceUp(1),
            id="locomotive-already-face-up-003:71",
        ),
        pytest.param(
            ROW,
            ("loco", *DECK),
            DrawFaceUp(0),
            DrawFaceUp(0),
            id="locomotive-just-turned-up-as-replacement-003:71-002:70",
        ),
        pytest.param(
            ("red", "loco", "green", "white", "black"),
            DECK,
            DRAW_BLIND,
            DrawFaceUp(1),
            id="after-a-blind-first-card-003:71",
        ),
        pytest.param(
            ("red", "loco", "green", "white", "black"),
            ("loco", *DECK),
            DRAW_BLIND,
            DrawFaceUp(1),
            id="after-a-blind-locomotive-003:47-003:71",
        ),
    ],
)
def test_face_up_locomotive_never_legal_as_second_card(
    row: tuple[str, ...], deck: tuple[str, ...], first: Action, second: DrawFaceUp
) -> None:
    s = apply(situation(row, deck), first)
    assert s.phase is Phase.SECOND_CARD
    assert s.face_up[second.slot] == L
    assert second not in legal_actions(s)
    with pytest.raises(IllegalActionError) as err:
        apply(s, second)
    assert err.value.rule == "draw.second_locomotive"


# ---------------------------------------------------------------------------------------------
# three face-up Locomotives: 003:73 "If at any time, 3 of the faceup cards are Locomotives, all 5
# cards are immediately discarded and 5 new ones drawn to replace them." (002:71)


def test_replacement_making_the_third_locomotive_flushes_all_five() -> None:  # 003:73
    s = situation(
        ("loco", "loco", "red", "blue", "green"),
        ("loco", "yellow", "white", "black", "orange", "pink", "red", "blue"),
    )
    after = apply(s, DrawFaceUp(2))
    assert after.hands[0] == hand(red=1)
    assert after.discards == hand(loco=3, blue=1, green=1)
    assert after.face_up == cards("yellow", "white", "black", "orange", "pink")
    assert after.deck == deck_from_top("red", "blue")
    assert after.events == (
        FaceUpTaken(0, 2, card("red")),
        FaceUpDealt(2, L),
        FaceUpFlushed(cards("loco", "loco", "loco", "blue", "green")),
        *(FaceUpDealt(i, c) for i, c in enumerate(after.face_up)),
    )
    # the first card was not a Locomotive: the second card is still to come, from the new row
    assert after.phase is Phase.SECOND_CARD
    assert after.seat == 0
    assert legal_actions(after) == (DRAW_BLIND, *(DrawFaceUp(i) for i in range(5)))


def test_new_row_after_a_flush_with_3_locomotives_is_flushed_again() -> None:  # 003:73
    # "at any time": the refilled row is checked too
    s = situation(
        ("loco", "loco", "red", "blue", "green"),
        (
            "loco",  # replacement: third Locomotive
            *("loco", "loco", "loco", "white", "black"),  # refill: three again
            *("yellow", "orange", "pink", "red", "blue"),  # second refill stands
            "green",
        ),
    )
    after = apply(s, DrawFaceUp(2))
    flushes = [e for e in after.events if isinstance(e, FaceUpFlushed)]
    assert flushes == [
        FaceUpFlushed(cards("loco", "loco", "loco", "blue", "green")),
        FaceUpFlushed(cards("loco", "loco", "loco", "white", "black")),
    ]
    assert after.face_up == cards("yellow", "orange", "pink", "red", "blue")
    assert after.discards == hand(loco=6, blue=1, green=1, white=1, black=1)
    assert after.deck == deck_from_top("green")
    assert after.phase is Phase.SECOND_CARD


def test_blind_draw_refilling_nothing_still_flushes_a_row_of_3_locomotives() -> None:
    # 003:73 "at any time": a row holding 3 Locomotives (constructed here, with plenty of
    # non-Locomotives about) is flushed by the next transition, even one that refills nothing
    s = situation(
        ("loco", "loco", "loco", "red", "blue"),
        ("white", "yellow", "orange", "pink", "green", "black", "red"),
    )
    after = apply(s, DRAW_BLIND)
    assert after.hands[0] == hand(white=1)
    assert after.events[1] == FaceUpFlushed(cards("loco", "loco", "loco", "red", "blue"))
    assert after.face_up == cards("yellow", "orange", "pink", "green", "black")
    assert after.discards == hand(loco=3, red=1, blue=1)


def test_face_up_locomotive_first_ends_turn_even_if_replaced_by_a_locomotive() -> None:
    # 003:69 taking a face-up Locomotive first ends the turn whatever the row does next
    s = situation(
        ("loco", "loco", "red", "blue", "green"),
        ("loco", "loco", "yellow", "white", "black", "orange", "pink", "red"),
    )
    # taking slot 0 (a Locomotive) turns up a Locomotive: still 2 in the row, no flush
    after = apply(s, DrawFaceUp(0))
    assert after.hands[0] == hand(loco=1)
    assert after.face_up == cards("loco", "loco", "red", "blue", "green")
    assert after.phase is Phase.TURN
    assert after.seat == 1


def test_refill_of_empty_slots_making_3_locomotives_flushes() -> None:
    # 003:73 "at any time" + RULINGS 3: slots left empty are refilled once a claim returns
    # cards; the refilled row is checked like any other (RULINGS 1 "Re-check after every
    # refill"). Row L L L - - stood (nothing else anywhere); 5 green paid for Pittsburgh-Saint
    # Louis are reshuffled, 2 fill the slots (pool 3 + 2 = 5), so the row flushes; 3 more
    # green and 2 of the reshuffled old row make the new row.
    s = situation(("loco", "loco", "loco", "-", "-"), (), seat0_hand=hand(green=5))
    after = apply(s, ClaimRoute(PIT_STL, card("green"), 0))
    g = card("green")
    flushes = [e for e in after.events if isinstance(e, FaceUpFlushed)]
    assert flushes == [FaceUpFlushed((L, L, L, g, g))]
    kinds = [type(e) for e in after.events]
    assert kinds.index(FaceUpDealt) < kinds.index(FaceUpFlushed)  # refilled, then flushed
    assert after.face_up[:3] == (g, g, g)
    assert sorted(after.face_up[3:] + after.deck) == sorted((L, L, L, g, g))
    assert after.discards == NO_DISCARDS
    assert_row_settled(after)


# ---------------------------------------------------------------------------------------------
# RULINGS 1: the flush guard


@pytest.mark.parametrize(
    ("deck", "discards", "flushes"),
    [
        pytest.param(("loco", "loco", "loco"), NO_DISCARDS, False, id="pool-2-no-flush-RULINGS-1"),
        pytest.param((), NO_DISCARDS, False, id="pool-2-empty-deck-no-flush-RULINGS-1"),
        pytest.param(
            ("loco", "loco", "loco"), hand(loco=4), False, id="pool-2-loco-discards-RULINGS-1"
        ),
        pytest.param(
            ("loco", "loco", "loco"), hand(yellow=1), True, id="pool-3-via-discards-RULINGS-1"
        ),
        pytest.param(("loco", "yellow", "loco"), NO_DISCARDS, True, id="pool-3-via-deck-RULINGS-1"),
    ],
)
def test_flush_guard(deck: tuple[str, ...], discards: tuple[int, ...], flushes: bool) -> None:
    # The replacement makes the third Locomotive; the row's own non-Locomotives (blue, green)
    # count, so the pool is 2 + what deck and discards add.
    s = situation(("loco", "loco", "red", "blue", "green"), ("loco", *deck), discards)
    before = kind_totals(s)
    after = apply(s, DrawFaceUp(2))
    flush_events = [e for e in after.events if isinstance(e, FaceUpFlushed)]
    if not flushes:
        assert flush_events == []
        assert after.face_up == cards("loco", "loco", "loco", "blue", "green")
        assert after.discards == discards
        assert after.deck == deck_from_top(*deck)
    else:
        assert flush_events[0] == FaceUpFlushed(cards("loco", "loco", "loco", "blue", "green"))
    assert_row_settled(after)
    assert kind_totals(after) == before
    assert after.phase is Phase.SECOND_CARD
    # a row left standing still never gives a Locomotive as the second card (003:71)
    assert all(
        after.face_up[a.slot] != L for a in legal_actions(after) if isinstance(a, DrawFaceUp)
    )


# Pittsburgh-Saint Louis: 5 green spaces
PIT_STL = route_index(USA, "Pittsburgh", "Saint Louis")


@pytest.mark.parametrize(
    ("payment", "seat0_hand", "flushes"),
    [
        pytest.param(
            ClaimRoute(PIT_STL, card("green"), 0),
            hand(green=5),
            True,
            id="claim-discards-5-green-lifts-guard-RULINGS-1",
        ),
        pytest.param(
            ClaimRoute(PIT_STL, L, 5),
            hand(loco=5),
            False,
            id="claim-discards-5-locomotives-guard-holds-RULINGS-1",
        ),
    ],
)
def test_flush_guard_rechecked_after_a_claim(
    payment: ClaimRoute, seat0_hand: tuple[int, ...], flushes: bool
) -> None:
    # RULINGS 1 "Re-check after every refill, including after a claim puts cards into the
    # discards." Deck and discards empty, the row (3 Locomotives + 2) stood by the guard.
    s = situation(("loco", "loco", "loco", "red", "blue"), (), seat0_hand=seat0_hand)
    assert pool_non_locomotives(s) == 2
    after = apply(s, payment)
    assert after.seat == 1
    flush_events = [e for e in after.events if isinstance(e, FaceUpFlushed)]
    if flushes:
        # discards (5 green) reshuffled into the deck (003:75), the row flushed, 5 green dealt;
        # the deck then ran out and the old row became the new deck
        assert flush_events == [FaceUpFlushed(cards("loco", "loco", "loco", "red", "blue"))]
        assert after.face_up == cards("green", "green", "green", "green", "green")
        assert sorted(after.deck) == sorted(cards("loco", "loco", "loco", "red", "blue"))
        assert after.discards == NO_DISCARDS
    else:
        assert flush_events == []
        assert after.face_up == cards("loco", "loco", "loco", "red", "blue")
        assert after.deck == cards("loco", "loco", "loco", "loco", "loco")  # reshuffled discards
        assert after.discards == NO_DISCARDS
    assert_row_settled(after)


# ---------------------------------------------------------------------------------------------
# RULINGS 2: flushing with a short deck


def test_flush_with_exactly_5_cards_left_deals_them_then_reshuffles_old_row() -> None:
    # RULINGS 2: old row to the discards first, deal the 5 from the deck; the deck running out
    # reshuffles the discards (the old row) into a new deck (003:75).
    s = situation(
        ("loco", "loco", "red", "blue", "green"),
        ("loco", "yellow", "white", "black", "orange", "pink"),
    )
    after = apply(s, DrawFaceUp(2))
    assert after.face_up == cards("yellow", "white", "black", "orange", "pink")
    assert sorted(after.deck) == sorted(cards("loco", "loco", "loco", "blue", "green"))
    assert after.discards == NO_DISCARDS
    assert after.shuffles == s.shuffles + 1
    kinds = [type(e) for e in after.events]
    assert kinds.index(FaceUpFlushed) < kinds.index(DeckReshuffled)
    assert DeckReshuffled(5) in after.events
    assert after.phase is Phase.SECOND_CARD


def test_flush_with_short_deck_reshuffles_discards_including_old_row() -> None:
    # RULINGS 2: deck has 2 cards after the replacement; discards hold 2 black. The old row goes
    # to the discards first, so the reshuffle that finishes the new row holds 2 + 5 = 7 cards.
    s = situation(
        ("loco", "loco", "red", "blue", "green"),
        ("loco", "yellow", "white"),
        discards=hand(black=2),
    )
    before = kind_totals(s)
    after = apply(s, DrawFaceUp(2))
    assert after.events[:4] == (
        FaceUpTaken(0, 2, card("red")),
        FaceUpDealt(2, L),
        FaceUpFlushed(cards("loco", "loco", "loco", "blue", "green")),
        FaceUpDealt(0, card("yellow")),
    )
    assert FaceUpDealt(1, card("white")) in after.events
    assert after.events.index(DeckReshuffled(7)) > 2  # after the flush, with the old row
    assert after.face_up[:2] == cards("yellow", "white")
    assert EMPTY not in after.face_up
    assert kind_totals(after) == before
    # the row then stands (or flushed again, each time taking the old row to the discards)
    flushes = sum(1 for e in after.events if isinstance(e, FaceUpFlushed))
    assert flushes >= 1
    assert_row_settled(after)


# ---------------------------------------------------------------------------------------------
# 003:75 "When the deck is exhausted, the discards are thoroughly reshuffled to form a new
# deck." (002:63)


@pytest.mark.parametrize(
    ("action", "want_hand", "want_row"),
    [
        pytest.param(DRAW_BLIND, hand(yellow=1), cards(*ROW), id="blind-draw-takes-last-003:75"),
        pytest.param(
            DrawFaceUp(0),
            hand(red=1),
            cards("yellow", "blue", "green", "white", "black"),
            id="replacement-takes-last-003:75",
        ),
    ],
)
def test_empty_deck_reshuffles_the_discards(
    action: Action, want_hand: tuple[int, ...], want_row: tuple[int, ...]
) -> None:
    s = situation(ROW, ("yellow",), discards=hand(pink=3, orange=2))
    after = apply(s, action)
    assert after.hands[0] == want_hand
    assert after.face_up == want_row
    assert sorted(after.deck) == sorted(cards("pink", "pink", "pink", "orange", "orange"))
    assert after.discards == NO_DISCARDS
    assert after.shuffles == s.shuffles + 1
    assert DeckReshuffled(5) in after.events
    assert after.phase is Phase.SECOND_CARD
    assert DRAW_BLIND in legal_actions(after)


def test_reshuffled_deck_depends_only_on_seed_and_shuffle_count() -> None:
    # determinism of the reshuffle (ARCHITECTURE: chance lives in the state)
    s = situation(ROW, ("yellow",), discards=hand(pink=3, orange=2, red=4, loco=1))
    a = apply(s, DRAW_BLIND)
    b = apply(s, DRAW_BLIND)
    assert a.deck == b.deck


# ---------------------------------------------------------------------------------------------
# RULINGS 3: deck and discards both empty


def test_deck_and_discards_empty_blind_draw_illegal_and_slot_stays_empty() -> None:
    s = situation(ROW, ())
    assert DRAW_BLIND not in legal_actions(s)  # RULINGS 3 "drawing is legal only from what exists"
    with pytest.raises(IllegalActionError) as err:
        apply(s, DRAW_BLIND)
    assert err.value.rule == "draw.deck_empty"
    s = apply(s, DrawFaceUp(0))
    assert s.face_up == cards("-", "blue", "green", "white", "black")  # no replacement
    assert s.phase is Phase.SECOND_CARD
    assert legal_actions(s) == tuple(DrawFaceUp(i) for i in range(1, 5))
    with pytest.raises(IllegalActionError) as err:
        apply(s, DrawFaceUp(0))
    assert err.value.rule == "draw.slot_empty"
    with pytest.raises(IllegalActionError) as err:
        apply(s, DRAW_BLIND)
    assert err.value.rule == "draw.deck_empty"
    s = apply(s, DrawFaceUp(4))
    assert s.face_up == cards("-", "blue", "green", "white", "-")
    assert s.hands[0] == hand(red=1, black=1)
    assert s.seat == 1


def test_empty_slots_refill_when_a_claim_returns_cards() -> None:
    # RULINGS 3 "face-up slots stay empty until cards return to the discards and are
    # reshuffled"; 003:75 the reshuffle.
    atl_cha = route_index(USA, "Atlanta", "Charleston")  # 2 gray
    s = situation(("-", "-", "loco", "green", "white"), (), seat0_hand=hand(red=2))
    after = apply(s, ClaimRoute(atl_cha, card("red"), 0))
    assert after.face_up == cards("red", "red", "loco", "green", "white")
    assert after.deck == ()
    assert after.discards == NO_DISCARDS


# ---------------------------------------------------------------------------------------------
# RULINGS 4: no second card to take ends the turn after the first


@pytest.mark.parametrize(
    ("row", "deck", "first", "phase"),
    [
        pytest.param(
            ("red", "loco", "loco", "-", "-"),
            (),
            DrawFaceUp(0),
            Phase.TURN,
            id="face-up-first-only-locomotives-left-RULINGS-4",
        ),
        pytest.param(
            ("loco", "loco", "loco", "loco", "loco"),
            ("red",),
            DRAW_BLIND,
            Phase.TURN,
            id="blind-takes-last-card-row-all-locomotives-RULINGS-4",
        ),
        pytest.param(
            ("red", "-", "-", "-", "-"),
            (),
            DrawFaceUp(0),
            Phase.TURN,
            id="face-up-takes-last-card-anywhere-RULINGS-4",
        ),
        pytest.param(
            ("loco", "loco", "loco", "loco", "blue"),
            ("red",),
            DRAW_BLIND,
            Phase.SECOND_CARD,
            id="control-a-face-up-non-locomotive-remains-003:45",
        ),
        pytest.param(
            ("red", "blue", "-", "-", "-"),
            (),
            DrawFaceUp(0),
            Phase.SECOND_CARD,
            id="control-one-face-up-card-remains-003:45",
        ),
    ],
)
def test_no_second_card_available_ends_the_turn(
    row: tuple[str, ...], deck: tuple[str, ...], first: Action, phase: Phase
) -> None:
    s = situation(row, deck)
    after = apply(s, first)
    assert after.phase is phase
    if phase is Phase.TURN:
        assert after.seat == 1
        assert after.turn == s.turn + 1
    else:
        assert after.seat == 0
        assert after.turn == s.turn
        assert legal_actions(after) != ()
