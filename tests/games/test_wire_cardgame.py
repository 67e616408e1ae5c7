"""Ticket to Ride: The Card Game on the wire (referee/games/card/wire.py) and in the Python SDK.

Round trips are exact (engine value -> message -> bytes -> message -> engine value) for every
action offered, every event as every seat sees it and every view of random games, 2-4 players,
with the owners-may-look option off and on; outcomes and the setup too. Hidden facts (other
seats' hands and stacks, the deck order, one's own stack unless owners may look) are absent
from the messages, and the SDK plays the card game with the engine's own types.
"""

from __future__ import annotations

import dataclasses
import random
import typing
from collections.abc import Iterator, Sequence
from typing import Any

import grpc
import pytest

from referee.games.board import wire
from referee.games.board.actions import DRAW_BLIND, DRAW_TICKETS, PASS, ClaimRoute, DrawFaceUp, keep
from referee.games.board.events import (
    BlindDrawn,
    DeckReshuffled,
    FaceUpDealt,
    FaceUpTaken,
    GameEnded,
    Passed,
    RouteClaimed,
    TicketsDrawn,
    TicketsKept,
)
from referee.games.board.events import Event as BoardEvent
from referee.games.card import (
    CardAction,
    CardEvent,
    CardGameState,
    CardOutcome,
    CardRuleset,
    CardSeatView,
    KeepTickets,
    PlaceMix,
    PlaceSuit,
    apply,
    legal_actions,
    load_card_ruleset,
    mix,
    new_game,
    outcome,
    project,
    view,
)
from referee.games.card import wire as wire_cardgame
from referee.games.card.events import (
    BonusAwarded,
    CardsDealt,
    FinalRoundStarted,
    MixPlaced,
    MovedOnTrack,
    PlayStalled,
    StackScored,
    SuitPlaced,
    TicketsRevealed,
    TrainRobbed,
)
from referee.games.common.cards import LOCOMOTIVE, NUM_CARD_KINDS
from referee.games.common.errors import MalformedActionError
from sdk import Bot, Game
from sdk.bot import CARD
from sdk.serve import RunningBot, start_server
from ttr.v1 import (
    actions_pb2,
    bot_service_pb2,
    bot_service_pb2_grpc,
    cards_pb2,
    events_pb2,
    game_map_pb2,
    scoring_pb2,
    view_pb2,
)

#: the packaged ruleset, as the referee loads it (by name: the loader caches by argument)
CARDS = load_card_ruleset("cardgame")
#: the same game with the option that lets owners look at their On-the-Track stack
LOOKING = dataclasses.replace(CARDS, owners_see_stack=True)

CARD_EVENT_TYPES: tuple[type, ...] = typing.get_args(CardEvent)
BOARD_EVENT_TYPES: tuple[type, ...] = typing.get_args(BoardEvent)
CLOCK = bot_service_pb2.Clock(move_limit_ms=1000, bank_left_ms=10_000)


@dataclasses.dataclass(frozen=True)
class Trace:
    """One random game: every state reached and the legal actions offered in it."""

    states: tuple[CardGameState, ...]
    offered: tuple[tuple[CardAction, ...], ...]


def random_game(ruleset: CardRuleset, num_seats: int, seed: int) -> Trace:
    state = new_game(ruleset, num_seats, seed)
    rng = random.Random(f"test_wire_cardgame/{seed}")
    states, offered = [state], []
    while not state.is_over:
        legal = legal_actions(state)
        offered.append(legal)
        state = apply(state, legal[rng.randrange(len(legal))])
        states.append(state)
    return Trace(tuple(states), tuple(offered))


def stalled_game(num_seats: int, seed: int) -> Trace:
    """Seats that always draw tickets and keep none once set up: the engine's guard ends the
    game ("stalled") after a few idle rounds."""
    state = new_game(CARDS, num_seats, seed)
    states, offered = [state], []
    while not state.is_over:
        legal = legal_actions(state)
        offered.append(legal)
        if DRAW_TICKETS in legal:
            action: CardAction = DRAW_TICKETS
        elif KeepTickets(()) in legal:
            action = KeepTickets(())
        else:
            action = legal[0]
        state = apply(state, action)
        states.append(state)
    return Trace(tuple(states), tuple(offered))


@pytest.fixture(scope="module")
def games() -> tuple[Trace, ...]:
    return (
        *(random_game(CARDS, 2 + i % 3, i) for i in range(24)),
        *(random_game(LOOKING, 2 + i % 3, 100 + i) for i in range(6)),
        stalled_game(3, 7),
    )


