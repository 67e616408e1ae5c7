"""The rules that differ between variants, table by table, each case citing its line.

The variants are data (referee/games/board/data/rulesets/*.toml). ``usa1910``, ``mega`` and
``bigcities`` are the USA 1910 box's variants (003:21-37: other tickets, another deal, other
bonus cards; every other rule of 003 stands). ``newyork`` is Ticket to Ride: New York (001; its
columns are interleaved, so a rule's lines may sit apart): the same mechanisms with its own
numbers, a 44-card deck whose wild card is the Taxi card (the Locomotive's card kind), 15 taxis,
Tourist Attractions and its own double-route and tie rules. Where 001 is silent the base rules
(003) and RULINGS.md apply (docs/rules.md).

Scoring cases are in tests/games/test_scoring.py, the numbers of each ruleset in
tests/games/test_ruleset.py, and the properties, invariants, view-leak and perft tests run for every
variant in their own files.
"""

from __future__ import annotations

from itertools import combinations

import pytest

from referee.games.board import (
    ClaimRoute,
    GameState,
    IllegalActionError,
    KeepTickets,
    Phase,
    apply,
    available_variants,
    legal_actions,
    load_ruleset,
    new_game,
    view,
)
from referee.games.board.actions import DRAW_BLIND, DRAW_TICKETS, DrawFaceUp
from referee.games.board.describe import BoardDescriber
from referee.games.board.events import FaceUpDealt, FaceUpFlushed, LastRoundStarted, RouteClaimed
from referee.games.board.state import EMPTY
from referee.games.common.cards import LOCOMOTIVE, NUM_CARD_KINDS
from referee.selfplay import play_random_game
from tests.helpers import (
    FACTS,
    NEW_YORK,
    RULESETS,
    VARIANTS,
    after_setup,
    card,
    hand,
    route_index,
    variant_seats,
    with_,
)

TAXI = LOCOMOTIVE  # 001:120-122 the Taxi card is the wild card: the Locomotive's card kind
RED, ORANGE, GREEN, BLUE, PINK, BLACK = (
    card(c) for c in ("red", "orange", "green", "blue", "pink", "black")
)
NO_DISCARDS = (0,) * NUM_CARD_KINDS

# New York routes (referee/games/board/data/maps/newyork.json; ids #n)
LC_MW = route_index(NEW_YORK, "Lincoln Center", "Midtown West")  # 2 red, #2
LC_TS_GREEN = route_index(NEW_YORK, "Lincoln Center", "Times Square", "green")  # 2, #3 double 1
LC_TS_BLUE = route_index(NEW_YORK, "Lincoln Center", "Times Square", "blue")  # 2, #4 double 1
MW_TS = route_index(NEW_YORK, "Midtown West", "Times Square")  # 1 gray, #8
CP_UN = route_index(NEW_YORK, "Central Park", "United Nations")  # 3 pink, #7
LES_BK = route_index(NEW_YORK, "Lower East Side", "Brooklyn")  # 3 gray, #34
CH_SOHO = route_index(NEW_YORK, "Chelsea", "Soho")  # 4 pink, #23
EV_LES = route_index(NEW_YORK, "East Village", "Lower East Side")  # 1 black, #32

SEAT_CASES = [pytest.param(v, n, id=f"{v}-{n}p") for v, n in variant_seats()]


def test_every_packaged_variant_is_tested() -> None:
    """A new ruleset file fails here until it has its facts (tests/helpers.py) and tests."""
    assert set(available_variants()) == set(VARIANTS) == set(FACTS)


def test_new_york_route_fixtures() -> None:
    routes = NEW_YORK.game_map.routes
    got = {
        i: (routes[i].route_id, routes[i].length, routes[i].double_group)
        for i in (LC_MW, LC_TS_GREEN, LC_TS_BLUE, MW_TS, CP_UN, LES_BK, CH_SOHO, EV_LES)
    }
    assert got == {
        LC_MW: (2, 2, None),
        LC_TS_GREEN: (3, 2, 1),
        LC_TS_BLUE: (4, 2, 1),
        MW_TS: (8, 1, None),
        CP_UN: (7, 3, None),
        LES_BK: (34, 3, None),
        CH_SOHO: (23, 4, None),
        EV_LES: (32, 1, None),
    }


