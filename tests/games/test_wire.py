"""The wire contract (proto/ttr/v1) and its one converter (referee/games/board/wire.py).

Round trips run over what real random games produce (every legal action offered, every seat's
view and projected events at every step), plus hand-made values for the rare cases a few games
may not reach, so each action and event type is covered for certain.
"""

from __future__ import annotations

import dataclasses
import json
import random
import subprocess
import sys
import typing
from dataclasses import asdict
from pathlib import Path

import pytest

from referee.games.board import (
    Action,
    GameState,
    MalformedActionError,
    Phase,
    Ruleset,
    apply,
    available_variants,
    legal_actions,
    load_ruleset,
    new_game,
    outcome,
    view,
    wire,
)
from referee.games.board.actions import (
    DRAW_BLIND,
    DRAW_TICKETS,
    PASS,
    ClaimRoute,
    DrawFaceUp,
    KeepTickets,
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
    project,
)
from referee.games.board.state import EMPTY
from referee.games.board.view import SeatView
from referee.games.common.cards import LOCOMOTIVE, NUM_CARD_KINDS
from tests.helpers import USA, after_setup, with_
from tools import gen_proto
from ttr.v1 import (
    actions_pb2,
    bot_service_pb2,
    cards_pb2,
    events_pb2,
    game_map_pb2,
    scoring_pb2,
    view_pb2,
)

ROOT = Path(__file__).resolve().parents[2]

ACTION_TYPES: tuple[type, ...] = typing.get_args(Action)
EVENT_TYPES: tuple[type, ...] = typing.get_args(Event)


@dataclasses.dataclass(frozen=True)
class Trace:
    """One random game: every state reached and the legal actions offered in it."""

    states: tuple[GameState, ...]
    offered: tuple[tuple[Action, ...], ...]


def random_game(num_seats: int, seed: int, ruleset: Ruleset = USA) -> Trace:
    state = new_game(ruleset, num_seats, seed)
    rng = random.Random(f"test_wire/{seed}")
    states, offered = [state], []
    while not state.is_over:
        legal = legal_actions(state)
        offered.append(legal)
        state = apply(state, legal[rng.randrange(len(legal))])
        states.append(state)
    return Trace(tuple(states), tuple(offered))


#: one random game of every other board variant, beside the three usa games
VARIANT_GAMES = (("usa1910", 4), ("mega", 3), ("bigcities", 5), ("newyork", 2), ("newyork", 4))


@pytest.fixture(scope="module")
def games() -> tuple[Trace, ...]:
    return (
        random_game(2, 1),
        random_game(3, 2),
        random_game(4, 3),
        *(
            random_game(seats, 10 + i, load_ruleset(name))
            for i, (name, seats) in enumerate(VARIANT_GAMES)
        ),
    )


# ---------------------------------------------------------------------------------------------
# actions


def test_every_offered_action_round_trips(games: tuple[Trace, ...]) -> None:
    seen: set[type] = set()
    for game in games:
        for legal in game.offered:
            msgs = wire.legal_actions_to_pb(legal)
            assert wire.legal_actions_from_pb(msgs) == legal  # same actions, same order
            seen.update(type(a) for a in legal)
    # Pass is only legal when nothing else is: rare in random games, so one by hand.
    seen.add(type(wire.action_from_pb(wire.action_to_pb(PASS))))
    assert seen == set(ACTION_TYPES)


def test_actions_round_trip_through_bytes(games: tuple[Trace, ...]) -> None:
    # One offered action of each kind per game, through the serialized form a bot sends back.
    for game in games:
        firsts: dict[type, Action] = {}
        for legal in game.offered:
            for a in legal:
                firsts.setdefault(type(a), a)
        for action in (*firsts.values(), PASS):
            data = wire.action_to_pb(action).SerializeToString()
            assert wire.action_from_pb(actions_pb2.Action.FromString(data)) == action


def test_each_action_type_uses_its_own_oneof_member() -> None:
    members = {
        type(a): wire.action_to_pb(a).WhichOneof("kind")
        for a in (
            DRAW_BLIND,
            DrawFaceUp(3),
            ClaimRoute(0, LOCOMOTIVE, 1),
            DRAW_TICKETS,
            KeepTickets((1, 2)),
            PASS,
        )
    }
    assert set(members) == set(ACTION_TYPES)
    assert len(set(members.values())) == len(ACTION_TYPES)