def _bytes_round_trip_view(v: CardSeatView) -> CardSeatView:
    data = wire_cardgame.view_to_pb(v).SerializeToString()
    return wire_cardgame.view_from_pb(view_pb2.SeatView.FromString(data))


# ---------------------------------------------------------------------------------------------
# actions


def test_every_offered_action_round_trips(games: tuple[Trace, ...]) -> None:
    kinds: set[type] = set()
    for game in games:
        for legal in game.offered:
            msgs = wire_cardgame.legal_actions_to_pb(legal)
            assert wire_cardgame.legal_actions_from_pb(msgs) == legal
            assert wire_cardgame.actions_from_pb(msgs) == legal
            for action in legal:
                kinds.add(type(action))
                data = wire_cardgame.action_to_pb(action).SerializeToString()
                back = wire_cardgame.action_from_pb(actions_pb2.Action.FromString(data))
                assert back == action
    # Pass is rare in random games; the others all turn up.
    assert kinds >= set(typing.get_args(CardAction)) - {type(PASS)}
    assert wire_cardgame.action_from_pb(wire_cardgame.action_to_pb(PASS)) == PASS


def test_each_card_action_uses_its_own_member_and_the_shared_ones_the_board_bytes() -> None:
    assert wire_cardgame.action_to_pb(PlaceSuit(2, 3, 1)).WhichOneof("kind") == "place_suit"
    assert wire_cardgame.action_to_pb(mix(0, 4, 7)).WhichOneof("kind") == "place_mix"
    suit = wire_cardgame.action_to_pb(PlaceSuit(2, 3, 1)).place_suit
    assert (suit.colour, suit.cards, suit.locomotives) == (cards_pb2.CARD_COLOUR_YELLOW, 3, 1)
    for shared in (DRAW_BLIND, DrawFaceUp(4), DRAW_TICKETS, keep(3, 1), PASS):
        assert (
            wire_cardgame.action_to_pb(shared).SerializeToString()
            == wire.action_to_pb(shared).SerializeToString()
        )


def test_a_mix_and_kept_tickets_come_back_in_canonical_order() -> None:
    msg = actions_pb2.Action(
        place_mix=actions_pb2.PlaceMix(
            colours=[cards_pb2.CARD_COLOUR_WHITE, cards_pb2.CARD_COLOUR_RED]
        )
    )
    assert wire_cardgame.action_from_pb(msg) == PlaceMix((0, 7))
    msg = actions_pb2.Action(keep_tickets=actions_pb2.KeepTickets(tickets=[9, 2]))
    assert wire_cardgame.action_from_pb(msg) == KeepTickets((2, 9))


MALFORMED: tuple[tuple[actions_pb2.Action, str], ...] = (
    (actions_pb2.Action(), "action.unset"),
    (
        actions_pb2.Action(
            claim_route=actions_pb2.ClaimRoute(route=1, colour=cards_pb2.CARD_COLOUR_RED)
        ),
        "action.kind",
    ),
    (actions_pb2.Action(place_suit=actions_pb2.PlaceSuit(cards=2)), "action.colour"),
    (
        actions_pb2.Action(
            place_suit=actions_pb2.PlaceSuit(colour=cards_pb2.CardColour.ValueType(42), cards=2)
        ),
        "action.colour",
    ),
    (
        actions_pb2.Action(
            place_mix=actions_pb2.PlaceMix(
                colours=[cards_pb2.CARD_COLOUR_RED, cards_pb2.CARD_COLOUR_UNSPECIFIED]
            )
        ),
        "action.colour",
    ),
    (
        actions_pb2.Action(
            place_mix=actions_pb2.PlaceMix(
                colours=[
                    cards_pb2.CARD_COLOUR_RED,
                    cards_pb2.CARD_COLOUR_BLUE,
                    cards_pb2.CARD_COLOUR_RED,
                ]
            )
        ),
        "action.colours",
    ),
    (actions_pb2.Action(keep_tickets=actions_pb2.KeepTickets(tickets=[4, 4])), "action.tickets"),
)


@pytest.mark.parametrize(("msg", "rule"), MALFORMED, ids=[r for _, r in MALFORMED])
def test_malformed_card_actions_name_the_rule(msg: actions_pb2.Action, rule: str) -> None:
    with pytest.raises(MalformedActionError) as caught:
        wire_cardgame.action_from_pb(msg)
    assert caught.value.rule == rule
    # the same through the bytes a bot would send
    with pytest.raises(MalformedActionError):
        wire_cardgame.action_from_pb(actions_pb2.Action.FromString(msg.SerializeToString()))