# ---------------------------------------------------------------------------------------------
# player counts: 002:18 (2-5 on the USA map); 001:164-165 15 taxis in each of 4 colours (2-4)


@pytest.mark.parametrize(
    ("variant", "players", "allowed"),
    [
        pytest.param("usa1910", 5, True, id="usa1910-5-players-002:18"),
        pytest.param("mega", 6, False, id="mega-6-players-002:18"),
        pytest.param("bigcities", 1, False, id="bigcities-1-player-002:18"),
        pytest.param("newyork", 2, True, id="newyork-2-players-001:152"),
        pytest.param("newyork", 4, True, id="newyork-4-players-001:164-165"),
        pytest.param("newyork", 5, False, id="newyork-5-players-001:164-165"),
        pytest.param("newyork", 1, False, id="newyork-1-player-001:164-165"),
    ],
)
def test_player_counts(variant: str, players: int, allowed: bool) -> None:
    rules = RULESETS[variant]
    if allowed:
        assert new_game(rules, players, 1).num_seats == players
        return
    with pytest.raises(ValueError, match=f"{variant} is for 2-{rules.max_players} players"):
        new_game(rules, players, 1)


# ---------------------------------------------------------------------------------------------
# the deal: 003:9-17 with the variant lines 003:29, 003:35; New York 001:85-104


@pytest.mark.parametrize(("variant", "players"), SEAT_CASES)
def test_the_deal(variant: str, players: int) -> None:
    facts = FACTS[variant]
    s = new_game(RULESETS[variant], players, seed=1)  # seed 1: no first-row flush anywhere
    assert not any(isinstance(e, FaceUpFlushed) for e in s.events)
    assert s.trains == (facts.trains,) * players  # 003:9; 001:164-165 15 taxis
    assert tuple(sum(h) for h in s.hands) == (facts.hand,) * players  # 003:11; 001:88-89
    assert len(s.face_up) == facts.face_up and EMPTY not in s.face_up  # 003:11; 001:91-92
    assert len(s.deck) == sum(facts.cards) - facts.hand * players - facts.face_up
    # 003:15, 003:29, 003:35, 001:96-97 tickets dealt; the rest is the ticket deck
    assert tuple(len(o) for o in s.offered) == (facts.setup_dealt,) * players
    assert len(s.ticket_deck) == facts.tickets - facts.setup_dealt * players
    assert sorted([t for o in s.offered for t in o] + list(s.ticket_deck)) == list(
        range(facts.tickets)
    )
    assert s.phase is Phase.SETUP_TICKETS and s.seat == 0


@pytest.mark.parametrize(
    ("variant", "dealt", "keep_min"),
    [
        pytest.param("usa", 3, 2, id="usa-keep-2-of-3-003:15-17"),
        pytest.param("usa1910", 3, 2, id="usa1910-keep-2-of-3-003:15-17"),
        pytest.param("mega", 5, 3, id="mega-keep-3-of-5-003:29"),
        pytest.param("bigcities", 4, 2, id="bigcities-keep-2-of-4-003:35"),
        pytest.param("newyork", 2, 1, id="newyork-keep-1-of-2-001:96-99"),
    ],
)
def test_starting_tickets_keep_at_least(variant: str, dealt: int, keep_min: int) -> None:
    s = new_game(RULESETS[variant], 3, seed=2)
    offered = sorted(s.offered[0])
    assert len(offered) == dealt
    subsets = {KeepTickets(c) for k in range(dealt + 1) for c in combinations(offered, k)}
    legal = set(legal_actions(s))
    assert legal == {a for a in subsets if len(a.tickets) >= keep_min}
    for action in sorted(subsets - legal, key=lambda a: a.tickets):
        with pytest.raises(IllegalActionError) as err:
            apply(s, action)
        assert err.value.rule == "tickets.keep_min"
    # keeping exactly the minimum returns the rest to the bottom (003:17; 001:99-102)
    kept = KeepTickets(tuple(offered[:keep_min]))
    after = apply(s, kept)
    returned = tuple(t for t in s.offered[0] if t not in kept.tickets)
    assert after.tickets[0] == kept.tickets
    assert after.ticket_deck == returned + s.ticket_deck