def test_an_all_locomotive_payment_is_sent_as_the_locomotive_colour() -> None:
    msg = wire.action_to_pb(ClaimRoute(route=7, colour=LOCOMOTIVE, locomotives=2))
    assert msg.claim_route.colour == cards_pb2.CARD_COLOUR_LOCOMOTIVE
    assert msg.claim_route.locomotives == 2


def test_kept_tickets_come_back_in_canonical_order() -> None:
    msg = actions_pb2.Action(keep_tickets=actions_pb2.KeepTickets(tickets=[9, 2, 5]))
    assert wire.action_from_pb(msg) == KeepTickets((2, 5, 9))


def rejected(msg: actions_pb2.Action) -> str:
    with pytest.raises(MalformedActionError) as caught:
        wire.action_from_pb(msg)
    return caught.value.rule


def test_an_action_with_no_member_set_is_malformed() -> None:
    assert rejected(actions_pb2.Action()) == "action.unset"
    # Also what garbage-free but empty bytes, or an action kind from a later version, parse to.
    assert rejected(actions_pb2.Action.FromString(b"")) == "action.unset"
    unknown_member = b"\x7a\x00"  # field 15, length 0: no member this version knows
    assert rejected(actions_pb2.Action.FromString(unknown_member)) == "action.unset"


@pytest.mark.parametrize("colour", [0, 10, 42, 1_000_000])
def test_a_claim_colour_that_is_no_card_is_malformed(colour: int) -> None:
    claim = actions_pb2.ClaimRoute(route=1, locomotives=0)
    # Out-of-range values arrive from other languages as plain numbers (proto3 enums are open).
    raw = claim.SerializeToString() + bytes([0x10]) + _varint(colour)
    msg = actions_pb2.Action(claim_route=actions_pb2.ClaimRoute.FromString(raw))
    with pytest.raises(MalformedActionError) as caught:
        wire.action_from_pb(msg)
    assert caught.value.rule == "action.colour"
    assert "claim_route.colour" in caught.value.message


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def test_keeping_a_ticket_twice_is_malformed() -> None:
    msg = actions_pb2.Action(keep_tickets=actions_pb2.KeepTickets(tickets=[4, 4]))
    assert rejected(msg) == "action.tickets"


def test_a_well_formed_action_is_left_to_the_engine_to_judge() -> None:
    # Route 10_000 does not exist: the wire cannot know, the engine names it.
    msg = actions_pb2.Action(
        claim_route=actions_pb2.ClaimRoute(
            route=10_000, colour=cards_pb2.CARD_COLOUR_RED, locomotives=0
        )
    )
    action = wire.action_from_pb(msg)
    with pytest.raises(MalformedActionError) as caught:
        apply(after_setup(), action)
    assert caught.value.rule == "action.route"


# ---------------------------------------------------------------------------------------------
# views


def test_every_view_round_trips_to_the_same_dict(games: tuple[Trace, ...]) -> None:
    checked = 0
    for game in games:
        for state in game.states:
            for seat in range(state.num_seats):
                v = view(state, seat)
                msg = wire.view_to_pb(v)
                back = wire.view_from_pb(view_pb2.SeatView.FromString(msg.SerializeToString()))
                assert asdict(back) == asdict(v)
                checked += 1
    assert checked > 1000


def test_views_in_the_last_round_and_after_the_end_use_presence(games: tuple[Trace, ...]) -> None:
    for game in games:
        final = game.states[-1]
        msg = wire.view_to_pb(view(final, 0))
        assert msg.phase == view_pb2.PHASE_OVER
        assert not msg.HasField("to_act")
        assert msg.end_reason != view_pb2.END_REASON_UNSPECIFIED
        first = wire.view_to_pb(view(game.states[0], 0))
        assert first.HasField("to_act") and first.to_act == 0
        assert first.phase == view_pb2.PHASE_SETUP_TICKETS
        assert not first.HasField("last_round_turns_left")
        assert first.end_reason == view_pb2.END_REASON_UNSPECIFIED
    in_last_round = [s for g in games for s in g.states if s.last_round >= 0 and not s.is_over]
    assert in_last_round
    assert wire.view_to_pb(view(in_last_round[0], 1)).HasField("last_round_turns_left")


