"""Final scoring on the real maps: longest continuous path, tickets, bonuses, winner.

Every longest-path and ticket case below is derived by hand from
referee/games/board/data/maps/usa.json (route ids ``#n`` are the ids in that file); the derivation
is in the comment of each case. Rulebook lines: 003:97 (ticket completion), 003:105 (tickets added /
subtracted), 003:107 (longest path, a train never used twice, +10 to every tied player), 003:109
(winner and tie-breaks), 002:89-94 (route points table); RULINGS 7 and 8.

The variants: the Globetrotter (003:25, 15 points, every seat tied for the most completed
tickets; none when nobody completed one: docs/rules.md), the bonus cards each USA variant uses
(003:25, 003:29, 003:13 for Big Cities), the 1910 tie-breaks (most tickets, then shared), and
New York on its own map (referee/games/board/data/maps/newyork.json, ``#n`` its ids): the 1/2/4/7
route table (001:70-73), tickets (001:75-77), one point per Tourist Attraction touched
(001:79-81) and its tie rule (001:40-42).
"""

from __future__ import annotations

import dataclasses
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.games.board import GameState, Outcome, Ruleset, outcome
from referee.games.board.ruleset import GameMap, Route
from referee.games.board.scoring import (
    attractions_touched,
    connected,
    longest_path,
    route_points_of,
)
from referee.games.common.cards import COLOURS, GRAY
from referee.selfplay import play_random_game
from tests.helpers import NEW_YORK, RULESETS, USA, after_setup, ticket_index, with_

MAP = USA.game_map


def track(a: str, b: str, colour: str | None = None) -> int:
    """Index of the track between ``a`` and ``b`` (of ``colour``; the first of a gray double)."""
    ia, ib = MAP.city_index[a], MAP.city_index[b]
    found = [r for r in MAP.routes if {r.a, r.b} == {ia, ib}]
    if colour is not None:
        wanted = GRAY if colour == "gray" else COLOURS.index(colour)
        found = [r for r in found if r.colour == wanted]
    if not found:
        raise ValueError(f"no track {a}-{b} {colour}")
    return found[0].index


def mask(*indices: int) -> int:
    out = 0
    for i in indices:
        assert not out >> i & 1, "route listed twice"
        out |= 1 << i
    return out


def length_of(owned: int) -> int:
    return longest_path(MAP, owned)


# ---------------------------------------------------------------------------------------------
# Route fixtures, each checked against the map file (id, cities, length) so a typo in a
# derivation shows up as a failing fixture rather than a wrong expectation.

DEN_OMA = track("Denver", "Omaha")  # 4 pink, #35
OMA_KC = track("Kansas City", "Omaha")  # 1 gray, #58 (first of the gray double 13)
KC_DEN = track("Denver", "Kansas City", "black")  # 4 black, #32
DEN_PHX = track("Denver", "Phoenix")  # 5 white, #36
KC_STL = track("Kansas City", "Saint Louis", "blue")  # 2 blue, #60
DEN_SFE = track("Denver", "Santa Fe")  # 2 gray, #39
SFE_OKC = track("Oklahoma City", "Santa Fe")  # 3 blue, #82
OKC_DEN = track("Denver", "Oklahoma City")  # 4 red, #34
LA_PHX = track("Los Angeles", "Phoenix")  # 3 gray, #68
PHX_SFE = track("Phoenix", "Santa Fe")  # 3 gray, #83
PIT_STL = track("Pittsburgh", "Saint Louis")  # 5 green, #85
PIT_CHI = track("Chicago", "Pittsburgh", "black")  # 3 black, #20
PIT_NY = track("New York", "Pittsburgh", "green")  # 2 green, #78
NY_BOS = track("Boston", "New York", "red")  # 2 red, #10
BOS_MTL = track("Boston", "Montreal")  # 2 gray, #8 (first of the gray double 3)
MTL_TOR = track("Montreal", "Toronto")  # 3 gray, #74
TOR_DUL = track("Duluth", "Toronto")  # 6 pink, #44
SEA_POR = track("Portland", "Seattle")  # 1 gray, #91 (first of the gray double 19)
POR_SF = track("Portland", "San Francisco", "green")  # 5 green, #89
MTL_NY = track("Montreal", "New York")  # 3 blue, #72
NY_WAS = track("New York", "Washington", "black")  # 2 black, #80
RAL_WAS = track("Raleigh", "Washington")  # 2 gray, #93 (first of the gray double 20)
ATL_RAL = track("Atlanta", "Raleigh")  # 2 gray, #6 (first of the gray double 2)
SFE_ELP = track("El Paso", "Santa Fe")  # 2 gray, #50
DAL_ELP = track("Dallas", "El Paso")  # 4 red, #25
DAL_OKC = track("Dallas", "Oklahoma City")  # 2 gray, #29
KC_OKC = track("Kansas City", "Oklahoma City")  # 2 gray, #56
DEN_SLC = track("Denver", "Salt Lake City", "red")  # 3 red, #37
SLC_LV = track("Las Vegas", "Salt Lake City")  # 3 orange, #63
LV_LA = track("Las Vegas", "Los Angeles")  # 2 gray, #62
PHX_ELP = track("El Paso", "Phoenix")  # 3 gray, #49
CHI_OMA = track("Chicago", "Omaha")  # 4 blue, #19
DEN_HEL = track("Denver", "Helena")  # 4 green, #31
ATL_NAS = track("Atlanta", "Nashville")  # 1 gray, #3
CAL_WIN = track("Calgary", "Winnipeg")  # 6 white, #15
CHI_DUL = track("Chicago", "Duluth")  # 3 red, #18

FIXTURES = {
    DEN_OMA: (35, 4),
    OMA_KC: (58, 1),
    KC_DEN: (32, 4),
    DEN_PHX: (36, 5),
    KC_STL: (60, 2),
    DEN_SFE: (39, 2),
    SFE_OKC: (82, 3),
    OKC_DEN: (34, 4),
    LA_PHX: (68, 3),
    PHX_SFE: (83, 3),
    PIT_STL: (85, 5),
    PIT_CHI: (20, 3),
    PIT_NY: (78, 2),
    NY_BOS: (10, 2),
    BOS_MTL: (8, 2),
    MTL_TOR: (74, 3),
    TOR_DUL: (44, 6),
    SEA_POR: (91, 1),
    POR_SF: (89, 5),
    MTL_NY: (72, 3),
    NY_WAS: (80, 2),
    RAL_WAS: (93, 2),
    ATL_RAL: (6, 2),
    SFE_ELP: (50, 2),
    DAL_ELP: (25, 4),
    DAL_OKC: (29, 2),
    KC_OKC: (56, 2),
    DEN_SLC: (37, 3),
    SLC_LV: (63, 3),
    LV_LA: (62, 2),
    PHX_ELP: (49, 3),
    CHI_OMA: (19, 4),
    DEN_HEL: (31, 4),
    ATL_NAS: (3, 1),
    CAL_WIN: (15, 6),
    CHI_DUL: (18, 3),
}


def test_route_fixtures_match_the_map_file() -> None:
    assert len(FIXTURES) == 36  # no two fixtures name the same track
    for index, (route_id, length) in FIXTURES.items():
        route = MAP.routes[index]
        assert (route.route_id, route.length) == (route_id, length), MAP.route_label(index)


