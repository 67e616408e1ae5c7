"""A naive legality check written from the rulebook text, independent of the engine.

Nothing here calls ``legal_actions`` or an engine helper: it reads the raw state (hands, the
row, the decks, who owns which route) and answers "may the acting seat do this now?" rule by
rule, the slow and obvious way. The constants are the rulebooks' numbers for each variant,
written down again on purpose (not read from the ruleset, which is only asked its ``name``)
so that a wrong ruleset value shows up as a disagreement too. The only shared vocabulary is
the representation: card kinds (``referee.games.common.cards``; New York's Taxi card is the wild
card kind), action types and the state's fields.

References: ``003:LINE`` is shared/seeds/003_1611490a013a284e.txt, ``001:LINE`` is
shared/seeds/001_9ef92c1c0697cc21.txt (New York); ``RULINGS n`` is shared/design/RULINGS.md.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from itertools import combinations

from referee.games.board import GameState, Phase
from referee.games.board.actions import (
    Action,
    ClaimRoute,
    DrawBlind,
    DrawFaceUp,
    DrawTickets,
    KeepTickets,
    Pass,
)
from referee.games.board.ruleset import Route
from referee.games.common.cards import GRAY, LOCOMOTIVE, NUM_CARD_KINDS

#: 003:11 "turn 5 cards faceup".
FACE_UP_SLOTS = 5
#: 003:17 "Each player must keep at least 2 of their tickets".
SETUP_KEEP_MIN = 2
#: 003:59 "You must keep at least 1."
DRAW_KEEP_MIN = 1
#: 003:87 "In 2 or 3 player games, only one of the Double Routes can be used."
MAX_SEATS_ONE_TRACK_PER_DOUBLE = 3


@dataclass(frozen=True)
class Rulebook:
    """The numbers the legality check needs, per variant, from the rulebook's own text."""

    face_up_slots: int
    setup_keep_min: int
    draw_keep_min: int
    max_seats_one_track_per_double: int


_BASE = Rulebook(FACE_UP_SLOTS, SETUP_KEEP_MIN, DRAW_KEEP_MIN, MAX_SEATS_ONE_TRACK_PER_DOUBLE)

#: By ruleset name. 003:21-37: the variants change tickets, the deal and bonus cards; the
#: rest of the base rules stands.
RULEBOOKS: dict[str, Rulebook] = {
    "usa": _BASE,
    "usa1910": _BASE,  # 003:25 only tickets and the bonus card change
    # 003:29 "deal 5 to each player; keep at least 3"; 003:31 "draw 4 and keep at least 1"
    "mega": Rulebook(5, 3, 1, 3),
    # 003:35 "deal 4 to each player; keep at least 2"; 003:37 "draw 4 and keep at least 1"
    "bigcities": Rulebook(5, 2, 1, 3),
    # 001:91-92 "flip the top five cards"; 001:99 "keep one or both cards"; 001:25-26 "keep
    # at least one"; 001:152-153 "In two-player games, once one Route of a Double Route is
    # claimed, the other one cannot be claimed by the other player."
    "newyork": Rulebook(5, 1, 1, 2),
}


def rulebook(state: GameState) -> Rulebook:
    """The numbers of the state's variant (an unknown variant is an error, not a default)."""
    return RULEBOOKS[state.ruleset.name]


_EMPTY_SLOT = -1  # RULINGS 3: a face-up slot with no card in it


def _owner(state: GameState, route: int) -> int | None:
    for seat in range(state.num_seats):
        if state.owned[seat] & (1 << route):
            return seat
    return None


_SIBLINGS: dict[int, tuple[tuple[Route, ...], tuple[int | None, ...]]] = {}


def _sibling_track(state: GameState, route: Route) -> int | None:
    """The other track of a double route: the other route between the same two cities
    (found by comparing cities, not from ``Route.sibling``; worked out once per map)."""
    routes = state.ruleset.game_map.routes
    found = _SIBLINGS.get(id(routes))
    if found is None or found[0] is not routes:
        table = tuple(
            next(
                (o.index for o in routes if o.index != r.index and {o.a, o.b} == {r.a, r.b}),
                None,
            )
            for r in routes
        )
        found = (routes, table)
        _SIBLINGS[id(routes)] = found
    return found[1][route.index]


def _may_use_route(state: GameState, route: Route) -> bool:
    """003:79 "A player may claim any route on the board" that nobody holds; 003:87 doubles
    (001:147-153 in New York)."""
    seat = state.seat
    if _owner(state, route.index) is not None:
        return False
    sibling = _sibling_track(state, route)
    if sibling is not None:
        sibling_owner = _owner(state, sibling)
        if sibling_owner == seat:
            return False  # 003:87 "One player cannot claim both routes."
        if (
            sibling_owner is not None
            and state.num_seats <= rulebook(state).max_seats_one_track_per_double
        ):
            return False  # 003:87 "In 2 or 3 player games, only one ... can be used."
    return True