def test_an_empty_face_up_slot_is_unspecified() -> None:
    state = with_(after_setup(), face_up=(EMPTY, 0, 1, EMPTY, LOCOMOTIVE))
    msg = wire.view_to_pb(view(state, 0))
    assert list(msg.face_up) == [
        cards_pb2.CARD_COLOUR_UNSPECIFIED,
        cards_pb2.CARD_COLOUR_RED,
        cards_pb2.CARD_COLOUR_ORANGE,
        cards_pb2.CARD_COLOUR_UNSPECIFIED,
        cards_pb2.CARD_COLOUR_LOCOMOTIVE,
    ]
    assert wire.view_from_pb(msg).face_up == state.face_up


def test_only_the_face_up_row_may_hold_an_unspecified_card() -> None:
    assert [wire.card_from_pb(wire.card_to_pb(c)) for c in range(NUM_CARD_KINDS)] == list(
        range(NUM_CARD_KINDS)
    )
    with pytest.raises(ValueError):
        wire.card_to_pb(EMPTY)
    with pytest.raises(wire.WireError):
        wire.card_from_pb(cards_pb2.CARD_COLOUR_UNSPECIFIED)
    with pytest.raises(wire.WireError):
        wire.event_from_pb(events_pb2.Event(face_up_dealt=events_pb2.FaceUpDealt(slot=1)))


def test_hands_list_every_card_kind_by_name() -> None:
    msg = wire.view_to_pb(view(after_setup(), 0))
    assert [c.colour for c in msg.hand] == [
        cards_pb2.CardColour.Value(f"CARD_COLOUR_{n}")
        for n in ("RED", "ORANGE", "YELLOW", "GREEN", "BLUE", "PINK", "BLACK", "WHITE")
    ] + [cards_pb2.CARD_COLOUR_LOCOMOTIVE]
    assert len(msg.discards) == NUM_CARD_KINDS


def test_the_opponent_part_of_the_view_message_has_no_room_for_cards() -> None:
    # Allow-list on the wire too: PlayerPublic's fields are counts, trains, points and routes.
    fields = {f.name: f for f in view_pb2.PlayerPublic.DESCRIPTOR.fields}
    assert set(fields) == {
        "seat",
        "hand_size",
        "ticket_count",
        "pending_ticket_count",
        "trains",
        "route_points",
        "routes",
    }
    assert all(f.enum_type is None and f.message_type is None for f in fields.values())


# ---------------------------------------------------------------------------------------------
# events

#: One of each event type, with hidden fields shown (as the acting seat sees them).
HAND_MADE: tuple[Event, ...] = (
    FaceUpTaken(seat=1, slot=2, card=LOCOMOTIVE),
    BlindDrawn(seat=1, card=3),
    FaceUpDealt(slot=4, card=0),
    FaceUpFlushed(cards=(LOCOMOTIVE, LOCOMOTIVE, 2, LOCOMOTIVE, 7)),
    DeckReshuffled(size=37),
    RouteClaimed(seat=1, route=12, colour=LOCOMOTIVE, locomotives=3, points=4),
    TicketsDrawn(seat=1, count=3, tickets=(4, 9, 17)),
    TicketsKept(seat=1, kept_count=2, returned_count=1, kept=(4, 17)),
    Passed(seat=1),
    LastRoundStarted(seat=1, trains=2),
    GameEnded(reason="last_round"),
)


def test_the_hand_made_events_cover_every_event_type() -> None:
    """Every board event has a oneof member; the card game's members come after them
    (tests/games/test_wire_cardgame.py checks those and the total)."""
    assert {type(e) for e in HAND_MADE} == set(EVENT_TYPES)
    members = events_pb2.Event.DESCRIPTOR.oneofs_by_name["kind"].fields
    assert sorted(m.number for m in members)[: len(EVENT_TYPES)] == list(
        range(1, len(EVENT_TYPES) + 1)
    )