@pytest.mark.parametrize(
    ("players", "seed"),
    [
        pytest.param(2, 34, id="2p-seed34-001:92-94"),
        pytest.param(3, 84, id="3p-seed84-001:92-94"),
        pytest.param(4, 4, id="4p-seed4-001:92-94"),
    ],
)
def test_new_york_first_row_with_three_taxis_is_flushed(players: int, seed: int) -> None:
    # 001:92-94 "If by doing so, three of the five face up cards are Taxi cards, immediately
    # discard all five cards and flip five new cards face up to replace them." (Seeds found by
    # search; if the shuffle ever changes, pick new ones.)
    s = new_game(NEW_YORK, players, seed)
    flushes = [e for e in s.events if isinstance(e, FaceUpFlushed)]
    assert len(flushes) >= 1
    assert flushes[0].cards.count(TAXI) >= 3
    first = [e.card for e in s.events[: s.events.index(flushes[0])] if isinstance(e, FaceUpDealt)]
    assert tuple(first) == flushes[0].cards
    assert s.face_up.count(TAXI) < 3
    assert s.card_count() == 44
    assert sum(s.discards) == 5 * len(flushes)


# ---------------------------------------------------------------------------------------------
# New York draws (001:126-140): the base mechanisms with Taxi cards


def ny_turn(
    row: tuple[int, ...], deck_from_top: tuple[int, ...], num_seats: int = 3, **changes: object
) -> GameState:
    """Seat 0 of a New York game to play its first turn, empty-handed, with this row and deck."""
    fields: dict[str, object] = {"discards": NO_DISCARDS, "hands": {0: hand()}, **changes}
    return with_(
        after_setup(num_seats, seed=1, ruleset=NEW_YORK),
        face_up=row,
        deck=tuple(reversed(deck_from_top)),
        **fields,
    )


ROW = (RED, ORANGE, GREEN, BLUE, PINK)
DECK = (BLACK, RED, GREEN, BLUE, ORANGE, PINK, BLACK, RED)


def test_new_york_face_up_taxi_first_ends_the_turn() -> None:
    # 001:131-132 "if you take a face up Taxi card as your first card, you cannot take another
    # card on that turn"
    s = ny_turn((TAXI, ORANGE, GREEN, BLUE, PINK), DECK)
    after = apply(s, DrawFaceUp(0))
    assert after.hands[0] == hand(loco=1)
    assert (after.phase, after.seat) == (Phase.TURN, 1)
    assert after.face_up == (BLACK, ORANGE, GREEN, BLUE, PINK)


@pytest.mark.parametrize(
    ("row", "deck", "first"),
    [
        pytest.param((RED, TAXI, GREEN, BLUE, PINK), DECK, DrawFaceUp(0), id="already-up-001:133"),
        pytest.param(ROW, (TAXI, *DECK), DrawFaceUp(0), id="turned-up-as-replacement-001:133"),
        pytest.param((RED, TAXI, GREEN, BLUE, PINK), DECK, DRAW_BLIND, id="after-blind-001:133"),
    ],
)
def test_new_york_face_up_taxi_never_second(
    row: tuple[int, ...], deck: tuple[int, ...], first: DrawFaceUp
) -> None:
    # 001:132-133 "You cannot take a face up Taxi card as your second card either."
    s = apply(ny_turn(row, deck), first)
    assert s.phase is Phase.SECOND_CARD
    taxi_slots = [i for i, c in enumerate(s.face_up) if c == TAXI]
    assert taxi_slots
    for slot in taxi_slots:
        assert DrawFaceUp(slot) not in legal_actions(s)
        with pytest.raises(IllegalActionError) as err:
            apply(s, DrawFaceUp(slot))
        assert err.value.rule == "draw.second_locomotive"