def _claim_is_legal(state: GameState, action: ClaimRoute) -> bool:
    routes = state.ruleset.game_map.routes
    route_index, colour, locos = action.route, action.colour, action.locomotives
    for value in (route_index, colour, locos):
        if type(value) is not int:
            return False
    if not 0 <= route_index < len(routes):
        return False
    route = routes[route_index]
    length = route.length
    if not 0 <= colour < NUM_CARD_KINDS or not 0 <= locos <= length:
        return False
    # One spelling per payment (actions.py): all Locomotives is colour=LOCOMOTIVE, and a
    # payment naming a colour has at least one card of that colour.
    if colour == LOCOMOTIVE and locos != length:
        return False
    if colour != LOCOMOTIVE and locos == length:
        return False
    seat = state.seat
    # 003:53 "placing one train on each space of the route": a train per space.
    if state.trains[seat] < length:
        return False
    # 003:53 cards "matching the colour ... of the route"; 003:83 gray routes take "a set of
    # cards of any one colour"; 003:67 Locomotives "can be part of any set".
    if colour != LOCOMOTIVE and route.colour != GRAY and colour != route.colour:
        return False
    hand = state.hands[seat]
    if hand[LOCOMOTIVE] < locos:
        return False
    # 003:53 "matching the ... quantity of the route spaces".
    if colour != LOCOMOTIVE and hand[colour] < length - locos:
        return False
    return _may_use_route(state, route)


def _keep_is_legal(state: GameState, action: KeepTickets, minimum: int) -> bool:
    offered = state.offered[state.seat]
    kept = action.tickets
    if not isinstance(kept, tuple) or any(type(t) is not int for t in kept):
        return False
    if list(kept) != sorted(set(kept)):
        return False  # the canonical spelling: distinct ticket indices, ascending
    if any(t not in offered for t in kept):
        return False
    return len(kept) >= min(minimum, len(offered))


def _may_draw_face_up(state: GameState, slot: object, second: bool) -> bool:
    if type(slot) is not int or not 0 <= slot < rulebook(state).face_up_slots:
        return False
    card = state.face_up[slot]
    if card == _EMPTY_SLOT:
        return False  # RULINGS 3: only what exists
    # 003:71 a face-up Locomotive "cannot be selected as a second card".
    return not (second and card == LOCOMOTIVE)


def _any_turn_action_but_pass(state: GameState) -> bool:
    if state.deck or state.ticket_deck:
        return True
    if any(card != _EMPTY_SLOT for card in state.face_up):
        return True
    return any(
        _claim_is_legal(state, a) for a in candidate_actions(state) if isinstance(a, ClaimRoute)
    )


def naive_is_legal(state: GameState, action: Action) -> bool:
    """Whether the acting seat may take ``action`` now, straight from the rulebook."""
    phase = state.phase
    if phase is Phase.OVER:
        return False
    if phase is Phase.SETUP_TICKETS:
        # 003:15-17 the first decision of every seat is which dealt tickets to keep.
        minimum = rulebook(state).setup_keep_min
        return isinstance(action, KeepTickets) and _keep_is_legal(state, action, minimum)
    if phase is Phase.KEEP_TICKETS:
        # 003:59 the tickets just drawn: keep at least 1 (003:93 of fewer, if fewer came;
        # 001:30-31 a single ticket left may be drawn and must be kept).
        minimum = rulebook(state).draw_keep_min
        return isinstance(action, KeepTickets) and _keep_is_legal(state, action, minimum)
    if phase is Phase.SECOND_CARD:
        # 003:49 "You then draw a second card from the faceup cards or the deck."
        if isinstance(action, DrawBlind):
            return bool(state.deck)
        if isinstance(action, DrawFaceUp):
            return _may_draw_face_up(state, action.slot, second=True)
        return False
    assert phase is Phase.TURN
    # 003:41 "one only of the following actions".
    if isinstance(action, DrawBlind):
        return bool(state.deck)  # 003:45 "or draw from the deck"; RULINGS 3
    if isinstance(action, DrawFaceUp):
        return _may_draw_face_up(state, action.slot, second=False)  # 003:45, 003:69
    if isinstance(action, DrawTickets):
        return bool(state.ticket_deck)  # 003:59; 003:93 draws "only what is available"
    if isinstance(action, ClaimRoute):
        return _claim_is_legal(state, action)
    if isinstance(action, Pass):
        return not _any_turn_action_but_pass(state)  # RULINGS 5
    return False


@cache
def _all_claims(routes: tuple[Route, ...]) -> tuple[ClaimRoute, ...]:
    """Every (route, card kind, Locomotive count) triple, built once per map."""
    return tuple(
        ClaimRoute(route.index, colour, locos)
        for route in routes
        for colour in range(NUM_CARD_KINDS)
        for locos in range(route.length + 1)
    )


def candidate_actions(state: GameState) -> Iterator[Action]:
    """A superset of the legal actions, whatever the phase: every draw (and two slots that do
    not exist), the pass, every (route, card kind, Locomotive count) claim, and every subset
    of the acting seat's offered tickets in ascending order."""
    for slot in range(-1, rulebook(state).face_up_slots + 1):
        yield DrawFaceUp(slot)
    yield DrawBlind()
    yield DrawTickets()
    yield Pass()
    yield from _all_claims(state.ruleset.game_map.routes)
    offered = sorted(state.offered[state.seat]) if state.phase is not Phase.OVER else []
    for size in range(len(offered) + 1):
        for subset in combinations(offered, size):
            yield KeepTickets(subset)


def naive_legal_actions(state: GameState) -> set[Action]:
    return {a for a in candidate_actions(state) if naive_is_legal(state, a)}