def test_board_games_reject_the_card_actions_as_malformed() -> None:
    for action in (PlaceSuit(0, 2, 0), mix(0, 1, 2)):
        with pytest.raises(MalformedActionError) as caught:
            wire.action_from_pb(wire_cardgame.action_to_pb(action))
        assert caught.value.rule == "action.kind"


def test_a_well_formed_card_action_is_left_to_the_engine_to_judge() -> None:
    state = new_game(CARDS, 2, 1)
    while state.phase.name != "TURN":
        state = apply(state, legal_actions(state)[0])
    # A suit of Locomotives is readable; the engine says why it is not an action.
    suit = wire_cardgame.action_from_pb(
        actions_pb2.Action(
            place_suit=actions_pb2.PlaceSuit(
                colour=cards_pb2.CARD_COLOUR_LOCOMOTIVE, cards=2, locomotives=0
            )
        )
    )
    assert suit == PlaceSuit(LOCOMOTIVE, 2, 0)
    with pytest.raises(MalformedActionError) as caught:
        apply(state, suit)
    assert caught.value.rule == "action.colour"


def test_legal_actions_read_lazily_behave_as_a_sequence(games: tuple[Trace, ...]) -> None:
    legal = games[3].offered[40]
    lazy = wire_cardgame.LegalActions(wire_cardgame.legal_actions_to_pb(legal))
    assert len(lazy) == len(legal) and tuple(lazy) == legal and lazy[1:3] == legal[1:3]
    assert lazy[-1] == legal[-1] and lazy.position(legal[2]) == 2
    assert lazy.position(PlaceSuit(0, 99, 0)) == -1


def test_an_unreadable_legal_action_fails_only_when_used() -> None:
    # What an action added by a later version looks like to this one: no member set.
    lazy = wire_cardgame.LegalActions(
        [actions_pb2.Action(), wire_cardgame.action_to_pb(DRAW_BLIND)]
    )
    assert lazy[1] == DRAW_BLIND and lazy.position(DRAW_BLIND) == 1
    assert lazy.position(DRAW_TICKETS) == -1
    with pytest.raises(MalformedActionError):
        lazy[0]


# ---------------------------------------------------------------------------------------------
# views


def test_every_view_of_every_seat_round_trips(games: tuple[Trace, ...]) -> None:
    phases: set[str] = set()
    for game in games:
        for state in game.states:
            for seat in range(state.num_seats):
                v = view(state, seat)
                phases.add(v.phase)
                assert _bytes_round_trip_view(v) == v
    assert phases == {"setup_tickets", "turn", "second_card", "keep_tickets", "over"}


def test_views_use_presence_for_the_final_round_the_end_and_the_stack(
    games: tuple[Trace, ...],
) -> None:
    game = games[0]
    first, last = game.states[0], game.states[-1]
    msg = wire_cardgame.view_to_pb(view(first, 0))
    assert msg.HasField("to_act") and not msg.HasField("last_round_turns_left")
    assert msg.HasField("card_game") and not msg.card_game.HasField("stack")
    assert msg.end_reason == view_pb2.END_REASON_UNSPECIFIED
    end = wire_cardgame.view_to_pb(view(last, 1))
    assert not end.HasField("to_act") and end.phase == view_pb2.PHASE_OVER
    assert end.end_reason == view_pb2.END_REASON_DECK_OUT
    assert end.card_game.deck_number == last.deck_number
    looking = games[24].states[-1]
    own = wire_cardgame.view_to_pb(view(looking, 0))
    assert own.card_game.HasField("stack")
    assert [c.count for c in own.card_game.stack.counts] == list(looking.stacks[0])
    stalled = wire_cardgame.view_to_pb(view(games[-1].states[-1], 0))
    assert stalled.end_reason == view_pb2.END_REASON_STALLED


def test_railyards_list_their_non_empty_rows() -> None:
    state = new_game(CARDS, 2, 3)
    yard = (0, 3, 0, 0, 1, 0, 0, 0)
    locos = (0, 1, 0, 0, 0, 0, 0, 2)  # a row of Locomotives only, in principle
    state = dataclasses.replace(state, yard_cards=(yard, state.yard_cards[1]))
    state = dataclasses.replace(state, yard_locos=(locos, state.yard_locos[1]))
    v = view(state, 1)
    msg = wire_cardgame.view_to_pb(v)
    rows = [(r.colour, r.cards, r.locomotives) for r in msg.card_game.players[0].railyard]
    assert rows == [
        (cards_pb2.CARD_COLOUR_ORANGE, 3, 1),
        (cards_pb2.CARD_COLOUR_BLUE, 1, 0),
        (cards_pb2.CARD_COLOUR_WHITE, 0, 2),
    ]
    assert not msg.card_game.players[1].railyard
    assert _bytes_round_trip_view(v) == v