def test_new_york_blind_taxis_are_cards_like_any_other() -> None:
    # 001:126-128 "draw two Transportation cards ... the top card from the deck (a blind
    # draw)": 001 limits only face-up Taxi cards; two blind Taxis are both kept (the base
    # reading of 003:47, docs/rules.md).
    s = ny_turn(ROW, (TAXI, TAXI, *DECK))
    s = apply(apply(s, DRAW_BLIND), DRAW_BLIND)
    assert s.hands[0] == hand(loco=2)
    assert s.seat == 1


def test_new_york_three_face_up_taxis_are_flushed() -> None:
    # 001:135-137 "If, at any time, three of the five face up cards are Taxi cards,
    # immediately discard all five cards and flip five new cards from the deck face up"
    s = ny_turn((TAXI, TAXI, RED, BLUE, GREEN), (TAXI, *DECK))
    after = apply(s, DrawFaceUp(2))
    assert after.events[2] == FaceUpFlushed((TAXI, TAXI, TAXI, BLUE, GREEN))
    assert after.face_up == DECK[:5]
    assert after.discards == hand(loco=3, blue=1, green=1)
    assert after.phase is Phase.SECOND_CARD


def test_new_york_two_face_up_taxis_stay() -> None:
    # 001:135-137 three, not two
    s = ny_turn((TAXI, TAXI, RED, BLUE, GREEN), DECK)
    after = apply(s, DrawFaceUp(2))
    assert after.face_up == (TAXI, TAXI, BLACK, BLUE, GREEN)
    assert not any(isinstance(e, FaceUpFlushed) for e in after.events)


def test_new_york_empty_deck_reshuffles_the_discards() -> None:
    # 001:139-140 "When the deck is empty, shuffle the discarded cards to create a new
    # Transportation cards deck."
    s = ny_turn(ROW, (BLACK,), discards=hand(pink=2, orange=1))
    after = apply(s, DRAW_BLIND)
    assert sorted(after.deck) == sorted((PINK, PINK, ORANGE))
    assert after.discards == NO_DISCARDS
    assert after.shuffles == s.shuffles + 1


# ---------------------------------------------------------------------------------------------
# New York claims (001:1-9, 001:120-122, 001:142-159)


def ny_claim(hand0: tuple[int, ...], taxis: int = 15, num_seats: int = 3) -> GameState:
    return with_(
        after_setup(num_seats, seed=1, ruleset=NEW_YORK), hands={0: hand0}, trains={0: taxis}
    )


@pytest.mark.parametrize(
    ("hand0", "action", "rule", "taxis"),
    [
        pytest.param(hand(red=2), ClaimRoute(LC_MW, RED, 0), None, 15, id="colour-001:155-159"),
        pytest.param(
            hand(blue=2), ClaimRoute(LC_MW, BLUE, 0), "claim.colour", 15, id="wrong-001:157-159"
        ),
        pytest.param(
            hand(red=1, loco=1), ClaimRoute(LC_MW, RED, 1), None, 15, id="taxi-wild-001:120-122"
        ),
        pytest.param(
            hand(loco=2), ClaimRoute(LC_MW, TAXI, 2), None, 15, id="all-taxis-001:120-122"
        ),
        pytest.param(
            hand(orange=3), ClaimRoute(LES_BK, ORANGE, 0), None, 15, id="gray-any-colour-001:1-2"
        ),
        pytest.param(
            hand(orange=2, blue=1),
            ClaimRoute(LES_BK, ORANGE, 0),
            "claim.cards",
            15,
            id="gray-one-colour-only-001:1-2",
        ),
        pytest.param(
            hand(pink=4), ClaimRoute(CH_SOHO, PINK, 0), None, 4, id="exactly-4-taxis-001:8-9"
        ),
        pytest.param(
            hand(pink=4),
            ClaimRoute(CH_SOHO, PINK, 0),
            "claim.trains",
            3,
            id="3-taxis-for-4-spaces-001:8-9",
        ),
    ],
)
def test_new_york_claims(
    hand0: tuple[int, ...], action: ClaimRoute, rule: str | None, taxis: int
) -> None:
    s = ny_claim(hand0, taxis)
    if rule is not None:
        assert action not in legal_actions(s)
        with pytest.raises(IllegalActionError) as err:
            apply(s, action)
        assert err.value.rule == rule
        return
    assert action in legal_actions(s)
    after = apply(s, action)
    length = NEW_YORK.game_map.routes[action.route].length
    assert after.trains[0] == taxis - length  # 001:8-9 one taxi per space
    assert after.owned[0] == 1 << action.route
    assert sum(after.hands[0]) == sum(hand0) - length
    assert after.seat == 1  # 001:5-6 one route per turn