# ---------------------------------------------------------------------------------------------
# Longest continuous path (003:107): a trail, cities may repeat, a route at most once.

LONGEST_CASES: list[tuple[str, list[int], int]] = [
    # Nothing owned: no path at all.
    ("empty network", [], 0),
    # Denver-Omaha 4 (#35). Path Denver-Omaha = 4.
    ("single route", [DEN_OMA], 4),
    # Los Angeles-Phoenix 3 (#68), Phoenix-Santa Fe 3 (#83), Santa Fe-Denver 2 (#39),
    # Denver-Omaha 4 (#35). Path Los Angeles-Phoenix-Santa Fe-Denver-Omaha = 3+3+2+4 = 12.
    ("chain of four", [LA_PHX, PHX_SFE, DEN_SFE, DEN_OMA], 12),
    # Hub Pittsburgh with three arms: Pittsburgh-Saint Louis 5 (#85); Pittsburgh-Chicago 3
    # (#20); Pittsburgh-New York 2 (#78) + New York-Boston 2 (#10) = 4. A trail passes the hub
    # once, so it takes two arms: the two longest, Saint Louis-Pittsburgh-New York-Boston
    # = 5+2+2 = 9 (not the 12 trains owned, not 5+3 = 8).
    ("branch: the two longest arms", [PIT_STL, PIT_CHI, PIT_NY, NY_BOS], 9),
    # Lollipop: triangle Denver-Omaha 4 (#35), Omaha-Kansas City 1 (#58), Kansas City-Denver 4
    # (#32), and the stick Denver-Phoenix 5 (#36). Path Phoenix-Denver-Omaha-Kansas City-Denver
    # = 5+4+1+4 = 14, passing Denver twice. The longest *simple* path is only
    # Phoenix-Denver-Omaha-Kansas City = 5+4+1 = 10.
    ("loop revisiting a city", [DEN_OMA, OMA_KC, KC_DEN, DEN_PHX], 14),
    # The lollipop plus a tail Kansas City-Saint Louis 2 (#60): 16 trains, degrees Phoenix 1,
    # Denver 3, Omaha 2, Kansas City 3, Saint Louis 1: four odd cities, so no trail uses every
    # route. Dropping the tail (2) leaves the 14 above; dropping Omaha-Kansas City (1) still
    # leaves four odd cities. Best: Phoenix-Denver-Omaha-Kansas City-Denver = 14 (the simple
    # path Phoenix-Denver-Omaha-Kansas City-Saint Louis is 12).
    ("loop with two tails", [DEN_OMA, OMA_KC, KC_DEN, DEN_PHX, KC_STL], 14),
    # A cycle alone (every city even): Denver-Omaha-Kansas City-Denver = 4+1+4 = 9.
    ("a single loop", [DEN_OMA, OMA_KC, KC_DEN], 9),
    # Figure eight: triangle Denver-Omaha 4 (#35), Omaha-Kansas City 1 (#58), Kansas
    # City-Denver 4 (#32) = 9, and triangle Denver-Santa Fe 2 (#39), Santa Fe-Oklahoma City 3
    # (#82), Oklahoma City-Denver 4 (#34) = 9, sharing Denver (degree 4, all cities even).
    # Path Denver-Omaha-Kansas City-Denver-Santa Fe-Oklahoma City-Denver = 18, every route.
    ("figure eight", [DEN_OMA, OMA_KC, KC_DEN, DEN_SFE, SFE_OKC, OKC_DEN], 18),
    # Two components: the triangle above (9, all even) and the chain Boston-Montreal 2 (#8),
    # Montreal-Toronto 3 (#74), Toronto-Duluth 6 (#44) = 11. They share no city (Duluth-Omaha
    # is not owned), so the answer is the longer component, 11, not 9+11 = 20.
    ("disconnected: the chain is longer", [DEN_OMA, OMA_KC, KC_DEN, BOS_MTL, MTL_TOR, TOR_DUL], 11),
    # Triangle (9) and the chain Seattle-Portland 1 (#91), Portland-San Francisco 5 (#89) = 6:
    # the loop component wins, 9.
    ("disconnected: the loop is longer", [DEN_OMA, OMA_KC, KC_DEN, SEA_POR, POR_SF], 9),
]


@pytest.mark.parametrize(
    ("routes", "expected"),
    [pytest.param(routes, expected, id=name) for name, routes, expected in LONGEST_CASES],
)
def test_longest_path_hand_derived(routes: list[int], expected: int) -> None:
    assert length_of(mask(*routes)) == expected


@pytest.mark.parametrize(
    ("routes", "expected"),
    [pytest.param(routes, expected, id=name) for name, routes, expected in LONGEST_CASES],
)
def test_outcome_reports_the_longest_path(routes: list[int], expected: int) -> None:
    state = with_(after_setup(2), owned=(mask(*routes), 0), tickets=((), ()))
    assert outcome(state).seats[0].longest_path == expected
    assert outcome(state).seats[1].longest_path == 0


# ---------------------------------------------------------------------------------------------
# Brute-force cross-check: every trail (sequence of distinct owned routes, each starting where
# the previous ended), from every city, with no shortcut.


def brute_force_longest(routes: list[Route]) -> int:
    edges = [(r.a, r.b, r.length) for r in routes]
    best = 0
    stack: list[tuple[int, int, int]] = []  # (city, used-edge bits, length so far)
    for a, b, _ in edges:
        stack.append((a, 0, 0))
        stack.append((b, 0, 0))
    while stack:
        city, used, total = stack.pop()
        best = max(best, total)
        for i, (a, b, n) in enumerate(edges):
            if used >> i & 1:
                continue
            if a == city:
                stack.append((b, used | 1 << i, total + n))
            if b == city:
                stack.append((a, used | 1 << i, total + n))
    return best


def brute_force_connected(routes: list[Route], x: int, y: int) -> bool:
    reached = {x}
    grew = True
    while grew:
        grew = False
        for r in routes:
            if (r.a in reached) != (r.b in reached):
                reached |= {r.a, r.b}
                grew = True
    return y in reached


def grown_set(rng: random.Random, size: int, game_map: GameMap = MAP) -> list[int]:
    """A random set of routes that mostly touch each other (so trails get long and loopy)."""
    routes = game_map.routes
    chosen = [rng.randrange(len(routes))]
    while len(chosen) < size:
        cities = {c for i in chosen for c in (routes[i].a, routes[i].b)}
        touching = [
            r.index for r in routes if r.index not in chosen and (r.a in cities or r.b in cities)
        ]
        if rng.random() < 0.1 or not touching:
            chosen.append(rng.choice([i for i in range(len(routes)) if i not in chosen]))
        else:
            chosen.append(rng.choice(touching))
    return chosen


def check_against_brute_force(indices: list[int], game_map: GameMap = MAP) -> None:
    routes = [game_map.routes[i] for i in indices]
    owned = mask(*indices)
    assert longest_path(game_map, owned) == brute_force_longest(routes), [
        game_map.route_label(i) for i in indices
    ]


#: The two maps the variants are played on (usa, usa1910, mega and bigcities share the first).
MAPS = {"usa": MAP, "newyork": NEW_YORK.game_map}