def test_the_card_game_part_of_other_seats_has_no_room_for_cards() -> None:
    # Allow-list on the wire: the per-seat part is counts, the public Railyard and the
    # tickets already checked in public; PlayerPublic is unchanged.
    fields = {f.name for f in view_pb2.CardGamePlayer.DESCRIPTOR.fields}
    assert fields == {"seat", "railyard", "stack_size", "completed_tickets", "completed_points"}
    assert {f.name for f in view_pb2.RailyardRow.DESCRIPTOR.fields} == {
        "colour",
        "cards",
        "locomotives",
    }
    assert {f.name for f in view_pb2.PlayerPublic.DESCRIPTOR.fields} == {
        "seat",
        "hand_size",
        "ticket_count",
        "pending_ticket_count",
        "trains",
        "route_points",
        "routes",
    }


def _mid_game(seed: int, looking: bool) -> CardGameState:
    """A 3-seat game some way in, with cards in the stacks."""
    state = new_game(LOOKING if looking else CARDS, 3, seed)
    rng = random.Random(seed)
    while not state.is_over and not all(sum(s) >= 2 for s in state.stacks):
        legal = legal_actions(state)
        state = apply(state, legal[rng.randrange(len(legal))])
    assert not state.is_over
    return state


def _shift(counts: tuple[int, ...]) -> tuple[int, ...]:
    """Same number of cards, different kinds."""
    out = list(counts)
    kind = next(k for k, n in enumerate(out) if n)
    out[kind] -= 1
    out[(kind + 1) % len(out)] += 1
    return tuple(out)


@pytest.mark.parametrize("looking", [False, True])
def test_act_request_unchanged_when_only_hidden_facts_change(looking: bool) -> None:
    state = _mid_game(5, looking)
    seat = state.seat
    others = [s for s in range(3) if s != seat]
    hands = list(state.hands)
    stacks = list(state.stacks)
    for o in others:
        hands[o] = _shift(hands[o])
        stacks[o] = _shift(stacks[o])
    if not looking:
        stacks[seat] = _shift(stacks[seat])  # hidden from its owner too
    deck = list(state.deck)
    random.Random(1).shuffle(deck)
    perturbed = dataclasses.replace(
        state, hands=tuple(hands), stacks=tuple(stacks), deck=tuple(deck)
    )
    assert perturbed.hands != state.hands and perturbed.stacks != state.stacks

    def request(s: CardGameState) -> bytes:
        return wire_cardgame.act_request_pb(
            view(s, seat), [], legal_actions(s), "g", "r", CLOCK
        ).SerializeToString(deterministic=True)

    assert request(state) == request(perturbed)
    if looking:  # the owner sees its own stack change
        mine = list(state.stacks)
        mine[seat] = _shift(mine[seat])
        assert request(dataclasses.replace(state, stacks=tuple(mine))) != request(state)


def test_a_view_without_its_card_game_part_is_a_wire_error() -> None:
    board = view_pb2.SeatView(variant="usa@1", num_seats=2, phase=view_pb2.PHASE_TURN)
    with pytest.raises(wire.WireError):
        wire_cardgame.view_from_pb(board)
    msg = wire_cardgame.view_to_pb(view(new_game(CARDS, 2, 1), 0))
    msg.card_game.players[0].railyard.add(colour=cards_pb2.CARD_COLOUR_LOCOMOTIVE, cards=1)
    with pytest.raises(wire.WireError):
        wire_cardgame.view_from_pb(msg)
    msg = wire_cardgame.view_to_pb(view(new_game(CARDS, 2, 1), 0))
    del msg.card_game.players[1]
    with pytest.raises(wire.WireError):
        wire_cardgame.view_from_pb(msg)


# ---------------------------------------------------------------------------------------------
# events