@pytest.mark.parametrize(
    ("route", "colour", "points"),
    [
        pytest.param(EV_LES, BLACK, 1, id="1-space-1-point-001:70-73"),
        pytest.param(LC_MW, RED, 2, id="2-spaces-2-points-001:70-73"),
        pytest.param(CP_UN, PINK, 4, id="3-spaces-4-points-001:70-73"),
        pytest.param(CH_SOHO, PINK, 7, id="4-spaces-7-points-001:70-73"),
    ],
)
def test_new_york_running_route_score(route: int, colour: int, points: int) -> None:
    # 001:70-73 the Route Scoring Table; the referee scores a route when it is claimed
    s = ny_claim(hand(red=4, pink=4, black=4))
    after = apply(s, ClaimRoute(route, colour, 0))
    assert after.route_points[0] == points
    assert RouteClaimed(0, route, colour, 0, points) in after.events


DOUBLE_CASES = [
    # (variant, seats, same seat, rule or None, the line)
    ("newyork", 2, False, "claim.double_route_closed", "001:152-153"),
    ("newyork", 3, False, None, "001:152-153"),
    ("newyork", 4, False, None, "001:152-153"),
    ("newyork", 2, True, "claim.double_route_same_player", "001:149-150"),
    ("newyork", 3, True, "claim.double_route_same_player", "001:149-150"),
    ("newyork", 4, True, "claim.double_route_same_player", "001:149-150"),
    ("usa1910", 3, False, "claim.double_route_closed", "003:87"),
    ("mega", 3, False, "claim.double_route_closed", "003:87"),
    ("mega", 4, False, None, "003:87"),
    ("bigcities", 2, False, "claim.double_route_closed", "003:87"),
    ("bigcities", 5, False, None, "003:87"),
    ("bigcities", 5, True, "claim.double_route_same_player", "003:87"),
]


@pytest.mark.parametrize(
    ("variant", "seats", "same_seat", "rule"),
    [
        pytest.param(v, n, same, rule, id=f"{v}-{n}p-{'same' if same else 'other'}-{cite}")
        for v, n, same, rule, cite in DOUBLE_CASES
    ],
)
def test_double_routes(variant: str, seats: int, same_seat: bool, rule: str | None) -> None:
    rules = RULESETS[variant]
    if variant == "newyork":
        first, second = LC_TS_GREEN, LC_TS_BLUE  # Lincoln Center-Times Square 2 green / blue
        c1, c2 = GREEN, BLUE
    else:
        first = route_index(rules, "Chicago", "Saint Louis", "green")  # 2, double with white
        second = route_index(rules, "Chicago", "Saint Louis", "white")
        c1, c2 = GREEN, card("white")
    s = after_setup(seats, seed=1, ruleset=rules)
    s = with_(s, hands={0: hand(green=2, white=2, blue=2), 1: hand(white=2, blue=2)})
    s = apply(s, ClaimRoute(first, c1, 0))
    if same_seat:
        while s.seat != 0:
            s = apply(apply(s, DRAW_BLIND), DRAW_BLIND)
    assert s.seat == (0 if same_seat else 1)
    action = ClaimRoute(second, c2, 0)
    if rule is not None:
        assert action not in legal_actions(s)
        with pytest.raises(IllegalActionError) as err:
            apply(s, action)
        assert err.value.rule == rule
        return
    assert action in legal_actions(s)
    after = apply(s, action)
    assert after.owned[0] == 1 << first and after.owned[1] == 1 << second