@pytest.mark.parametrize("map_name", sorted(MAPS))
def test_longest_path_matches_brute_force_on_grown_sets(map_name: str) -> None:
    rng = random.Random(20240611)
    for _ in range(300):
        check_against_brute_force(
            grown_set(rng, rng.randint(1, 12), MAPS[map_name]), MAPS[map_name]
        )


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, len(MAP.routes) - 1), max_size=12, unique=True))
def test_longest_path_matches_brute_force_on_any_set(indices: list[int]) -> None:
    check_against_brute_force(indices)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, len(NEW_YORK.game_map.routes) - 1), max_size=15, unique=True))
def test_longest_path_matches_brute_force_on_any_newyork_set(indices: list[int]) -> None:
    # A New York seat has 15 taxis (001:164-165): at most 15 routes.
    check_against_brute_force(indices, NEW_YORK.game_map)


@pytest.mark.parametrize("map_name", sorted(MAPS))
def test_connected_matches_brute_force(map_name: str) -> None:
    game_map = MAPS[map_name]
    rng = random.Random(7)
    n = len(game_map.cities)
    for _ in range(300):
        indices = grown_set(rng, rng.randint(1, 12), game_map)
        routes = [game_map.routes[i] for i in indices]
        owned = mask(*indices)
        for _ in range(5):
            x, y = rng.randrange(n), rng.randrange(n)
            assert connected(game_map, owned, x, y) == brute_force_connected(routes, x, y)


def test_brute_force_sees_what_a_simple_path_search_would_miss() -> None:
    # Guards the cross-check itself: on the lollipop (see LONGEST_CASES) it must find the
    # trail of 14, not the simple path of 10.
    routes = [MAP.routes[i] for i in (DEN_OMA, OMA_KC, KC_DEN, DEN_PHX)]
    assert brute_force_longest(routes) == 14


# ---------------------------------------------------------------------------------------------
# Ticket completion (003:97 "a continuous path of his trains between the 2 cities").


def seat0_ticket(routes: list[int], a: str, b: str) -> Outcome:
    t = ticket_index(USA, a, b)
    return outcome(with_(after_setup(2), owned=(mask(*routes), 0), tickets=((t,), ())))


# Montreal-Atlanta (9 points): Montreal-New York 3 (#72, stored Montreal->New York),
# New York-Washington 2 (#80, New York->Washington), Washington-Raleigh 2 (#93, stored
# Raleigh->Washington, so walked backwards), Raleigh-Atlanta 2 (#6, stored Atlanta->Raleigh,
# walked backwards). 3+2+2+2 = 9 trains through four routes.
MTL_ATL = [MTL_NY, NY_WAS, RAL_WAS, ATL_RAL]


def test_ticket_completed_through_several_routes_in_either_direction() -> None:
    seat = seat0_ticket(MTL_ATL, "Montreal", "Atlanta").seats[0]
    t = ticket_index(USA, "Montreal", "Atlanta")
    assert seat.tickets_completed == (t,)
    assert seat.tickets_failed == ()
    assert seat.ticket_points == 9


def test_ticket_is_symmetric_in_its_cities() -> None:
    # Los Angeles-Chicago (16; the ticket names Los Angeles first). Path from the Chicago end:
    # Chicago-Omaha 4 (#19), Omaha-Denver 4 (#35), Denver-Phoenix 5 (#36), Phoenix-Los Angeles 3
    # (#68) = 16 trains. Walking from Chicago, #19 (stored Chicago->Omaha) and #36
    # (Denver->Phoenix) go forwards, #35 (Denver->Omaha) and #68 (Los Angeles->Phoenix)
    # backwards; the ticket itself is stored Los Angeles->Chicago, the other way round.
    seat = seat0_ticket([CHI_OMA, DEN_OMA, DEN_PHX, LA_PHX], "Los Angeles", "Chicago").seats[0]
    assert seat.ticket_points == 16
    assert len(seat.tickets_completed) == 1


@pytest.mark.parametrize("missing", MTL_ATL)
def test_ticket_incomplete_when_one_link_is_missing(missing: int) -> None:
    routes = [r for r in MTL_ATL if r != missing]
    seat = seat0_ticket(routes, "Montreal", "Atlanta").seats[0]
    assert seat.tickets_completed == ()
    assert seat.tickets_failed == (ticket_index(USA, "Montreal", "Atlanta"),)
    assert seat.ticket_points == -9  # 003:105 "subtracted"


def test_ticket_incomplete_when_both_cities_are_reached_by_separate_pieces() -> None:
    # Denver-El Paso (4): Denver-Santa Fe (#39) and Phoenix-El Paso (#49) touch both cities but
    # Santa Fe-Phoenix / Santa Fe-El Paso are not owned.
    seat = seat0_ticket([DEN_SFE, PHX_ELP], "Denver", "El Paso").seats[0]
    assert seat.ticket_points == -4


def test_ticket_completed_through_a_long_detour() -> None:
    # Denver-El Paso (4 points; the direct way is Denver-Santa Fe-El Paso, 4 trains). Detour
    # west: Denver-Salt Lake City 3 (#37), Salt Lake City-Las Vegas 3 (#63), Las Vegas-Los
    # Angeles 2 (#62), Los Angeles-Phoenix 3 (#68), Phoenix-El Paso 3 (#49) = 14 trains.
    seat = seat0_ticket([DEN_SLC, SLC_LV, LV_LA, LA_PHX, PHX_ELP], "Denver", "El Paso").seats[0]
    assert seat.ticket_points == 4
    # And east: Denver-Omaha 4 (#35), Omaha-Kansas City 1 (#58), Kansas City-Oklahoma City 2
    # (#56), Oklahoma City-Dallas 2 (#29), Dallas-El Paso 4 (#25) = 13 trains.
    seat = seat0_ticket([DEN_OMA, OMA_KC, KC_OKC, DAL_OKC, DAL_ELP], "Denver", "El Paso").seats[0]
    assert seat.ticket_points == 4


def test_ticket_needs_the_seats_own_routes() -> None:
    # 003:97 "a continuous path of *his* trains": seat 1 owns the whole Montreal-Atlanta chain
    # (see MTL_ATL), seat 0 holds the ticket and owns nothing: -9 for seat 0.
    t = ticket_index(USA, "Montreal", "Atlanta")
    state = with_(after_setup(2), owned=(0, mask(*MTL_ATL)), tickets=((t,), ()))
    assert outcome(state).seats[0].ticket_points == -9


# ---------------------------------------------------------------------------------------------
# Points


def scored(
    owned: list[list[int]], tickets: list[list[tuple[str, str]]], ruleset: Ruleset = USA
) -> Outcome:
    """Outcome of a game after setup with the given routes and tickets per seat."""
    base = after_setup(len(owned), ruleset=ruleset)
    masks = tuple(mask(*routes) for routes in owned)
    kept = tuple(tuple(ticket_index(ruleset, a, b) for a, b in seat) for seat in tickets)
    state: GameState = with_(
        base,
        owned=masks,
        tickets=kept,
        route_points=tuple(route_points_of(ruleset, m) for m in masks),
    )
    return outcome(state)


def test_route_points_table_is_the_rulebooks() -> None:
    # 002:89-94: lengths 1..6 score 1, 2, 4, 7, 10, 15.
    assert USA.route_points == (0, 1, 2, 4, 7, 10, 15)