@pytest.mark.parametrize("event", HAND_MADE, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("seat", [0, 1])
def test_every_event_type_converts_as_each_seat_sees_it(event: Event, seat: int) -> None:
    seen = project(event, seat)
    msg = wire.event_to_pb(seen)
    data = msg.SerializeToString()
    assert wire.event_from_pb(events_pb2.Event.FromString(data)) == seen
    # The member is named after the type (FaceUpTaken -> face_up_taken).
    kind = msg.WhichOneof("kind")
    assert kind is not None and kind.replace("_", "") == type(event).__name__.lower()


def test_hidden_event_fields_are_absent_for_other_seats() -> None:
    other = 0  # the hand-made events are seat 1's
    drawn = wire.event_to_pb(project(BlindDrawn(1, 3), other)).blind_drawn
    assert not drawn.HasField("card")
    tickets = wire.event_to_pb(project(TicketsDrawn(1, 3, (4, 9, 17)), other)).tickets_drawn
    assert not tickets.HasField("tickets") and tickets.count == 3
    kept = wire.event_to_pb(project(TicketsKept(1, 2, 1, (4, 17)), other)).tickets_kept
    assert not kept.HasField("kept") and (kept.kept_count, kept.returned_count) == (2, 1)
    # ...and present for the seat itself.
    own = wire.event_to_pb(project(TicketsDrawn(1, 3, (4, 9, 17)), 1)).tickets_drawn
    assert own.HasField("tickets") and list(own.tickets.tickets) == [4, 9, 17]


def test_every_event_of_real_games_round_trips_for_every_seat(games: tuple[Trace, ...]) -> None:
    seen: set[type] = set()
    for game in games:
        for state in game.states:
            for event in state.events:
                seen.add(type(event))
                for seat in range(state.num_seats):
                    projected = project(event, seat)
                    msg = wire.event_to_pb(projected)
                    assert wire.event_from_pb(msg) == projected
    # The common types must turn up in three games; the rare ones are covered by HAND_MADE.
    assert seen >= {FaceUpTaken, BlindDrawn, FaceUpDealt, RouteClaimed, TicketsDrawn, GameEnded}


def test_an_event_with_no_member_set_is_a_wire_error() -> None:
    with pytest.raises(wire.WireError):
        wire.event_from_pb(events_pb2.Event())


# ---------------------------------------------------------------------------------------------
# scores and static facts


def test_outcome_reveals_every_ticket_and_round_trips(games: tuple[Trace, ...]) -> None:
    for game in games:
        final = game.states[-1]
        result = outcome(final)
        msg = wire.outcome_to_pb(result)
        assert msg.complete and msg.end_reason != view_pb2.END_REASON_UNSPECIFIED
        for seat, score in enumerate(msg.seats):
            revealed = sorted([*score.tickets_completed, *score.tickets_failed])
            assert revealed == sorted(final.tickets[seat])
            assert score.total == (
                score.route_points
                + score.ticket_points
                + sum(b.points for b in score.bonuses)
                + score.attraction_points
            )
            rules = final.ruleset
            assert score.attraction_points == len(score.attractions) * rules.attraction_points
            assert all(rules.game_map.cities[c].attraction for c in score.attractions)
        back = wire.outcome_from_pb(scoring_pb2.Outcome.FromString(msg.SerializeToString()))
        assert back == result


def test_bonuses_are_listed_only_when_awarded(games: tuple[Trace, ...]) -> None:
    msg = wire.outcome_to_pb(outcome(games[0].states[-1]))
    for score in msg.seats:
        assert all(b.points > 0 for b in score.bonuses)
        assert all(b.kind == scoring_pb2.BONUS_KIND_LONGEST_PATH for b in score.bonuses)
    assert any(score.bonuses for score in msg.seats)  # someone has the longest path


@pytest.mark.parametrize("name", available_variants())
def test_map_facts_match_the_ruleset(name: str) -> None:
    ruleset = load_ruleset(name)
    msg = wire.map_to_pb(ruleset)
    game_map = ruleset.game_map
    assert (msg.name, msg.version) == (game_map.name, game_map.version)
    assert [c.index for c in msg.cities] == list(range(len(game_map.cities)))
    assert [r.index for r in msg.routes] == list(range(len(game_map.routes)))
    assert [t.index for t in msg.tickets] == list(range(len(ruleset.tickets)))
    for r, pb in zip(game_map.routes, msg.routes, strict=True):
        assert (pb.route_id, pb.city_a, pb.city_b, pb.length) == (r.route_id, r.a, r.b, r.length)
        if r.sibling is None:
            assert not pb.HasField("double_sibling")
        else:
            assert pb.double_sibling == r.sibling
            assert msg.routes[r.sibling].double_sibling == r.index
    gray = [r for r in msg.routes if r.colour == cards_pb2.ROUTE_COLOUR_GRAY]
    assert len(gray) == sum(1 for r in game_map.routes if r.colour == -1) > 0
    assert cards_pb2.ROUTE_COLOUR_UNSPECIFIED not in {r.colour for r in msg.routes}
    for c, city_pb in zip(game_map.cities, msg.cities, strict=True):
        assert city_pb.tourist_attraction == c.attraction
        # a position is sent exactly when the map data has one (none is made up)
        assert city_pb.HasField("x") == city_pb.HasField("y") == (c.x is not None)
    assert sum(t.points for t in msg.tickets) == sum(t.points for t in ruleset.tickets)


def test_usa_cities_have_positions_and_new_york_has_its_attractions() -> None:
    denver = next(c for c in wire.map_to_pb(USA).cities if c.name == "Denver")
    assert 0 < denver.x < 1 and 0 < denver.y < 1
    ny = wire.map_to_pb(load_ruleset("newyork"))
    attractions = {c.name for c in ny.cities if c.tourist_attraction}
    # shared/data/newyork/PROVENANCE.md: the 9 Tourist Attractions on the board
    assert attractions == {
        "Central Park",
        "Times Square",
        "United Nations",
        "Empire State Building",
        "Chelsea",
        "Greenwich Village",
        "Chinatown",
        "Wall Street",
        "Brooklyn",
    }
    assert not any(c.HasField("x") for c in ny.cities)  # no coordinates in the data


@pytest.mark.parametrize("name", available_variants())
def test_rule_parameters_carry_the_rulesets_numbers(name: str) -> None:
    ruleset = load_ruleset(name)
    msg = wire.rules_to_pb(ruleset)
    assert (msg.trains, msg.hand_size, msg.face_up_slots) == (
        ruleset.trains,
        ruleset.hand_size,
        ruleset.face_up,
    )
    assert (msg.min_seats, msg.max_seats) == (ruleset.min_players, ruleset.max_players)
    assert (msg.setup_tickets_dealt, msg.setup_tickets_keep_min) == (
        ruleset.setup_tickets_dealt,
        ruleset.setup_tickets_keep_min,
    )
    assert (msg.tickets_drawn, msg.tickets_keep_min) == (
        ruleset.tickets_drawn,
        ruleset.tickets_keep_min,
    )
    assert list(msg.route_points) == list(ruleset.route_points)
    assert list(msg.tie_breaks) == list(ruleset.tie_breaks)
    assert msg.both_tracks_min_seats == ruleset.both_tracks_min_players
    assert msg.attraction_points == ruleset.attraction_points
    # every card kind is listed, zeros included, in the wire's card order
    assert [c.colour for c in msg.deck] == list(range(1, NUM_CARD_KINDS + 1))
    assert tuple(c.count for c in msg.deck) == ruleset.deck
    assert wire.deck_from_pb(msg) == ruleset.deck
    assert wire.bonuses_from_pb(msg) == ruleset.bonuses
    assert msg.locomotives == ruleset.deck[-1]
    assert msg.longest_path_bonus == ruleset.longest_path_bonus
    assert msg.globetrotter_bonus == ruleset.globetrotter_bonus


@pytest.mark.parametrize(
    ("name", "deck_size", "cards_per_colour", "bonuses", "attraction_points"),
    [
        ("usa", 110, 12, [(scoring_pb2.BONUS_KIND_LONGEST_PATH, 10)], 0),
        ("usa1910", 110, 12, [(scoring_pb2.BONUS_KIND_GLOBETROTTER, 15)], 0),
        (
            "mega",
            110,
            12,
            [(scoring_pb2.BONUS_KIND_LONGEST_PATH, 10), (scoring_pb2.BONUS_KIND_GLOBETROTTER, 15)],
            0,
        ),
        ("bigcities", 110, 12, [(scoring_pb2.BONUS_KIND_LONGEST_PATH, 10)], 0),
        ("newyork", 44, 0, [], 1),
    ],
)
def test_rule_parameters_per_variant(
    name: str,
    deck_size: int,
    cards_per_colour: int,
    bonuses: list[tuple[int, int]],
    attraction_points: int,
) -> None:
    """The figures a bot plans with, written out (003:25-37, 001:164-175, 001:79-81)."""
    msg = wire.rules_to_pb(load_ruleset(name))
    assert sum(c.count for c in msg.deck) == deck_size
    # cards_per_colour predates `deck`: 0 says the colours differ (New York has six of eight)
    assert msg.cards_per_colour == cards_per_colour
    assert [(b.kind, b.points) for b in msg.bonuses] == bonuses
    assert msg.attraction_points == attraction_points


def test_rule_parameters_from_a_referee_before_deck_and_bonuses() -> None:
    """A sender that predates `deck` and `bonuses` still describes the usa ruleset fully."""
    old = game_map_pb2.RuleParameters(
        cards_per_colour=12, locomotives=14, longest_path_bonus=10, globetrotter_bonus=0
    )
    assert wire.deck_from_pb(old) == USA.deck
    assert wire.bonuses_from_pb(old) == USA.bonuses


def test_unknown_or_repeated_bonus_kinds_are_wire_errors() -> None:
    unknown = game_map_pb2.RuleParameters(
        bonuses=[scoring_pb2.Bonus(kind=scoring_pb2.BonusKind.ValueType(99), points=3)]
    )
    with pytest.raises(wire.WireError, match="BonusKind 99"):
        wire.bonuses_from_pb(unknown)
    bonus = scoring_pb2.Bonus(kind=scoring_pb2.BONUS_KIND_GLOBETROTTER, points=15)
    with pytest.raises(wire.WireError, match="twice"):
        wire.bonuses_from_pb(game_map_pb2.RuleParameters(bonuses=[bonus, bonus]))


# ---------------------------------------------------------------------------------------------
# the service messages, put together as the referee will


def test_an_act_request_and_both_answer_forms_survive_the_wire(games: tuple[Trace, ...]) -> None:
    state = next(s for s in games[1].states if s.phase is Phase.TURN)
    legal = legal_actions(state)
    request = bot_service_pb2.ActRequest(
        game_id="g1",
        request_id="g1/17/2",
        view=wire.view_to_pb(view(state, state.seat)),
        events=wire.events_to_pb(project(e, state.seat) for e in state.events),
        legal_actions=wire.legal_actions_to_pb(legal),
        clock=bot_service_pb2.Clock(move_limit_ms=1000, bank_left_ms=29_500),
        rejection=bot_service_pb2.Rejection(rule="claim.taken", message="already claimed"),
    )
    got = bot_service_pb2.ActRequest.FromString(request.SerializeToString())
    assert wire.legal_actions_from_pb(got.legal_actions) == legal
    assert got.HasField("rejection") and got.rejection.rule == "claim.taken"
    assert not bot_service_pb2.ActRequest().HasField("rejection")

    by_index = bot_service_pb2.ActResponse(request_id="g1/17/2", legal_action_index=0)
    assert by_index.WhichOneof("answer") == "legal_action_index"
    full = bot_service_pb2.ActResponse(request_id="g1/17/2", action=wire.action_to_pb(legal[-1]))
    back = bot_service_pb2.ActResponse.FromString(full.SerializeToString())
    assert back.WhichOneof("answer") == "action"
    assert wire.action_from_pb(back.action) == legal[-1]


@pytest.mark.parametrize("name", available_variants())
def test_start_game_carries_the_static_facts(name: str) -> None:
    ruleset = load_ruleset(name)
    request = bot_service_pb2.StartGameRequest(
        game_id="g1",
        variant=ruleset.ident,
        seat=1,
        num_seats=2,
        game_map=wire.map_to_pb(ruleset),
        rules=wire.rules_to_pb(ruleset),
        clock=bot_service_pb2.ClockSettings(move_limit_ms=1000, bank_ms=30_000),
    )
    got = bot_service_pb2.StartGameRequest.FromString(request.SerializeToString())
    assert got.variant == f"{name}@{ruleset.version}"
    assert len(got.game_map.routes) == len(ruleset.game_map.routes)
    assert isinstance(got.game_map, game_map_pb2.GameMap)
    # typed fields, not `Any`: nothing a board variant needs travels as an extension
    assert not got.extensions


def test_every_message_field_in_the_contract_is_commented() -> None:
    # buf's COMMENTS rule, checked without buf: every field, enum value, message, enum,
    # service and rpc in proto/ttr has a leading comment.
    missing = []
    for path in sorted((ROOT / "proto" / "ttr").rglob("*.proto")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines):
            code = line.strip()
            is_decl = (
                code.startswith(("message ", "enum ", "service ", "rpc ", "oneof "))
                or (
                    " = " in code
                    and code.endswith(";")
                    and not code.startswith(("option", "syntax"))
                )
            ) and not code.startswith("//")
            if is_decl and not lines[number - 1].strip().startswith("//"):
                missing.append(f"{path.name}:{number + 1}: {code}")
    assert missing == []


# ---------------------------------------------------------------------------------------------
# generated code and layering


def test_the_generated_code_is_not_stale() -> None:
    stale = gen_proto.stale_files()
    assert stale == [], f"run `python -m tools.gen_proto`; stale: {stale}"


def test_the_stale_check_sees_a_changed_generated_file(tmp_path: Path) -> None:
    out = tmp_path / "python"
    gen_proto.generate(out)
    assert gen_proto.stale_files(out) == []
    (out / "ttr" / "v1" / "actions_pb2.pyi").write_text("# edited\n", encoding="utf-8")
    (out / "ttr" / "v1" / "leftover_pb2.py").write_text("", encoding="utf-8")
    (out / "ttr" / "py.typed").unlink()
    assert gen_proto.stale_files(out) == [
        "ttr/py.typed",
        "ttr/v1/actions_pb2.pyi",
        "ttr/v1/leftover_pb2.py",
    ]


def imported_by(statement: str) -> list[str]:
    code = f"import sys, json\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    modules: list[str] = json.loads(done.stdout)
    return modules


def test_the_rules_import_no_grpc_or_protobuf_and_the_wire_no_grpc() -> None:
    rules = imported_by("import referee.games.board")
    assert not [m for m in rules if m.split(".")[0] in ("grpc", "ttr")]
    assert not [m for m in rules if m.startswith("google.protobuf")]
    converter = imported_by("import referee.games.board.wire")
    assert "ttr.v1.view_pb2" in converter and "google.protobuf" in converter
    assert not [m for m in converter if m.split(".")[0] == "grpc"]


# ---------------------------------------------------------------------------------------------
# the fast paths (memoized parts merged in as bytes): the same messages as plain construction


def _plain_view_pb(v: SeatView) -> view_pb2.SeatView:
    """A SeatView message built field by field with the generated constructors only, the way
    a reader of the contract would: the reference the fast encoder must equal."""
    msg = view_pb2.SeatView(
        variant=v.variant,
        num_seats=v.num_seats,
        seat=v.seat,
        phase=view_pb2.Phase.Value(f"PHASE_{v.phase.upper()}"),
        turn=v.turn,
        face_up=[
            cards_pb2.CARD_COLOUR_UNSPECIFIED if c == EMPTY else wire.card_to_pb(c)
            for c in v.face_up
        ],
        deck_size=v.deck_size,
        discards=[
            cards_pb2.CardCount(colour=wire.card_to_pb(c), count=n)
            for c, n in enumerate(v.discards)
        ],
        ticket_deck_size=v.ticket_deck_size,
        players=[
            view_pb2.PlayerPublic(
                seat=p.seat,
                hand_size=p.hand_size,
                ticket_count=p.tickets,
                pending_ticket_count=p.tickets_pending,
                trains=p.trains,
                route_points=p.route_points,
                routes=p.routes,
            )
            for p in v.players
        ],
        hand=[
            cards_pb2.CardCount(colour=wire.card_to_pb(c), count=n) for c, n in enumerate(v.hand)
        ],
        tickets=v.tickets,
        offered=v.offered,
    )
    if v.end_reason:
        msg.end_reason = view_pb2.EndReason.Value(f"END_REASON_{v.end_reason.upper()}")
    if v.to_act >= 0:
        msg.to_act = v.to_act
    if v.last_round >= 0:
        msg.last_round_turns_left = v.last_round
    return msg


def test_act_requests_equal_plain_construction_byte_for_byte(games: tuple[Trace, ...]) -> None:
    clock = bot_service_pb2.Clock(move_limit_ms=900, bank_left_ms=12_345)
    rejection = bot_service_pb2.Rejection(rule="claim.taken", message="already claimed")
    checked = 0
    for game in games:
        pending: list[list[Event]] = [[] for _ in range(game.states[0].num_seats)]
        for state, legal in zip(game.states, game.offered, strict=False):
            for seat, queue in enumerate(pending):
                queue.extend(project(e, seat) for e in state.events)
            seat = state.seat
            v = view(state, seat)
            fast = wire.act_request_pb(
                v, pending[seat], legal, "g", f"g/{checked}", clock, rejection
            )
            plain = bot_service_pb2.ActRequest(
                game_id="g",
                request_id=f"g/{checked}",
                view=_plain_view_pb(v),
                events=[wire.event_to_pb(e) for e in pending[seat]],
                legal_actions=[wire.action_to_pb(a) for a in legal],
                clock=clock,
                rejection=rejection,
            )
            assert fast == plain
            assert fast.SerializeToString(deterministic=True) == plain.SerializeToString(
                deterministic=True
            )
            assert wire.view_to_pb(v) == plain.view
            pending[seat] = []
            checked += 1
    assert checked > 300


def test_legal_actions_read_lazily_behave_as_a_sequence(games: tuple[Trace, ...]) -> None:
    legal = max(games[2].offered, key=len)
    request = bot_service_pb2.ActRequest(legal_actions=wire.legal_actions_to_pb(legal))
    lazy = wire.LegalActions(request.legal_actions)
    assert len(lazy) == len(legal)
    assert list(lazy) == list(legal) and tuple(lazy[1:3]) == legal[1:3]
    assert lazy[-1] == legal[-1]
    assert lazy.position(lazy[2]) == 2  # the very object read
    assert lazy.position(dataclasses.replace(legal[3])) == legal.index(legal[3])  # an equal one
    assert lazy.position(ClaimRoute(route=999, colour=0, locomotives=0)) == -1
    assert legal[0] in lazy and ClaimRoute(route=999, colour=0, locomotives=0) not in lazy


def test_an_unreadable_legal_action_fails_only_when_used() -> None:
    request = bot_service_pb2.ActRequest(
        legal_actions=[actions_pb2.Action(draw_blind=actions_pb2.DrawBlind()), actions_pb2.Action()]
    )
    lazy = wire.LegalActions(request.legal_actions)
    assert lazy[0] == DRAW_BLIND
    with pytest.raises(MalformedActionError):
        lazy[1]


def test_static_bytes_are_the_map_and_rules_messages() -> None:
    game_map, rules = wire.static_bytes(USA)
    assert game_map_pb2.GameMap.FromString(game_map) == wire.map_to_pb(USA)
    assert game_map_pb2.RuleParameters.FromString(rules) == wire.rules_to_pb(USA)
    assert wire.static_bytes(USA)[0] is game_map  # made once per ruleset


def test_card_counts_joined_from_kept_entries_are_the_messages_bytes() -> None:
    # counts_bytes joins each (card, count) entry's kept bytes: byte for byte what building
    # the CardCount messages gives, for hands and discard piles of any size.
    import random

    from referee.games.common.codec import counts_bytes, counts_to_pb, entry_bytes
    from ttr.v1 import view_pb2

    rng = random.Random(5)
    for field in ("hand", "discards"):
        encode = counts_bytes(view_pb2.SeatView, field)
        for _ in range(2000):
            counts = tuple(rng.choice((0, 0, 1, 2, 3, rng.randrange(200))) for _ in range(9))
            built = entry_bytes(view_pb2.SeatView, field, counts_to_pb(counts))
            assert encode(counts) == built
            read = getattr(view_pb2.SeatView.FromString(encode(counts)), field)
            assert list(read) == counts_to_pb(counts)
