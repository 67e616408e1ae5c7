"""Claiming routes: payment, trains, one route per turn, taken routes, double routes, points.

003:53-55 (claim, discard, score), 003:67 (Locomotives wild), 003:79 (one route per turn),
003:83 (gray routes), 003:87 (double routes), 002:73-95 (occupying routes, points table).
Each case id or comment cites the line it checks.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from referee.games.board import (
    ClaimRoute,
    GameState,
    IllegalActionError,
    MalformedActionError,
    Phase,
    apply,
    legal_actions,
)
from referee.games.board.actions import DRAW_BLIND
from referee.games.board.events import RouteClaimed
from referee.games.common.cards import LOCOMOTIVE, NUM_CARD_KINDS
from referee.games.common.errors import RulesError
from tests.helpers import USA, after_setup, card, hand, route_index, with_

L = LOCOMOTIVE
RED, BLUE, GREEN, WHITE = card("red"), card("blue"), card("green"), card("white")

ATL_NAS = route_index(USA, "Atlanta", "Nashville")  # 1 gray
ATL_CHA = route_index(USA, "Atlanta", "Charleston")  # 2 gray
CHI_DUL = route_index(USA, "Chicago", "Duluth")  # 3 red
DEN_HEL = route_index(USA, "Denver", "Helena")  # 4 green
ATL_MIA = route_index(USA, "Atlanta", "Miami")  # 5 blue
CAL_WIN = route_index(USA, "Calgary", "Winnipeg")  # 6 white
CHI_STL_GREEN = route_index(USA, "Chicago", "Saint Louis", "green")  # 2, double with white
CHI_STL_WHITE = route_index(USA, "Chicago", "Saint Louis", "white")


def minus(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(x - y for x, y in zip(a, b, strict=True))


def plus(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(x + y for x, y in zip(a, b, strict=True))


def payment_cards(action: ClaimRoute) -> tuple[int, ...]:
    """The cards an accepted claim moves from the hand to the discards."""
    length = USA.game_map.routes[action.route].length
    out = [0] * NUM_CARD_KINDS
    out[L] += action.locomotives
    if action.colour != L:
        out[action.colour] += length - action.locomotives
    return tuple(out)


def seat0_with(hand0: tuple[int, ...], num_seats: int = 4, trains: int = 45) -> GameState:
    """Seat 0 to play its first turn holding exactly ``hand0``."""
    return with_(after_setup(num_seats, seed=1), hands={0: hand0}, trains={0: trains})


def take_draw_turn(s: GameState) -> GameState:
    """The acting seat draws two blind cards."""
    s = apply(s, DRAW_BLIND)
    assert s.phase is Phase.SECOND_CARD
    return apply(s, DRAW_BLIND)


def assert_claimed(before: GameState, after: GameState, action: ClaimRoute, seat: int) -> None:
    """Every field an accepted claim changes, exactly (003:53-55)."""
    route = USA.game_map.routes[action.route]
    paid = payment_cards(action)
    points = {1: 1, 2: 2, 3: 4, 4: 7, 5: 10, 6: 15}[route.length]  # 002:89-95
    assert after.hands[seat] == minus(before.hands[seat], paid)  # cards leave the hand
    assert after.discards == plus(before.discards, paid)  # 003:55 "Discard the cards"
    assert after.trains[seat] == before.trains[seat] - route.length  # one train per space
    assert after.route_points[seat] == before.route_points[seat] + points  # 003:55
    assert after.owned[seat] == before.owned[seat] | 1 << action.route
    assert all(b >> action.route & 1 for b in after.blocked)  # nobody may claim it again
    assert RouteClaimed(seat, action.route, action.colour, action.locomotives, points) in (
        after.events
    )
    for other in range(before.num_seats):
        if other != seat:
            assert after.hands[other] == before.hands[other]
            assert after.trains[other] == before.trains[other]
            assert after.route_points[other] == before.route_points[other]
            assert after.owned[other] == before.owned[other]
    # 003:79 one route per turn: the claim is the whole turn
    assert after.phase is Phase.TURN
    assert after.seat == (seat + 1) % before.num_seats
    assert after.turn == before.turn + 1


# ---------------------------------------------------------------------------------------------
# payments


@dataclass(frozen=True)
class PaymentCase:
    hand0: tuple[int, ...]
    action: ClaimRoute
    error: type[RulesError] | None = None
    rule: str = ""
    trains: int = 45


PAYMENT_CASES = [
    # colour match, 003:53 "matching the colour and quantity of the route spaces"
    pytest.param(PaymentCase(hand(red=3, blue=2), ClaimRoute(CHI_DUL, RED, 0)), id="red-3-003:53"),
    pytest.param(
        PaymentCase(hand(red=5), ClaimRoute(CHI_DUL, RED, 0)), id="surplus-red-keeps-rest-003:53"
    ),
    pytest.param(
        PaymentCase(hand(blue=3), ClaimRoute(CHI_DUL, BLUE, 0), IllegalActionError, "claim.colour"),
        id="wrong-colour-003:53",
    ),
    pytest.param(
        PaymentCase(
            hand(blue=2, loco=1), ClaimRoute(CHI_DUL, BLUE, 1), IllegalActionError, "claim.colour"
        ),
        id="wrong-colour-with-locomotive-003:53",
    ),
    # Locomotives wild, 003:67 "act as wild cards that can be part of any set"
    pytest.param(
        PaymentCase(hand(red=2, loco=2), ClaimRoute(CHI_DUL, RED, 1)),
        id="red-2-plus-1-locomotive-003:67",
    ),
    pytest.param(
        PaymentCase(hand(red=1, loco=2), ClaimRoute(CHI_DUL, RED, 2)),
        id="red-1-plus-2-locomotives-003:67",
    ),
    pytest.param(
        PaymentCase(hand(loco=3, red=1), ClaimRoute(CHI_DUL, L, 3)),
        id="all-locomotives-on-coloured-route-003:67",
    ),
    pytest.param(
        PaymentCase(hand(loco=2), ClaimRoute(ATL_CHA, L, 2)),
        id="all-locomotives-on-gray-route-003:67",
    ),
    pytest.param(
        PaymentCase(
            hand(loco=3), ClaimRoute(CHI_DUL, RED, 3), MalformedActionError, "action.payment"
        ),
        id="all-locomotives-written-as-red-malformed-003:67",
    ),
    pytest.param(
        PaymentCase(
            hand(loco=2, red=1), ClaimRoute(CHI_DUL, L, 2), MalformedActionError, "action.payment"
        ),
        id="locomotive-colour-with-partial-payment-malformed-003:67",
    ),
    # gray routes, 003:83 "a set of cards of any one colour" (002:79)
    pytest.param(
        PaymentCase(hand(blue=2, red=1), ClaimRoute(ATL_CHA, BLUE, 0)), id="gray-any-blue-003:83"
    ),
    pytest.param(
        PaymentCase(hand(red=2, blue=1), ClaimRoute(ATL_CHA, RED, 0)), id="gray-any-red-003:83"
    ),
    pytest.param(
        PaymentCase(hand(green=1, loco=1), ClaimRoute(ATL_CHA, GREEN, 1)),
        id="gray-one-colour-plus-locomotive-003:83-003:67",
    ),
    pytest.param(
        PaymentCase(
            hand(red=1, blue=1), ClaimRoute(ATL_CHA, RED, 0), IllegalActionError, "claim.cards"
        ),
        id="gray-mixed-red-blue-as-red-003:83",
    ),
    pytest.param(
        PaymentCase(
            hand(red=1, blue=1), ClaimRoute(ATL_CHA, BLUE, 0), IllegalActionError, "claim.cards"
        ),
        id="gray-mixed-red-blue-as-blue-003:83",
    ),
    # not enough cards, 003:53 "quantity"
    pytest.param(
        PaymentCase(hand(red=2), ClaimRoute(CHI_DUL, RED, 0), IllegalActionError, "claim.cards"),
        id="two-red-for-three-spaces-003:53",
    ),
    pytest.param(
        PaymentCase(hand(red=3), ClaimRoute(CHI_DUL, RED, 1), IllegalActionError, "claim.cards"),
        id="locomotive-not-held-003:67",
    ),
    pytest.param(
        PaymentCase(
            hand(loco=2, red=5), ClaimRoute(CHI_DUL, L, 3), IllegalActionError, "claim.cards"
        ),
        id="two-locomotives-for-three-spaces-003:67",
    ),
    # not enough trains, 003:53 "placing one train on each space"
    pytest.param(
        PaymentCase(
            hand(red=3), ClaimRoute(CHI_DUL, RED, 0), IllegalActionError, "claim.trains", trains=2
        ),
        id="two-trains-for-three-spaces-003:53",
    ),
    pytest.param(
        PaymentCase(hand(red=3), ClaimRoute(CHI_DUL, RED, 0), trains=3),
        id="exactly-enough-trains-003:53",
    ),
]


@pytest.mark.parametrize("case", PAYMENT_CASES)
def test_claim_payment(case: PaymentCase) -> None:
    s = seat0_with(case.hand0, trains=case.trains)
    if case.error is not None:
        assert case.action not in legal_actions(s)
        with pytest.raises(case.error) as err:
            apply(s, case.action)
        assert err.value.rule == case.rule
        return
    assert case.action in legal_actions(s)
    assert_claimed(s, apply(s, case.action), case.action, seat=0)


def test_gray_route_mixed_colours_cannot_be_written() -> None:
    # 003:83 "any one colour": a payment names one colour, so red + blue has no spelling and
    # no claim of the 2-space gray route is offered (only the 1-space one, in either colour).
    s = seat0_with(hand(red=1, blue=1))
    claims = [a for a in legal_actions(s) if isinstance(a, ClaimRoute)]
    assert all(USA.game_map.routes[a.route].length == 1 for a in claims)
    assert ClaimRoute(ATL_NAS, RED, 0) in claims
    assert ClaimRoute(ATL_NAS, BLUE, 0) in claims


def test_legal_payments_for_a_coloured_route_with_locomotives() -> None:
    # 003:53 + 003:67: every split of red and Locomotives that the hand can pay, nothing else
    s = seat0_with(hand(red=2, blue=3, loco=3))
    claims = {a for a in legal_actions(s) if isinstance(a, ClaimRoute) and a.route == CHI_DUL}
    assert claims == {
        ClaimRoute(CHI_DUL, RED, 1),
        ClaimRoute(CHI_DUL, RED, 2),
        ClaimRoute(CHI_DUL, L, 3),
    }


# ---------------------------------------------------------------------------------------------
# points by length, 002:89-95


@pytest.mark.parametrize(
    ("route", "colour", "length", "points"),
    [
        pytest.param(ATL_NAS, RED, 1, 1, id="length-1-1-point-002:90"),
        pytest.param(ATL_CHA, RED, 2, 2, id="length-2-2-points-002:91"),
        pytest.param(CHI_DUL, RED, 3, 4, id="length-3-4-points-002:92"),
        pytest.param(DEN_HEL, GREEN, 4, 7, id="length-4-7-points-002:93"),
        pytest.param(ATL_MIA, BLUE, 5, 10, id="length-5-10-points-002:94"),
        pytest.param(CAL_WIN, WHITE, 6, 15, id="length-6-15-points-002:95"),
    ],
)
def test_route_points_by_length(route: int, colour: int, length: int, points: int) -> None:
    s = seat0_with(hand(red=6, green=6, blue=6, white=6))
    s = with_(s, route_points={0: 3})  # points add to what is already scored
    assert USA.game_map.routes[route].length == length
    after = apply(s, ClaimRoute(route, colour, 0))
    assert after.route_points == (3 + points, 0, 0, 0)
    assert after.trains == (45 - length, 45, 45, 45)
    assert after.discards[colour] == s.discards[colour] + length
    assert after.hands[0][colour] == 6 - length


# ---------------------------------------------------------------------------------------------
# one route per turn, taken routes


def test_one_route_per_turn() -> None:
    # 003:79 "only one route per turn"; 003:41 one action per turn
    s = seat0_with(hand(red=6, blue=6))
    s = with_(s, hands={1: hand()})
    after = apply(s, ClaimRoute(CHI_DUL, RED, 0))
    assert after.seat == 1
    assert after.phase is Phase.TURN
    # seat 0 could pay another route, but the next claim is judged as seat 1's
    assert not any(isinstance(a, ClaimRoute) for a in legal_actions(after))
    with pytest.raises(IllegalActionError) as err:
        apply(after, ClaimRoute(ATL_MIA, BLUE, 0))
    assert err.value.rule == "claim.cards"
    assert after.owned[0] == 1 << CHI_DUL


@pytest.mark.parametrize(
    "num_seats", [pytest.param(n, id=f"{n}-players-002:83") for n in range(2, 6)]
)
def test_route_already_claimed(num_seats: int) -> None:
    # 002:83 "A route taken becomes an exclusive property of the player."
    s = seat0_with(hand(red=3), num_seats=num_seats)
    s = with_(s, hands={1: hand(red=3, loco=3)})
    s = apply(s, ClaimRoute(CHI_DUL, RED, 0))
    assert s.seat == 1
    assert not any(isinstance(a, ClaimRoute) and a.route == CHI_DUL for a in legal_actions(s))
    for action in (ClaimRoute(CHI_DUL, RED, 0), ClaimRoute(CHI_DUL, L, 3)):
        with pytest.raises(IllegalActionError) as err:
            apply(s, action)
        assert err.value.rule == "claim.taken"


# ---------------------------------------------------------------------------------------------
# double routes, 003:87 "One player cannot claim both routes. In 2 or 3 player games, only one
# of the Double Routes can be used." (002:81-82)


@pytest.mark.parametrize(
    ("num_seats", "same_seat", "rule"),
    [
        pytest.param(2, True, "claim.double_route_same_player", id="2p-same-player-003:87"),
        pytest.param(2, False, "claim.double_route_closed", id="2p-other-player-003:87"),
        pytest.param(3, True, "claim.double_route_same_player", id="3p-same-player-003:87"),
        pytest.param(3, False, "claim.double_route_closed", id="3p-other-player-003:87"),
        pytest.param(4, True, "claim.double_route_same_player", id="4p-same-player-003:87"),
        pytest.param(4, False, None, id="4p-other-player-may-003:87"),
        pytest.param(5, True, "claim.double_route_same_player", id="5p-same-player-003:87"),
        pytest.param(5, False, None, id="5p-other-player-may-003:87"),
    ],
)
def test_double_routes(num_seats: int, same_seat: bool, rule: str | None) -> None:
    s = seat0_with(hand(green=2, white=2), num_seats=num_seats)
    s = with_(s, hands={1: hand(white=2)})
    s = apply(s, ClaimRoute(CHI_STL_GREEN, GREEN, 0))
    if same_seat:
        while s.seat != 0:  # everyone else draws; seat 0 plays again
            s = take_draw_turn(s)
    second_seat = s.seat
    assert second_seat == (0 if same_seat else 1)
    action = ClaimRoute(CHI_STL_WHITE, WHITE, 0)
    if rule is not None:
        assert action not in legal_actions(s)
        with pytest.raises(IllegalActionError) as err:
            apply(s, action)
        assert err.value.rule == rule
        return
    assert action in legal_actions(s)
    after = apply(s, action)
    assert_claimed(s, after, action, seat=1)
    assert after.owned[0] == 1 << CHI_STL_GREEN
    assert after.owned[1] == 1 << CHI_STL_WHITE


@pytest.mark.parametrize(
    "num_seats", [pytest.param(n, id=f"{n}-players-003:87") for n in range(2, 6)]
)
def test_claiming_one_track_blocks_the_other_for_its_owner(num_seats: int) -> None:
    # 003:87 "One player cannot claim both routes" (at any player count); in 2-3 player games
    # the other track is closed to everyone.
    s = seat0_with(hand(green=2), num_seats=num_seats)
    after = apply(s, ClaimRoute(CHI_STL_GREEN, GREEN, 0))
    white_bit = 1 << CHI_STL_WHITE
    assert after.blocked[0] & white_bit
    closed = num_seats <= 3
    assert all(bool(b & white_bit) == closed for b in after.blocked[1:])
    assert not any(o & white_bit for o in after.owned)