@pytest.mark.parametrize(
    ("route", "length", "points"),
    [
        (ATL_NAS, 1, 1),
        (DEN_SFE, 2, 2),
        (CHI_DUL, 3, 4),
        (DEN_OMA, 4, 7),
        (DEN_PHX, 5, 10),
        (CAL_WIN, 6, 15),
    ],
)
def test_route_points_per_length(route: int, length: int, points: int) -> None:
    assert MAP.routes[route].length == length
    result = scored([[route], []], [[], []])
    seat = result.seats[0]
    assert seat.route_points == points
    assert seat.longest_path == length
    assert seat.longest_path_bonus == 10  # the only path on the board
    assert seat.total == points + 10
    assert result.seats[1].total == 0


def test_route_points_add_up() -> None:
    result = scored([[ATL_NAS, DEN_SFE, CHI_DUL, DEN_OMA, DEN_PHX, CAL_WIN], []], [[], []])
    assert result.seats[0].route_points == 1 + 2 + 4 + 7 + 10 + 15


def test_tickets_added_and_subtracted() -> None:
    # Seat 0 owns Montreal-New York 3, New York-Washington 2, Washington-Raleigh 2,
    # Raleigh-Atlanta 2: routes 4+2+2+2 = 10 points, longest path 9 (the whole chain).
    # Tickets: Montreal-Atlanta 9 (done), New York-Atlanta 6 (done, New York-Washington-
    # Raleigh-Atlanta), Denver-El Paso 4 (not done): 9 + 6 - 4 = 11 (003:105).
    # Total 10 + 11 + 10 (longest path, seat 1 owns nothing) = 31.
    # Seat 1 owns nothing and holds Boston-Miami 12: -12.
    result = scored(
        [MTL_ATL, []],
        [
            [("Montreal", "Atlanta"), ("New York", "Atlanta"), ("Denver", "El Paso")],
            [("Boston", "Miami")],
        ],
    )
    s0, s1 = result.seats
    assert s0.route_points == 10
    assert s0.ticket_points == 11
    assert len(s0.tickets_completed) == 2
    assert s0.tickets_failed == (ticket_index(USA, "Denver", "El Paso"),)
    assert s0.longest_path == 9
    assert s0.longest_path_bonus == 10
    assert s0.total == 31
    assert (s1.route_points, s1.ticket_points, s1.longest_path_bonus, s1.total) == (0, -12, 0, -12)
    # 003:109 the most points wins.
    assert (s0.rank, s1.rank) == (1, 2)
    assert result.winners == (0,)


def test_longest_path_bonus_to_every_tied_player() -> None:
    # 003:107 "If several players are tied they each receive the bonus."
    # Seat 0: Denver-Omaha 4 (7 points), seat 1: Dallas-El Paso 4 (7), seat 2: Seattle-Portland
    # 1 (1). Longest paths 4, 4, 1.
    result = scored([[DEN_OMA], [DAL_ELP], [SEA_POR]], [[], [], []])
    assert [s.longest_path for s in result.seats] == [4, 4, 1]
    assert [s.longest_path_bonus for s in result.seats] == [10, 10, 0]
    assert [s.total for s in result.seats] == [17, 17, 1]


def test_longest_path_bonus_goes_to_the_longest_even_when_it_scores_less() -> None:
    # Seat 0: the chain Los Angeles-Phoenix-Santa Fe-Denver-Omaha = 12 (points 4+4+2+7 = 17).
    # Seat 1: Calgary-Winnipeg 6 and Denver-Phoenix 5, disconnected: longest 6 (points 25).
    result = scored([[LA_PHX, PHX_SFE, DEN_SFE, DEN_OMA], [CAL_WIN, DEN_PHX]], [[], []])
    s0, s1 = result.seats
    assert (s0.longest_path, s1.longest_path) == (12, 6)
    assert (s0.longest_path_bonus, s1.longest_path_bonus) == (10, 0)
    assert (s0.total, s1.total) == (27, 25)


def test_nobody_gets_the_longest_path_bonus_when_nobody_claimed_anything() -> None:
    # RULINGS 7: every seat's longest path is 0, a tie of everyone at 0, and still no bonus.
    result = scored([[], [], []], [[("Boston", "Miami")], [], []])
    assert [s.longest_path for s in result.seats] == [0, 0, 0]
    assert [s.longest_path_bonus for s in result.seats] == [0, 0, 0]
    assert [s.total for s in result.seats] == [-12, 0, 0]
    assert [s.rank for s in result.seats] == [3, 1, 1]


def test_tie_broken_by_most_completed_tickets() -> None:
    # Seat 0: Denver-Santa Fe 2 + Santa Fe-El Paso 2 (2+2 = 4 points), ticket Denver-El Paso 4
    # done (+4), longest path 4. Seat 1: Denver-Omaha 4 (7) + Atlanta-Nashville 1 (1), apart:
    # 8 points, no ticket, longest path 4. Both hold the longest path (4 = 4): +10 each.
    # Totals 18 = 18; completed tickets 1 > 0, so seat 0 wins (003:109).
    result = scored([[DEN_SFE, SFE_ELP], [DEN_OMA, ATL_NAS]], [[("Denver", "El Paso")], []])
    s0, s1 = result.seats
    assert (s0.total, s1.total) == (18, 18)
    assert (s0.longest_path_bonus, s1.longest_path_bonus) == (10, 10)
    assert (len(s0.tickets_completed), len(s1.tickets_completed)) == (1, 0)
    assert (s0.rank, s1.rank) == (1, 2)
    assert result.winners == (0,)


def test_tie_broken_by_the_longest_path_holder() -> None:
    # Seat 0: Denver-Omaha 4 (7) + Omaha-Kansas City 1 (1) = 8, longest path 5, the only
    # holder: +10 = 18. Seat 1: Denver-Helena 4 (7), Dallas-El Paso 4 (7), Montreal-Toronto 3
    # (4), no two touching: 18, longest path 4. No tickets on either side (0 = 0 completed).
    # Totals 18 = 18; tickets 0 = 0; seat 0 holds the bonus card, so seat 0 wins (003:109).
    result = scored([[DEN_OMA, OMA_KC], [DEN_HEL, DAL_ELP, MTL_TOR]], [[], []])
    s0, s1 = result.seats
    assert (s0.longest_path, s1.longest_path) == (5, 4)
    assert (s0.total, s1.total) == (18, 18)
    assert (s0.rank, s1.rank) == (1, 2)
    # The seat order does not matter: swapped seats give the same ranking by holder.
    swapped = scored([[DEN_HEL, DAL_ELP, MTL_TOR], [DEN_OMA, OMA_KC]], [[], []])
    assert (swapped.seats[0].rank, swapped.seats[1].rank) == (2, 1)