#: One of each event type, hidden fields shown (as seat 1, whose events they are, sees them
#: where owners may look).
HAND_MADE: tuple[CardEvent, ...] = (
    FaceUpTaken(seat=1, slot=2, card=LOCOMOTIVE),
    BlindDrawn(seat=1, card=3),
    FaceUpDealt(slot=4, card=0),
    DeckReshuffled(size=37),
    TicketsDrawn(seat=1, count=4, tickets=(4, 9, 17, 2)),
    TicketsKept(seat=1, kept_count=2, returned_count=2, kept=(4, 17)),
    Passed(seat=1),
    GameEnded(reason="deck_out"),
    MovedOnTrack(seat=1, count=3, cards=(0, 5, LOCOMOTIVE), shown_to_owner=True),
    SuitPlaced(seat=1, colour=6, cards=3, locomotives=2),
    MixPlaced(seat=1, colours=(0, 3, 7)),
    TrainRobbed(robber=0, seat=1, colour=6, cards=2, locomotives=1),
    FinalRoundStarted(seat=1, deck=2),
    PlayStalled(turns=9),
    StackScored(seat=1, deck=1, stack=(1, 0, 2, 0, 0, 0, 3, 0, 1), completed=(3, 11), points=14),
    CardsDealt(seat=1, count=4, cards=(0, 0, 2, LOCOMOTIVE)),
    TicketsRevealed(seat=1, tickets=(5, 20), points=17),
    BonusAwarded(city=4, seats=(0, 1), points=15),
)
#: The rarer forms of a few of them.
EDGE_CASES: tuple[CardEvent, ...] = (
    FinalRoundStarted(seat=-1, deck=2),
    MovedOnTrack(seat=1, count=2, cards=(1, 2), shown_to_owner=False),
    GameEnded(reason="stalled"),
    TicketsRevealed(seat=0, tickets=(), points=0),
    BonusAwarded(city=0, seats=(2,), points=8),
)


def test_the_hand_made_events_cover_every_event_type_and_the_oneof() -> None:
    assert {type(e) for e in HAND_MADE} == set(CARD_EVENT_TYPES)
    members = events_pb2.Event.DESCRIPTOR.oneofs_by_name["kind"].fields
    assert len(members) == len(set(CARD_EVENT_TYPES) | set(BOARD_EVENT_TYPES))