# ---------------------------------------------------------------------------------------------
# ticket draws: 003:59, 003:31, 003:37, 003:93; New York 001:24-31


@pytest.mark.parametrize(
    ("variant", "drawn"),
    [
        pytest.param("usa", 3, id="usa-draw-3-keep-1-003:59"),
        pytest.param("usa1910", 3, id="usa1910-draw-3-keep-1-003:59"),
        pytest.param("mega", 4, id="mega-draw-4-keep-1-003:31"),
        pytest.param("bigcities", 4, id="bigcities-draw-4-keep-1-003:37"),
        pytest.param("newyork", 2, id="newyork-draw-2-keep-1-001:24-26"),
    ],
)
def test_ticket_draw(variant: str, drawn: int) -> None:
    s = after_setup(3, seed=1, ruleset=RULESETS[variant])
    deck = s.ticket_deck
    s = apply(s, DRAW_TICKETS)
    assert s.offered[0] == tuple(reversed(deck[-drawn:]))  # from the top
    assert s.ticket_deck == deck[:-drawn]
    offered = sorted(s.offered[0])
    assert set(legal_actions(s)) == {
        KeepTickets(c) for k in range(1, drawn + 1) for c in combinations(offered, k)
    }
    with pytest.raises(IllegalActionError) as err:
        apply(s, KeepTickets(()))
    assert err.value.rule == "tickets.keep_min"
    # returns go to the bottom (003:59; 001:27-28)
    after = apply(s, KeepTickets((offered[0],)))
    assert after.ticket_deck == tuple(t for t in s.offered[0] if t != offered[0]) + deck[:-drawn]


@pytest.mark.parametrize(
    ("variant", "left"),
    [
        pytest.param("newyork", 1, id="newyork-single-ticket-must-be-kept-001:30-31"),
        pytest.param("mega", 1, id="mega-1-left-003:93"),
        pytest.param("mega", 3, id="mega-3-left-of-4-003:93"),
        pytest.param("bigcities", 2, id="bigcities-2-left-of-4-003:93"),
        pytest.param("usa1910", 2, id="usa1910-2-left-of-3-003:93"),
    ],
)
def test_short_ticket_deck(variant: str, left: int) -> None:
    # 001:30-31 "If there is only one Destination Ticket card left in the deck, you can still
    # do this action but must keep the card." 003:93 "draws only what is available".
    s = after_setup(3, seed=1, ruleset=RULESETS[variant])
    s = with_(s, ticket_deck=s.ticket_deck[-left:])
    assert DRAW_TICKETS in legal_actions(s)
    s = apply(s, DRAW_TICKETS)
    assert len(s.offered[0]) == left and s.ticket_deck == ()
    choices = set(legal_actions(s))
    assert KeepTickets(()) not in choices
    assert KeepTickets(tuple(sorted(s.offered[0]))) in choices
    if left == 1:
        assert choices == {KeepTickets(s.offered[0])}  # the one card, kept
    with pytest.raises(IllegalActionError) as err:
        apply(s, KeepTickets(()))
    assert err.value.rule == "tickets.keep_min"
    after = apply(s, KeepTickets((s.offered[0][0],)))
    assert after.seat == 1
    assert len(after.ticket_deck) == left - 1  # the returned ones, at the bottom
    assert (DRAW_TICKETS in legal_actions(after)) == (left > 1)