def test_tickets_tie_break_comes_before_the_longest_path_tie_break() -> None:
    # Seat 0 completes a ticket, seat 1 holds the longest path card; their totals are equal.
    # Seat 0: Denver-Santa Fe 2 (#39, 2 points) + Santa Fe-El Paso 2 (#50, 2), Dallas-Oklahoma
    #   City 2 (#29, 2), Kansas City-Saint Louis 2 (#60, 2), Chicago-Duluth 3 (#18, 4): 12 route
    #   points; no two pieces touch (Dallas-El Paso, Oklahoma City-Santa Fe, Kansas
    #   City-Oklahoma City, Chicago-Saint Louis are not owned), so the longest path is
    #   Denver-Santa Fe-El Paso = 4. Ticket Denver-El Paso done: +4. Total 16.
    # Seat 1: Boston-Montreal 2 (#8, 2) + Montreal-Toronto 3 (#74, 4) = 6 points, longest path
    #   5 > 4: +10. No ticket. Total 16.
    # 16 = 16; completed tickets 1 > 0 decides before the card: seat 0 wins (003:109).
    result = scored(
        [[DEN_SFE, SFE_ELP, DAL_OKC, KC_STL, CHI_DUL], [BOS_MTL, MTL_TOR]],
        [[("Denver", "El Paso")], []],
    )
    s0, s1 = result.seats
    assert (s0.route_points, s0.ticket_points, s0.longest_path) == (12, 4, 4)
    assert (s1.route_points, s1.longest_path, s1.longest_path_bonus) == (6, 5, 10)
    assert (s0.total, s1.total) == (16, 16)
    assert (s0.rank, s1.rank) == (1, 2)


def test_ties_surviving_every_tie_break_share_the_rank() -> None:
    # RULINGS 8 (docs/rules.md: competition ranking 1, 1, 3). Seats 0 and 1 each own one
    # route of 4 (7 points), hold the longest path (+10) and no ticket: 17, 0 tickets, holder
    # = holder. Seat 2 owns Seattle-Portland 1: 1 point.
    result = scored([[DEN_OMA], [DAL_ELP], [SEA_POR]], [[], [], []])
    assert [s.rank for s in result.seats] == [1, 1, 3]
    assert result.winners == (0, 1)


def test_outcome_route_points_equal_route_points_of() -> None:
    owned = [DEN_OMA, OMA_KC, KC_DEN, DEN_PHX]
    result = scored([owned, []], [[], []])
    assert result.seats[0].route_points == route_points_of(USA, mask(*owned)) == 7 + 1 + 7 + 10


def test_total_is_the_sum_of_its_parts() -> None:
    result = scored(
        [MTL_ATL, [DEN_OMA, OMA_KC, KC_DEN, DEN_PHX]],
        [[("Montreal", "Atlanta")], [("Denver", "El Paso"), ("Kansas City", "Houston")]],
    )
    for s in result.seats:
        assert s.total == s.route_points + s.ticket_points + s.longest_path_bonus
    # Seat 1: routes 25, tickets -4 -5 = -9, longest 14 > 9: +10 = 26. Seat 0: 10 + 9 = 19.
    assert [s.total for s in result.seats] == [19, 26]


# ---------------------------------------------------------------------------------------------
# The bonus cards of the USA variants (003:25, 003:29, 003:13 + 003:107 for Big Cities)

USA1910, MEGA, BIGCITIES = RULESETS["usa1910"], RULESETS["mega"], RULESETS["bigcities"]


@pytest.mark.parametrize(
    ("variant", "longest", "globetrotter"),
    [
        pytest.param("usa", 10, 0, id="usa-longest-path-only-003:13-003:107"),
        pytest.param("usa1910", 0, 15, id="usa1910-globetrotter-replaces-it-003:25"),
        pytest.param("mega", 10, 15, id="mega-both-bonus-cards-003:29"),
        pytest.param("bigcities", 10, 0, id="bigcities-longest-path-003:13-docs-rules"),
    ],
)
def test_which_bonus_cards_each_variant_hands_out(
    variant: str, longest: int, globetrotter: int
) -> None:
    # Seat 0 holds the longest path and the only completed ticket; seat 1 neither.
    # usa1910, mega, bigcities (Chicago-New York, 5, is in their ticket decks): seat 0 owns
    # Chicago-Pittsburgh 3 (#20, 4) + Pittsburgh-New York 2 (#78, 2): 6 route points, path 5,
    # ticket +5. Seat 1: Denver-Omaha 4 (#35, 7), path 4, no ticket.
    # usa (no such ticket): seat 0 owns Denver-Santa Fe 2 (#39) + Santa Fe-El Paso 2 (#50): 4
    # route points, path 4, Denver-El Paso (4) done; seat 1 owns Seattle-Portland 1 (#91).
    rules = RULESETS[variant]
    if variant == "usa":
        result = scored([[DEN_SFE, SFE_ELP], [SEA_POR]], [[("Denver", "El Paso")], []], rules)
        base = 4 + 4
    else:
        result = scored([[PIT_CHI, PIT_NY], [DEN_OMA]], [[("Chicago", "New York")], []], rules)
        base = 6 + 5
    s0, s1 = result.seats
    assert (s0.longest_path_bonus, s1.longest_path_bonus) == (longest, 0)
    assert (s0.globetrotter_bonus, s1.globetrotter_bonus) == (globetrotter, 0)
    assert s0.total == base + longest + globetrotter


# Washington-Atlanta (4, a 1910 ticket): Washington-Raleigh 2 (#93) + Raleigh-Atlanta 2 (#6).
WAS_ATL = [RAL_WAS, ATL_RAL]
# Chicago-New York (5, a 1910 ticket): Chicago-Pittsburgh 3 (#20) + Pittsburgh-New York 2 (#78).
CHI_NY = [PIT_CHI, PIT_NY]


def test_globetrotter_to_the_seat_with_the_most_completed_tickets() -> None:
    # 003:25 "Globetrotter - Most Completed Tickets", 15 points (shared/data/README.md).
    # usa1910, 3 seats. Seat 0: Washington-Atlanta done: routes 2+2 = 4, ticket +4. Seat 1:
    # Chicago-New York done (routes 4+2 = 6, +5) and Denver-Saint Louis done: Denver-Kansas City
    # 4 (#32, 7) + Kansas City-Saint Louis 2 (#60, 2), +6: routes 15, tickets 11, 2 completed.
    # Seat 2: nothing. Only seat 1 (2 > 1 > 0) gets the card: 15 + 11 + 15 = 41.
    result = scored(
        [WAS_ATL, [*CHI_NY, KC_DEN, KC_STL], []],
        [[("Washington", "Atlanta")], [("Chicago", "New York"), ("Denver", "Saint Louis")], []],
        USA1910,
    )
    s0, s1, s2 = result.seats
    assert [len(s.tickets_completed) for s in result.seats] == [1, 2, 0]
    assert [s.globetrotter_bonus for s in result.seats] == [0, 15, 0]
    assert [s.longest_path_bonus for s in result.seats] == [0, 0, 0]  # 003:25 "Replace"
    assert (s0.total, s1.total, s2.total) == (8, 41, 0)
    assert [s.rank for s in result.seats] == [2, 1, 3]