@pytest.mark.parametrize("event", HAND_MADE + EDGE_CASES, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("seat", [0, 1, 2])
def test_every_event_type_converts_as_each_seat_sees_it(event: CardEvent, seat: int) -> None:
    seen = project(event, seat)
    msg = wire_cardgame.event_to_pb(seen)
    data = msg.SerializeToString()
    assert wire_cardgame.event_from_pb(events_pb2.Event.FromString(data)) == seen
    assert wire_cardgame.events_from_pb([msg]) == [seen]
    kind = msg.WhichOneof("kind")
    assert kind is not None and kind.replace("_", "") == type(event).__name__.lower()


def test_hidden_event_fields_are_absent_for_other_seats() -> None:
    other = 0  # the hand-made events are seat 1's
    moved = MovedOnTrack(seat=1, count=3, cards=(0, 5, LOCOMOTIVE), shown_to_owner=True)
    theirs = wire_cardgame.event_to_pb(project(moved, other)).moved_on_track
    assert not theirs.HasField("cards") and theirs.count == 3
    own = wire_cardgame.event_to_pb(project(moved, 1)).moved_on_track
    assert own.HasField("cards") and len(own.cards.cards) == 3
    # Without the option the owner does not see its stack either.
    unseen = dataclasses.replace(moved, shown_to_owner=False)
    assert not wire_cardgame.event_to_pb(project(unseen, 1)).moved_on_track.HasField("cards")
    dealt = CardsDealt(seat=1, count=4, cards=(0, 0, 2, LOCOMOTIVE))
    assert not wire_cardgame.event_to_pb(project(dealt, other)).cards_dealt.HasField("cards")
    assert wire_cardgame.event_to_pb(project(dealt, 1)).cards_dealt.HasField("cards")
    blind = wire_cardgame.event_to_pb(project(BlindDrawn(1, 3), other)).blind_drawn
    assert not blind.HasField("card")
    final = wire_cardgame.event_to_pb(FinalRoundStarted(seat=-1, deck=2)).final_round_started
    assert not final.HasField("seat") and final.deck == 2


def test_every_event_of_real_games_round_trips_for_every_seat(games: tuple[Trace, ...]) -> None:
    seen: set[type] = set()
    for game in games:
        for state in game.states:
            for event in state.events:
                seen.add(type(event))
                for seat in range(state.num_seats):
                    projected = project(event, seat)
                    data = wire_cardgame.event_to_pb(projected).SerializeToString()
                    back = wire_cardgame.event_from_pb(events_pb2.Event.FromString(data))
                    assert back == projected
                    if isinstance(projected, MovedOnTrack | CardsDealt) and projected.seat != seat:
                        assert projected.cards is None
    assert seen >= set(CARD_EVENT_TYPES) - {Passed}


def test_board_events_and_unknown_ones() -> None:
    board = wire.event_to_pb(RouteClaimed(seat=0, route=1, colour=2, locomotives=0, points=2))
    with pytest.raises(wire.WireError):
        wire_cardgame.event_from_pb(board)
    with pytest.raises(wire.WireError):
        wire_cardgame.event_from_pb(events_pb2.Event())
    # An event kind this version does not know (no member set) is skipped.
    assert wire_cardgame.events_from_pb([events_pb2.Event()]) == []
    # ...and the board games' reader refuses the card game's events.
    with pytest.raises(wire.WireError):
        wire.event_from_pb(wire_cardgame.event_to_pb(PlayStalled(3)))


# ---------------------------------------------------------------------------------------------
# the act request, outcomes and the setup


def test_act_requests_equal_plain_construction(games: tuple[Trace, ...]) -> None:
    rejection = bot_service_pb2.Rejection(rule="place.cards", message="no")
    game = games[2]
    pending: list[CardEvent] = []
    for i, (state, legal) in enumerate(zip(game.states, game.offered, strict=False)):
        pending.extend(project(e, state.seat) for e in state.events)
        v = view(state, state.seat)
        fast = wire_cardgame.act_request_pb(
            v, pending, legal, "g", f"r{i}", CLOCK, rejection if i % 5 == 0 else None
        )
        plain = bot_service_pb2.ActRequest(
            game_id="g",
            request_id=f"r{i}",
            view=wire_cardgame.view_to_pb(v),
            events=wire_cardgame.events_to_pb(pending),
            legal_actions=wire_cardgame.legal_actions_to_pb(legal),
            clock=CLOCK,
            rejection=rejection if i % 5 == 0 else None,
        )
        assert fast == plain
        assert fast.SerializeToString() == plain.SerializeToString()
        pending = []


def test_outcomes_round_trip_and_reveal_every_ticket(games: tuple[Trace, ...]) -> None:
    for game in games:
        for state in (game.states[len(game.states) // 2], game.states[-1]):
            result = outcome(state)
            msg = wire_cardgame.outcome_to_pb(result)
            data = msg.SerializeToString()
            assert wire_cardgame.outcome_from_pb(scoring_pb2.Outcome.FromString(data)) == result
            assert msg.complete == state.is_over
            for s, seat in zip(msg.seats, result.seats, strict=True):
                assert s.HasField("card_game")
                assert list(s.tickets_failed) == list(seat.failed)
                assert s.ticket_points == seat.completed_points - seat.failed_points
                assert s.total == (
                    s.card_game.completed_points
                    - s.card_game.failed_points
                    + s.card_game.big_city_points
                )
                # the board games' parts stay empty
                assert not s.route_points and not s.bonuses and not s.longest_path


def test_a_board_outcome_is_no_card_outcome() -> None:
    msg = scoring_pb2.Outcome(complete=True, seats=[scoring_pb2.SeatScore(seat=0)])
    with pytest.raises(wire.WireError):
        wire_cardgame.outcome_from_pb(msg)


@pytest.mark.parametrize("ruleset", [CARDS, LOOKING], ids=["packaged", "owners-look"])
def test_the_setup_round_trips_to_an_equal_ruleset(ruleset: CardRuleset) -> None:
    data = wire_cardgame.static_bytes(ruleset)
    assert wire_cardgame.static_bytes(ruleset) is data  # made once per ruleset
    setup = game_map_pb2.CardGameSetup.FromString(data)
    assert setup == wire_cardgame.setup_to_pb(ruleset)
    assert wire_cardgame.ruleset_from_setup(setup) == ruleset
    assert setup.rules.owners_see_stack == ruleset.owners_see_stack
    assert [c.count for c in setup.rules.deck] == list(ruleset.deck)
    assert len(setup.rules.deck) == NUM_CARD_KINDS
    for t, msg in zip(ruleset.tickets, setup.tickets, strict=True):
        assert (msg.city_a, msg.city_b, msg.points) == (t.a, t.b, t.points)
        assert all(r.count for r in msg.requires)  # only the colours it needs
        assert sum(r.count for r in msg.requires) == t.size
    assert [(b.city, b.points) for b in setup.big_cities] == [
        (b.name, b.points) for b in ruleset.big_cities
    ]


def test_a_setup_out_of_order_is_a_wire_error() -> None:
    setup = wire_cardgame.setup_to_pb(CARDS)
    setup.tickets[3].index = 7
    with pytest.raises(wire.WireError):
        wire_cardgame.ruleset_from_setup(setup)
    setup = wire_cardgame.setup_to_pb(CARDS)
    setup.tickets[0].requires.add(colour=cards_pb2.CARD_COLOUR_LOCOMOTIVE, count=1)
    with pytest.raises(wire.WireError):
        wire_cardgame.ruleset_from_setup(setup)


# ---------------------------------------------------------------------------------------------
# the SDK plays the card game


class CardRecorder(Bot):
    """A card-game bot that checks it is given the engine's own types, and answers by index,
    by action, and (once) with an illegal action, which the SDK must send whole."""

    def __init__(self, illegal_at: int = -1) -> None:
        self.rng = random.Random(5)
        self.started: list[Game] = []
        self.views: list[CardSeatView] = []
        self.outcomes: list[CardOutcome] = []
        self.illegal_at = illegal_at

    def on_start(self, game: Game) -> None:
        self.started.append(game)

    def choose(self, view: CardSeatView, legal: Sequence[CardAction]) -> CardAction | int:
        game = self.game
        assert game.is_card_game and game.family == CARD
        assert isinstance(view, CardSeatView) and view.seat == game.seat
        assert isinstance(legal, wire_cardgame.LegalActions) and legal
        self.views.append(view)
        if game.decisions == self.illegal_at:
            return PlaceSuit(0, 99, 0)  # not legal: sent whole, judged by the referee
        pick = self.rng.randrange(len(legal))
        return pick if game.decisions % 2 else legal[pick]

    def on_end(self, outcome: Any) -> None:
        assert isinstance(outcome, CardOutcome)
        self.outcomes.append(outcome)


@pytest.fixture
def served() -> Iterator[list[RunningBot]]:
    running: list[RunningBot] = []
    yield running
    for r in running:
        r.stop(grace=0)


def _start_request(
    game_id: str, seat: int, seats: int, variant: str = "cardgame@1", setup: bool = True
) -> bot_service_pb2.StartGameRequest:
    request = bot_service_pb2.StartGameRequest(
        game_id=game_id,
        variant=variant,
        seat=seat,
        num_seats=seats,
        clock=bot_service_pb2.ClockSettings(move_limit_ms=1000, bank_ms=10_000),
    )
    if setup:
        request.card_game.MergeFromString(wire_cardgame.static_bytes(CARDS))
    return request


def _play_card_game(
    stub: bot_service_pb2_grpc.BotServiceStub, seats: int, seed: int, seat: int
) -> tuple[CardGameState, list[CardEvent], int]:
    """A whole card game driven here with requests built by wire_cardgame, the bot at
    ``seat``, random players elsewhere. Returns the final state, every event the bot was
    sent and its decisions."""
    game_id = f"card-{seed}"
    stub.StartGame(_start_request(game_id, seat, seats), timeout=5)
    state = new_game(CARDS, seats, seed)
    rng = random.Random(seed)
    pending: list[CardEvent] = [project(e, seat) for e in state.events]
    sent: list[CardEvent] = []
    decisions = 0
    while not state.is_over:
        legal = legal_actions(state)
        if state.seat == seat:
            decisions += 1
            request_id = f"r{decisions}"
            response = stub.Act(
                wire_cardgame.act_request_pb(
                    view(state, seat), pending, legal, game_id, request_id, CLOCK
                ),
                timeout=5,
            )
            sent.extend(pending)
            pending = []
            assert response.request_id == request_id
            if response.WhichOneof("answer") == "legal_action_index":
                action = legal[response.legal_action_index]
            else:
                action = wire_cardgame.action_from_pb(response.action)
                assert action not in legal  # only an illegal answer is sent whole
                action = legal[0]
        else:
            action = legal[rng.randrange(len(legal))]
        state = apply(state, action)
        pending.extend(project(e, seat) for e in state.events)
    stub.EndGame(
        bot_service_pb2.EndGameRequest(
            game_id=game_id,
            outcome=wire_cardgame.outcome_to_pb(outcome(state)),
            events=wire_cardgame.events_to_pb(pending),
            view=wire_cardgame.view_to_pb(view(state, seat)),
        ),
        timeout=5,
    )
    sent.extend(pending)
    return state, sent, decisions


@pytest.mark.parametrize(("seats", "seat"), [(2, 1), (4, 2)])
def test_the_sdk_plays_a_card_game_with_the_engines_types(
    served: list[RunningBot], seats: int, seat: int
) -> None:
    bot = CardRecorder()
    running = start_server(bot, "127.0.0.1:0")
    served.append(running)
    with grpc.insecure_channel(running.address) as channel:
        stub = bot_service_pb2_grpc.BotServiceStub(channel)
        final, sent, decisions = _play_card_game(stub, seats, 11 + seats, seat)
    assert decisions > 10 and len(bot.views) == decisions
    (game,) = bot.started
    assert game.family == CARD and game.is_card_game and game.seat == seat
    assert game.ruleset is CARDS and game.card_ruleset is CARDS  # the packaged ruleset
    with pytest.raises(TypeError):
        _ = game.board_ruleset
    assert game.events == sent
    assert bot.outcomes == [outcome(final)] and game.outcome == outcome(final)
    assert running.servicer.active_games == 0


def test_an_illegal_card_action_is_sent_whole(served: list[RunningBot]) -> None:
    bot = CardRecorder(illegal_at=3)
    running = start_server(bot, "127.0.0.1:0")
    served.append(running)
    with grpc.insecure_channel(running.address) as channel:
        stub = bot_service_pb2_grpc.BotServiceStub(channel)
        stub.StartGame(_start_request("g", 0, 2), timeout=5)
        state = new_game(CARDS, 2, 4)
        answers = []
        for i in range(1, 5):
            legal = legal_actions(state)
            response = stub.Act(
                wire_cardgame.act_request_pb(view(state, 0), [], legal, "g", f"r{i}", CLOCK),
                timeout=5,
            )
            answers.append(response.WhichOneof("answer"))
            if response.WhichOneof("answer") == "action":
                assert wire_cardgame.action_from_pb(response.action) == PlaceSuit(0, 99, 0)
    assert answers[2] == "action"
    assert "action" not in answers[:2] + answers[3:]


class _Aborted(Exception):
    pass


class _Context:
    """The little of grpc.ServicerContext the servicer uses."""

    def abort(self, code: grpc.StatusCode, details: str) -> typing.NoReturn:
        raise _Aborted(code, details)


def test_start_game_recognises_a_card_game_by_setup_or_by_name() -> None:
    from sdk.bot import BotServicer

    servicer = BotServicer(CardRecorder())
    context: Any = _Context()
    # the packaged variant named, no setup: the packaged ruleset
    servicer.StartGame(_start_request("a", 0, 2, setup=False), context)
    # a setup under another name: rebuilt from the setup itself
    servicer.StartGame(_start_request("b", 0, 2, variant="mycards@7"), context)
    # a setup that differs from the packaged one: rebuilt, equal to what was sent
    looking = _start_request("c", 0, 2, setup=False)
    looking.card_game.MergeFromString(wire_cardgame.static_bytes(LOOKING))
    servicer.StartGame(looking, context)
    games = {g.game_id: g for g in typing.cast(CardRecorder, servicer.bot).started}
    assert games["a"].ruleset is CARDS
    assert games["b"].is_card_game and games["b"].ruleset == CARDS
    assert games["c"].ruleset == LOOKING and games["c"].ruleset is not CARDS
    # a card game this SDK cannot know, without a setup: refused
    with pytest.raises(_Aborted):
        servicer.StartGame(_start_request("d", 0, 2, variant="cardgame@99", setup=False), context)
    # a board game is still a board game
    from referee.games.board import load_ruleset

    usa = load_ruleset("usa")
    board = bot_service_pb2.StartGameRequest(game_id="e", variant=usa.ident, seat=0, num_seats=2)
    game_map, rules = wire.static_bytes(usa)
    board.game_map.MergeFromString(game_map)
    board.rules.MergeFromString(rules)
    servicer.StartGame(board, context)
    games = {g.game_id: g for g in typing.cast(CardRecorder, servicer.bot).started}
    assert games["e"].family == "board" and not games["e"].is_card_game
    assert games["e"].board_ruleset is usa


def test_a_card_bot_answering_with_a_board_action_is_refused() -> None:
    from sdk.bot import BotServicer

    class Confused(Bot):
        def choose(self, view: Any, legal: Sequence[Any]) -> Any:
            return ClaimRoute(0, 0, 0)

    servicer = BotServicer(Confused())
    context: Any = _Context()
    servicer.StartGame(_start_request("g", 0, 2), context)
    state = new_game(CARDS, 2, 1)
    request = wire_cardgame.act_request_pb(
        view(state, 0), [], legal_actions(state), "g", "r", CLOCK
    )
    with pytest.raises(_Aborted):
        servicer.Act(request, context)