# ---------------------------------------------------------------------------------------------
# the end: 003:101; New York 001:36-37 "two or fewer plastic Taxis left"


@pytest.mark.parametrize(
    ("variant", "trains_before", "route", "triggers"),
    [
        pytest.param("newyork", 4, "LC_MW", True, id="newyork-4-taxis-to-2-001:36-37"),
        pytest.param("newyork", 3, "EV_LES", True, id="newyork-3-taxis-to-2-001:36-37"),
        pytest.param("newyork", 5, "LC_MW", False, id="newyork-5-taxis-to-3-001:36-37"),
        pytest.param("newyork", 2, "LC_MW", True, id="newyork-2-taxis-to-0-001:36-37"),
        pytest.param("mega", 4, "ATL_CHA", True, id="mega-4-trains-to-2-003:101"),
        pytest.param("bigcities", 5, "ATL_CHA", False, id="bigcities-5-trains-to-3-003:101"),
    ],
)
def test_final_round_trigger(variant: str, trains_before: int, route: str, triggers: bool) -> None:
    rules = RULESETS[variant]
    index = {
        "LC_MW": LC_MW,
        "EV_LES": EV_LES,
        "ATL_CHA": route_index(rules, "Atlanta", "Charleston") if variant != "newyork" else -1,
    }[route]
    colour = {"LC_MW": RED, "EV_LES": BLACK, "ATL_CHA": RED}[route]
    length = rules.game_map.routes[index].length
    s = after_setup(3, seed=2, ruleset=rules)
    s = with_(s, hands={0: hand(red=2, black=1)}, trains={0: trains_before})
    s = apply(s, ClaimRoute(index, colour, 0))
    assert s.trains[0] == trains_before - length
    if not triggers:
        assert s.last_round == -1
        return
    assert LastRoundStarted(0, trains_before - length) in s.events
    for seat in (1, 2, 0):  # one last turn each, the triggering seat included (001:36-37)
        assert s.seat == seat and not s.is_over
        s = apply(apply(s, DRAW_BLIND), DRAW_BLIND)
    assert s.is_over and s.end_reason == "last_round"


# ---------------------------------------------------------------------------------------------
# whole games


@pytest.mark.parametrize(("variant", "players"), SEAT_CASES)
def test_random_games_end_and_score(variant: str, players: int) -> None:
    """``ttr selfplay``'s games end by the final round in every variant and player count, New
    York's within 15 taxis' worth of claims; every score has the variant's parts only."""
    facts = FACTS[variant]
    for seed in range(3):
        result = play_random_game(RULESETS[variant], players, seed)
        assert result.final.end_reason == "last_round"
        assert min(result.final.trains) <= facts.trigger
        for s in result.outcome.seats:
            if not facts.attraction:
                assert s.attractions == () and s.attraction_points == 0
            if not facts.longest_path:
                assert s.longest_path_bonus == 0
            if not facts.globetrotter:
                assert s.globetrotter_bonus == 0
        winners = result.outcome.winners
        assert winners and all(result.outcome.seats[w].rank == 1 for w in winners)


@pytest.mark.parametrize(("variant", "piece"), [("usa", "train"), ("newyork", "taxi")])
def test_the_log_calls_each_variants_pieces_by_their_name(variant: str, piece: str) -> None:
    """New York's pieces are taxis (001:164-165): the game log and a view's lines say so, and
    a train game keeps its trains. The word comes from the ruleset's ``[setup] piece``."""
    rules = load_ruleset(variant)
    assert rules.piece == piece
    describer = BoardDescriber(rules, ["0:a", "1:b"])
    assert describer.event(LastRoundStarted(0, 2)) == (
        f"0:a has 2 {piece}s left: last round, one more turn each"
    )
    s = after_setup(2, seed=1, ruleset=rules)
    lines = "\n".join(describer.view_lines(view(s, 0)))
    assert f"{piece}s {s.trains[0]}, route points" in lines
    assert f"{piece}s, " in lines and ("trains" in lines) == (piece == "train")