def test_globetrotter_to_every_seat_tied_for_the_most_completed_tickets() -> None:
    # docs/rules.md: tied seats each receive it, as 003:107 says of the longest path. Seat 0
    # completes Washington-Atlanta (routes 4, +4), seat 1 Chicago-New York (routes 6, +5) and
    # fails Denver-Saint Louis (-6): one completed ticket each, so both get 15. Seat 2 has no
    # ticket. Totals 4+4+15 = 23, 6+5-6+15 = 20, 0.
    result = scored(
        [WAS_ATL, CHI_NY, []],
        [[("Washington", "Atlanta")], [("Chicago", "New York"), ("Denver", "Saint Louis")], []],
        USA1910,
    )
    assert [len(s.tickets_completed) for s in result.seats] == [1, 1, 0]
    assert [len(s.tickets_failed) for s in result.seats] == [0, 1, 0]
    assert [s.globetrotter_bonus for s in result.seats] == [15, 15, 0]
    assert [s.total for s in result.seats] == [23, 20, 0]


@pytest.mark.parametrize("variant", ["usa1910", "mega"])
def test_no_globetrotter_when_nobody_completed_a_ticket(variant: str) -> None:
    # Every seat is "tied" at 0 completed tickets; like RULINGS 7 for the longest path, a card
    # for the most of something needs at least one (docs/rules.md). Seat 0 holds Washington-
    # Atlanta and owns only Washington-Raleigh (#93, 2): -4 + 2 = -2. Seat 1 owns nothing.
    result = scored([[RAL_WAS], []], [[("Washington", "Atlanta")], []], RULESETS[variant])
    assert [s.globetrotter_bonus for s in result.seats] == [0, 0]
    longest = 10 if variant == "mega" else 0  # mega keeps the Longest Path card (003:29)
    assert [s.total for s in result.seats] == [-2 + longest, 0]


def test_usa1910_ties_go_to_the_most_tickets_then_are_shared() -> None:
    # 003:109 "If a tie, the player who completed the most Destination Tickets wins"; its
    # third step names the Longest Path card, which usa1910 does not use (003:25), so a tie on
    # points and tickets is shared (RULINGS 8). docs/rules.md.
    # Seat 0: New York-Washington 2 (#80, 2), Washington-Raleigh 2 (#93, 2), Raleigh-Atlanta 2
    # (#6, 2), Atlanta-Nashville 1 (#3, 1): 7 route points, path New York-...-Nashville = 7;
    # Washington-Atlanta done +4; Globetrotter 15 (1 ticket, tied): 26.
    # Seat 1: Chicago-Pittsburgh-New York (#20, #78): 6 route points, path 5; Chicago-New York
    # done +5; Globetrotter 15: 26.
    # Seat 2: Denver-Omaha 4 (#35, 7) + Seattle-Portland 1 (#91, 1) + Kansas City-Omaha 1
    # (#58, 1): 9 route points, no ticket: 9.
    result = scored(
        [[NY_WAS, *WAS_ATL, ATL_NAS], CHI_NY, [DEN_OMA, SEA_POR, OMA_KC]],
        [[("Washington", "Atlanta")], [("Chicago", "New York")], []],
        USA1910,
    )
    s0, s1, s2 = result.seats
    assert (s0.longest_path, s1.longest_path) == (7, 5)
    assert (s0.total, s1.total, s2.total) == (26, 26, 9)
    assert [s.rank for s in result.seats] == [1, 1, 3]
    assert result.winners == (0, 1)
    # The same claims under the usa tie-breaks would not tie: there the longest path (7) is a
    # bonus card worth 10 (003:107), and it breaks ties (003:109).
    assert USA1910.tie_breaks == ("tickets_completed",)


def test_usa1910_tie_on_points_goes_to_the_most_completed_tickets() -> None:
    # 003:109 "If a tie, the player who completed the most Destination Tickets wins."
    # Seat 0: Washington-Atlanta done: routes 2+2 = 4, +4: 8 (1 completed ticket).
    # Seat 1: Denver-Omaha 4 (#35, 7) + Seattle-Portland 1 (#91, 1): 8, no ticket.
    # Seat 2: Chicago-New York done (routes 4+2, +5) and Denver-Saint Louis done (Denver-Kansas
    # City 4, #32, 7 + Kansas City-Saint Louis 2, #60, 2; +6): 15 + 11 = 26, and the only seat
    # with 2 completed tickets holds the Globetrotter: 41.
    # Seats 0 and 1 tie on 8; seat 0 completed 1 ticket, seat 1 none: seat 0 ranks above.
    result = scored(
        [WAS_ATL, [DEN_OMA, SEA_POR], [*CHI_NY, KC_DEN, KC_STL]],
        [[("Washington", "Atlanta")], [], [("Chicago", "New York"), ("Denver", "Saint Louis")]],
        USA1910,
    )
    assert [s.total for s in result.seats] == [8, 8, 41]
    assert [s.globetrotter_bonus for s in result.seats] == [0, 0, 15]
    assert [s.rank for s in result.seats] == [2, 3, 1]


def test_mega_tie_broken_by_tickets_then_by_the_longest_path_card() -> None:
    # mega keeps 003:109 whole (both bonus cards are in play, 003:29). Both seats complete one
    # ticket, so both hold the Globetrotter (+15); totals tie; tickets tie; seat 0 holds the
    # Longest Path card and wins.
    # Seat 0: New York-Washington 2 (#80), Washington-Raleigh 2 (#93), Raleigh-Atlanta 2 (#6),
    # Atlanta-Nashville 1 (#3): 2+2+2+1 = 7 route points, path 7 (the longest: +10);
    # Washington-Atlanta +4; Globetrotter +15: 36.
    # Seat 1: Chicago-Pittsburgh-New York (#20 4, #78 2) + Denver-Phoenix 5 (#36, 10): 16 route
    # points, longest path 5; Chicago-New York +5; Globetrotter +15: 36.
    result = scored(
        [[NY_WAS, *WAS_ATL, ATL_NAS], [*CHI_NY, DEN_PHX]],
        [[("Washington", "Atlanta")], [("Chicago", "New York")]],
        MEGA,
    )
    s0, s1 = result.seats
    assert (s0.longest_path, s1.longest_path) == (7, 5)
    assert (s0.longest_path_bonus, s1.longest_path_bonus) == (10, 0)
    assert (s0.globetrotter_bonus, s1.globetrotter_bonus) == (15, 15)
    assert (s0.total, s1.total) == (36, 36)
    assert (s0.rank, s1.rank) == (1, 2)
    assert MEGA.tie_breaks == ("tickets_completed", "longest_path")  # 003:109


def test_big_cities_scores_its_tickets_and_the_longest_path() -> None:
    # Big Cities: the tickets with a Big City (003:35) at the 1910-box values, the Longest Path
    # card (docs/rules.md: 003:13 stands). Seat 0: Chicago-New York done (routes 6, +5), path
    # 5: +10 = 21. Seat 1: holds Los Angeles-New York (20 in the 1910 box, 21 in the base
    # game: shared/data/README.md) and owns Denver-Omaha (#35, 7): 7 - 20 = -13.
    result = scored(
        [CHI_NY, [DEN_OMA]], [[("Chicago", "New York")], [("Los Angeles", "New York")]], BIGCITIES
    )
    s0, s1 = result.seats
    assert (s0.total, s1.total) == (21, -13)
    assert (s0.longest_path_bonus, s0.globetrotter_bonus) == (10, 0)
    assert s1.ticket_points == -20


# ---------------------------------------------------------------------------------------------
# New York (001): routes 1/2/4/7, tickets, Tourist Attractions, no bonus card, its tie rule

NY_MAP = NEW_YORK.game_map


def ny_track(a: str, b: str, colour: str | None = None) -> int:
    ia, ib = NY_MAP.city_index[a], NY_MAP.city_index[b]
    found = [r for r in NY_MAP.routes if {r.a, r.b} == {ia, ib}]
    if colour is not None:
        wanted = GRAY if colour == "gray" else COLOURS.index(colour)
        found = [r for r in found if r.colour == wanted]
    if not found:
        raise ValueError(f"no track {a}-{b} {colour}")
    return found[0].index


LC_MW = ny_track("Lincoln Center", "Midtown West")  # 2 red, #2
LC_CP = ny_track("Lincoln Center", "Central Park")  # 2 orange, #1
CP_TS = ny_track("Central Park", "Times Square", "black")  # 2 black, #5
CP_UN = ny_track("Central Park", "United Nations")  # 3 pink, #7
MW_TS = ny_track("Midtown West", "Times Square")  # 1 gray, #8
MW_CH = ny_track("Midtown West", "Chelsea")  # 2 blue, #10
TS_UN = ny_track("Times Square", "United Nations")  # 2 gray, #11
TS_ESB = ny_track("Times Square", "Empire State Building", "orange")  # 1 orange, #12
UN_ESB = ny_track("United Nations", "Empire State Building")  # 2 black, #14
ESB_GP = ny_track("Empire State Building", "Gramercy Park", "red")  # 1 red, #16
ESB_CH = ny_track("Empire State Building", "Chelsea")  # 2 gray, #18 (first of double 5)
CH_GP = ny_track("Chelsea", "Gramercy Park")  # 2 orange, #20
CH_SOHO = ny_track("Chelsea", "Soho")  # 4 pink, #23
GP_GV = ny_track("Gramercy Park", "Greenwich Village", "black")  # 2 black, #24
GP_EV = ny_track("Gramercy Park", "East Village")  # 2 gray, #26
EV_LES = ny_track("East Village", "Lower East Side")  # 1 black, #32
LES_CT = ny_track("Lower East Side", "Chinatown")  # 1 blue, #33
LES_BK = ny_track("Lower East Side", "Brooklyn")  # 3 gray, #34
CT_WS = ny_track("Chinatown", "Wall Street", "green")  # 1 green, #36

NY_FIXTURES = {
    LC_MW: (2, 2),
    LC_CP: (1, 2),
    CP_TS: (5, 2),
    CP_UN: (7, 3),
    MW_TS: (8, 1),
    MW_CH: (10, 2),
    TS_UN: (11, 2),
    TS_ESB: (12, 1),
    UN_ESB: (14, 2),
    ESB_GP: (16, 1),
    ESB_CH: (18, 2),
    CH_GP: (20, 2),
    CH_SOHO: (23, 4),
    GP_GV: (24, 2),
    GP_EV: (26, 2),
    EV_LES: (32, 1),
    LES_CT: (33, 1),
    LES_BK: (34, 3),
    CT_WS: (36, 1),
}


def test_new_york_route_fixtures_match_the_map_file() -> None:
    assert len(NY_FIXTURES) == 19
    for index, (route_id, length) in NY_FIXTURES.items():
        route = NY_MAP.routes[index]
        assert (route.route_id, route.length) == (route_id, length), NY_MAP.route_label(index)


def ny_names(cities: tuple[int, ...]) -> set[str]:
    return {NY_MAP.cities[c].name for c in cities}


def ny_scored(owned: list[list[int]], tickets: list[list[tuple[str, str]]]) -> Outcome:
    return scored(owned, tickets, NEW_YORK)


@pytest.mark.parametrize(
    ("route", "length", "points", "attractions"),
    [
        # East Village-Lower East Side: neither is a Tourist Attraction
        pytest.param(EV_LES, 1, 1, set(), id="length-1-1-point-001:70-73"),
        # Lincoln Center-Midtown West: neither is an attraction
        pytest.param(LC_MW, 2, 2, set(), id="length-2-2-points-001:70-73"),
        # Lower East Side-Brooklyn: Brooklyn is one
        pytest.param(LES_BK, 3, 4, {"Brooklyn"}, id="length-3-4-points-001:70-73"),
        # Chelsea-Soho, the only route of 4: Chelsea is one
        pytest.param(CH_SOHO, 4, 7, {"Chelsea"}, id="length-4-7-points-001:70-73"),
    ],
)
def test_new_york_route_table(route: int, length: int, points: int, attractions: set[str]) -> None:
    # 001:70-73 "the Route Scoring Table printed on the board": 1, 2, 4, 7 for 1-4 spaces.
    # The seat's only route is also the only path on the board: no bonus in New York.
    assert NY_MAP.routes[route].length == length
    result = ny_scored([[route], []], [[], []])
    s0 = result.seats[0]
    assert s0.route_points == points
    assert ny_names(s0.attractions) == attractions
    assert s0.attraction_points == len(attractions)
    assert (s0.longest_path, s0.longest_path_bonus, s0.globetrotter_bonus) == (length, 0, 0)
    assert s0.total == points + len(attractions)
    assert result.seats[1].total == 0


def test_new_york_attractions_count_once_however_many_routes_touch_them() -> None:
    # 001:79-81 "one point for each Tourist Attraction that is connected to one or more of the
    # Routes they claimed". Seat 0: Midtown West-Times Square 1 (#8), Times Square-Empire State
    # Building 1 (#12), Empire State Building-Chelsea 2 (#18), Chelsea-Gramercy Park 2 (#20):
    # routes 1+1+2+2 = 6. Touched: Midtown West, Times Square (2 routes), Empire State
    # Building (2), Chelsea (2), Gramercy Park: 3 attractions, 3 points (not 6).
    s0 = ny_scored([[MW_TS, TS_ESB, ESB_CH, CH_GP], []], [[], []]).seats[0]
    assert s0.route_points == 6
    assert ny_names(s0.attractions) == {"Times Square", "Empire State Building", "Chelsea"}
    assert s0.attraction_points == 3
    assert s0.total == 9


def test_new_york_ticket_route_table_and_attractions_together() -> None:
    # Central Park-Chelsea (5 points): Central Park-Times Square 2 (#5), Times Square-Midtown
    # West 1 (#8), Midtown West-Chelsea 2 (#10) = 5 taxis. Routes 2+1+2 = 5 (001:70-73);
    # ticket +5 (001:75-77); attractions Central Park, Times Square, Chelsea (Midtown West is
    # not one) = 3 (001:79-81). Total 13. Longest path 5, and no bonus for it.
    s0 = ny_scored([[CP_TS, MW_TS, MW_CH], []], [[("Central Park", "Chelsea")], []]).seats[0]
    assert (s0.route_points, s0.ticket_points, s0.attraction_points) == (5, 5, 3)
    assert ny_names(s0.attractions) == {"Central Park", "Times Square", "Chelsea"}
    assert (s0.longest_path, s0.longest_path_bonus) == (5, 0)
    assert s0.total == 13


def test_new_york_failed_ticket_is_subtracted() -> None:
    # 001:75-77 "subtracts the value of any card they failed to complete". United Nations-Wall
    # Street (8), owning only United Nations-Empire State Building 2 (#14): route 2, ticket -8,
    # attractions United Nations and Empire State Building +2: -4.
    s0 = ny_scored([[UN_ESB], []], [[("United Nations", "Wall Street")], []]).seats[0]
    assert (s0.route_points, s0.ticket_points, s0.attraction_points, s0.total) == (2, -8, 2, -4)


def test_new_york_attraction_off_the_ticket_path_counts() -> None:
    # docs/rules.md: an attraction counts whether or not it is on a ticket's path. Lower East
    # Side-Wall Street (2) done by Lower East Side-Chinatown 1 (#33) + Chinatown-Wall Street 1
    # (#36); apart from it Lincoln Center-Central Park 2 (#1). Routes 1+1+2 = 4, ticket +2,
    # attractions Chinatown, Wall Street and Central Park (on no ticket) = 3: 9.
    s0 = ny_scored([[LES_CT, CT_WS, LC_CP], []], [[("Lower East Side", "Wall Street")], []]).seats[
        0
    ]
    assert ny_names(s0.attractions) == {"Chinatown", "Wall Street", "Central Park"}
    assert (s0.route_points, s0.ticket_points, s0.attraction_points, s0.total) == (4, 2, 3, 9)


def test_new_york_two_seats_both_score_the_same_attraction() -> None:
    # 001:79-81 counts each player's own routes: Times Square-United Nations 2 (#11) for seat
    # 0 (Times Square, United Nations: 2 + 2 = 4) and Central Park-United Nations 3 (#7) for
    # seat 1 (Central Park, United Nations: 4 + 2 = 6). Both score United Nations.
    s0, s1 = ny_scored([[TS_UN], [CP_UN]], [[], []]).seats
    assert ny_names(s0.attractions) == {"Times Square", "United Nations"}
    assert ny_names(s1.attractions) == {"Central Park", "United Nations"}
    assert (s0.total, s1.total) == (4, 6)


def test_new_york_tie_goes_to_the_most_completed_tickets() -> None:
    # 001:40-42 "In case of a tie, the tied player who completed the most Destination Ticket
    # cards wins." Seat 0: Lower East Side-Wall Street done (routes 1+1, +2, Chinatown and
    # Wall Street +2): 6. Seat 1: Chelsea-Gramercy Park 2 (#20), Gramercy Park-East Village 2
    # (#26), East Village-Lower East Side 1 (#32): routes 2+2+1 = 5, Chelsea +1: 6, no ticket;
    # its path (5) is longer than seat 0's (2), which New York does not count.
    result = ny_scored(
        [[LES_CT, CT_WS], [CH_GP, GP_EV, EV_LES]], [[("Lower East Side", "Wall Street")], []]
    )
    s0, s1 = result.seats
    assert (s0.total, s1.total) == (6, 6)
    assert (s0.longest_path, s1.longest_path) == (2, 5)
    assert (s0.rank, s1.rank) == (1, 2)


def test_new_york_players_still_tied_share_the_victory() -> None:
    # 001:40-42 "If players are still tied, they happily share the victory." Seat 0: Lower East
    # Side-Wall Street done as above (6) + Lincoln Center-Midtown West 2 (#2, no attraction):
    # 8, longest path 2. Seat 1: Empire State Building-Greenwich Village (3) done by Empire
    # State Building-Gramercy Park 1 (#16) + Gramercy Park-Greenwich Village 2 (#24): routes
    # 1+2 = 3, +3, Empire State Building and Greenwich Village +2: 8, longest path 3.
    # 8 = 8, one ticket each: shared first place (the longer path breaks nothing here).
    result = ny_scored(
        [[LES_CT, CT_WS, LC_MW], [ESB_GP, GP_GV]],
        [[("Lower East Side", "Wall Street")], [("Empire State Building", "Greenwich Village")]],
    )
    s0, s1 = result.seats
    assert (s0.total, s1.total) == (8, 8)
    assert (s0.longest_path, s1.longest_path) == (2, 3)
    assert (s0.rank, s1.rank) == (1, 1)
    assert result.winners == (0, 1)
    assert NEW_YORK.tie_breaks == ("tickets_completed",)


def test_new_york_nobody_scores_attractions_without_routes() -> None:
    result = ny_scored([[], [], []], [[("Central Park", "Chelsea")], [], []])
    assert [s.attractions for s in result.seats] == [(), (), ()]
    assert [s.total for s in result.seats] == [-5, 0, 0]
    assert [s.rank for s in result.seats] == [3, 1, 1]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, len(NY_MAP.routes) - 1), max_size=15, unique=True))
def test_new_york_attractions_are_the_attraction_ends_of_the_seats_routes(
    indices: list[int],
) -> None:
    # 001:79-81 brute force: the attractions among the end points of the seat's routes.
    ends = {c for i in indices for c in (NY_MAP.routes[i].a, NY_MAP.routes[i].b)}
    expected = tuple(sorted(c for c in ends if NY_MAP.cities[c].attraction))
    assert attractions_touched(NY_MAP, mask(*indices)) == expected
    seat = outcome(with_(after_setup(2, ruleset=NEW_YORK), owned=(mask(*indices), 0))).seats[0]
    assert seat.attractions == expected
    assert seat.attraction_points == len(expected)


def globetrotter_tie_break_changes_nothing(state: GameState) -> list[int]:
    """The ranks of ``state``, checked equal to those under the same ruleset with the
    Globetrotter appended as a last tie-break."""
    rules = state.ruleset
    with_card = dataclasses.replace(rules, tie_breaks=(*rules.tie_breaks, "globetrotter"))
    ranks = [s.rank for s in outcome(state).seats]
    again = outcome(dataclasses.replace(state, ruleset=with_card))
    assert [s.rank for s in again.seats] == ranks
    return ranks


@pytest.mark.parametrize("variant", ["usa1910", "mega"])
def test_a_globetrotter_tie_break_would_never_change_a_rank(variant: str) -> None:
    # docs/rules.md (1910 tie-breaks): the Globetrotter holders are exactly the seats tied for
    # the most completed tickets, so once "most tickets" has been compared the card cannot
    # tell the remaining seats apart. Appending it as a last tie-break changes no rank: in
    # the shared tie above, and in random finished games.
    rules = RULESETS[variant]
    tie = scored(
        [[NY_WAS, *WAS_ATL, ATL_NAS], CHI_NY, [DEN_OMA, SEA_POR, OMA_KC]],
        [[("Washington", "Atlanta")], [("Chicago", "New York")], []],
        rules,
    )
    base = after_setup(3, ruleset=rules)
    masks = (mask(NY_WAS, *WAS_ATL, ATL_NAS), mask(*CHI_NY), mask(DEN_OMA, SEA_POR, OMA_KC))
    state = with_(
        base,
        owned=masks,
        tickets=(
            (ticket_index(rules, "Washington", "Atlanta"),),
            (ticket_index(rules, "Chicago", "New York"),),
            (),
        ),
    )
    ranks = globetrotter_tie_break_changes_nothing(state)
    assert ranks == [s.rank for s in tie.seats]
    if variant == "usa1910":
        assert ranks == [1, 1, 3]  # shared, as test_usa1910_ties_go_to_the_most_tickets_...
    for seed in range(30):
        globetrotter_tie_break_changes_nothing(play_random_game(rules, 2 + seed % 4, seed).final)
