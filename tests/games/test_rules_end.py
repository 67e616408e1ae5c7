"""The end of the game, passing, and actions out of turn order.

003:101-103 (the final round), 002:110-112, RULINGS 5 (passing), 003:41 (one action per turn,
decided in its phases). Each case id or comment cites the line it checks.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from referee.games.board import (
    Action,
    ClaimRoute,
    DrawBlind,
    DrawFaceUp,
    DrawTickets,
    GameState,
    IllegalActionError,
    KeepTickets,
    Pass,
    Phase,
    apply,
    legal_actions,
    new_game,
)
from referee.games.board.actions import DRAW_BLIND, DRAW_TICKETS, PASS
from referee.games.board.events import GameEnded, LastRoundStarted, Passed
from referee.games.board.state import EMPTY
from referee.games.common.cards import LOCOMOTIVE, NUM_CARD_KINDS
from tests.helpers import USA, after_setup, card, hand, route_index, with_

RED = card("red")
ATL_NAS = route_index(USA, "Atlanta", "Nashville")  # 1 gray
ATL_CHA = route_index(USA, "Atlanta", "Charleston")  # 2 gray
CHI_DUL = route_index(USA, "Chicago", "Duluth")  # 3 red


def take_draw_turn(s: GameState) -> GameState:
    """The acting seat draws two blind cards (one whole turn)."""
    seat, turn = s.seat, s.turn
    s = apply(s, DRAW_BLIND)
    assert s.phase is Phase.SECOND_CARD
    assert s.seat == seat
    s = apply(s, DRAW_BLIND)
    assert s.turn == turn + 1
    return s


# ---------------------------------------------------------------------------------------------
# 003:101 "When one player's stock of Trains is down to 2 or less at the end of his turn, each
# player, including that player, gets one final turn." 003:103 "The game then ends".


@pytest.mark.parametrize(
    ("num_seats", "trigger_seat", "trains_before", "triggers"),
    [
        pytest.param(2, 0, 4, True, id="2p-seat0-to-2-trains-003:101"),
        pytest.param(3, 1, 3, True, id="3p-seat1-to-1-train-003:101"),
        pytest.param(4, 2, 2, True, id="4p-seat2-to-0-trains-003:101"),
        pytest.param(4, 3, 4, True, id="4p-last-seat-to-2-trains-003:101"),
        pytest.param(5, 0, 4, True, id="5p-seat0-to-2-trains-003:101"),
        pytest.param(5, 4, 3, True, id="5p-seat4-to-1-train-002:110"),
        pytest.param(4, 1, 5, False, id="4p-to-3-trains-no-trigger-003:101"),
        pytest.param(2, 0, 45, False, id="2p-to-43-trains-no-trigger-003:101"),
    ],
)
def test_two_or_fewer_trains_gives_everyone_one_final_turn(
    num_seats: int, trigger_seat: int, trains_before: int, triggers: bool
) -> None:
    s = after_setup(num_seats, seed=2)
    s = with_(s, hands={trigger_seat: hand(red=2)}, trains={trigger_seat: trains_before})
    while s.seat != trigger_seat:
        s = take_draw_turn(s)
    trigger_turn = s.turn
    s = apply(s, ClaimRoute(ATL_CHA, RED, 0))
    left = trains_before - 2
    assert s.trains[trigger_seat] == left
    if not triggers:
        assert s.last_round == -1
        assert not any(isinstance(e, LastRoundStarted) for e in s.events)
        for _ in range(2 * num_seats):  # play on: nothing ends the game
            s = take_draw_turn(s)
        assert s.phase is Phase.TURN
        assert s.last_round == -1
        return
    assert LastRoundStarted(trigger_seat, left) in s.events
    assert s.last_round == num_seats
    assert s.phase is Phase.TURN
    # exactly one more turn for every seat, the triggering seat last
    final_turn_seats = []
    for i in range(1, num_seats + 1):
        assert not s.is_over
        assert s.seat == (trigger_seat + i) % num_seats
        assert s.last_round == num_seats - i + 1
        final_turn_seats.append(s.seat)
        s = take_draw_turn(s)
    assert final_turn_seats[-1] == trigger_seat
    assert sorted(final_turn_seats) == list(range(num_seats))
    assert s.is_over
    assert s.phase is Phase.OVER
    assert s.end_reason == "last_round"
    assert s.events[-1] == GameEnded("last_round")
    assert s.turn == trigger_turn + 1 + num_seats
    assert legal_actions(s) == ()


def test_final_round_is_not_restarted_by_a_second_low_stock() -> None:
    # 003:101 "one final turn": another seat going to <= 2 in the final round changes nothing
    s = after_setup(3, seed=2)
    s = with_(s, hands={0: hand(red=2), 1: hand(red=2)}, trains={0: 4, 1: 3})
    s = apply(s, ClaimRoute(ATL_CHA, RED, 0))  # seat 0 -> 2 trains: final round
    assert s.last_round == 3
    s = apply(s, ClaimRoute(ATL_NAS, RED, 0))  # seat 1 -> 2 trains
    assert s.trains[1] == 2
    assert s.last_round == 2
    assert not any(isinstance(e, LastRoundStarted) for e in s.events)
    s = take_draw_turn(s)  # seat 2
    assert s.seat == 0
    assert not s.is_over
    s = take_draw_turn(s)  # seat 0, its final turn
    assert s.is_over
    assert s.end_reason == "last_round"


def test_final_turn_with_several_decisions_ends_after_its_last_decision() -> None:
    # 003:101 a final *turn*: a ticket draw in the final round is decided before the game ends
    s = after_setup(2, seed=2)
    s = with_(s, hands={0: hand(red=2)}, trains={0: 3})
    s = apply(s, ClaimRoute(ATL_CHA, RED, 0))
    assert s.last_round == 2
    s = apply(s, DRAW_TICKETS)  # seat 1's final turn, first decision
    assert s.phase is Phase.KEEP_TICKETS
    assert not s.is_over
    s = apply(s, KeepTickets((s.offered[1][0],)))
    assert s.seat == 0
    s = apply(s, DRAW_BLIND)  # seat 0's final turn, first card
    assert s.phase is Phase.SECOND_CARD
    assert not s.is_over
    s = apply(s, DRAW_BLIND)
    assert s.is_over


@pytest.mark.parametrize(
    "first",
    [
        pytest.param(DRAW_BLIND, id="two-card-draw-003:101"),
        pytest.param(DRAW_TICKETS, id="ticket-draw-003:101"),
    ],
)
def test_trigger_checked_at_the_end_of_the_turn_only(first: Action) -> None:
    # 003:101 "at the end of his turn": not in the middle of a multi-decision turn. (A seat
    # starting a turn with 2 trains and no final round is constructed for this check.)
    s = after_setup(4, seed=2)
    s = with_(s, trains={0: 2})
    s = apply(s, first)
    assert s.phase in (Phase.SECOND_CARD, Phase.KEEP_TICKETS)
    assert s.last_round == -1
    if s.phase is Phase.SECOND_CARD:
        s = apply(s, DRAW_BLIND)
    else:
        s = apply(s, KeepTickets(tuple(sorted(s.offered[0]))))
    assert s.last_round == 4
    assert LastRoundStarted(0, 2) in s.events


def test_trigger_looks_at_the_stock_of_the_seat_ending_its_turn() -> None:
    # 003:101 "one player's stock ... at the end of *his* turn": seat 1's low stock does not
    # end seat 0's turn into a final round; seat 1's own turn end does. (Constructed stock.)
    s = after_setup(4, seed=2)
    s = with_(s, trains={1: 2})
    s = take_draw_turn(s)
    assert s.seat == 1
    assert s.last_round == -1
    s = take_draw_turn(s)
    assert s.last_round == 4
    assert LastRoundStarted(1, 2) in s.events
    for seat in (2, 3, 0, 1):
        assert s.seat == seat
        assert not s.is_over
        s = take_draw_turn(s)
    assert s.is_over


# ---------------------------------------------------------------------------------------------
# RULINGS 5: "A seat with no legal action at all ... passes; a pass is legal only then. When
# every seat has passed in a row, the game ends and is scored."


def stuck(num_seats: int) -> GameState:
    """Nothing to draw (deck, discards, row, tickets all empty) and no cards to claim with."""
    s = after_setup(num_seats, seed=1)
    return with_(
        s,
        deck=(),
        discards=(0,) * NUM_CARD_KINDS,
        face_up=(EMPTY,) * 5,
        ticket_deck=(),
        hands=(hand(),) * num_seats,
    )


@pytest.mark.parametrize("num_seats", [pytest.param(n, id=f"{n}p-RULINGS-5") for n in range(2, 6)])
def test_game_ends_when_every_seat_has_passed_in_a_row(num_seats: int) -> None:
    s = stuck(num_seats)
    for i in range(num_seats):
        assert not s.is_over
        assert legal_actions(s) == (PASS,)
        assert s.seat == i
        s = apply(s, Pass())
        assert Passed(i) in s.events
        assert s.passes == i + 1
        assert s.turn == i + 1
    assert s.is_over
    assert s.end_reason == "all_passed"
    assert s.events[-1] == GameEnded("all_passed")


def test_a_non_pass_turn_resets_the_run_of_passes() -> None:
    # RULINGS 5 "passed in a row"
    s = with_(stuck(3), hands={1: hand(loco=1)})
    s = apply(s, PASS)
    assert s.passes == 1
    assert s.seat == 1
    assert PASS not in legal_actions(s)  # seat 1 can claim with its Locomotive
    s = apply(s, ClaimRoute(ATL_NAS, LOCOMOTIVE, 1))
    assert s.passes == 0
    # the Locomotive went to the discards and was turned face up (RULINGS 3): seat 2 can draw
    assert s.face_up == (LOCOMOTIVE, EMPTY, EMPTY, EMPTY, EMPTY)
    assert legal_actions(s) == (DrawFaceUp(0),)
    s = apply(s, DrawFaceUp(0))
    assert s.passes == 0
    s = apply(s, PASS)  # seat 0
    s = apply(s, PASS)  # seat 1
    assert s.passes == 2
    assert not s.is_over


@pytest.mark.parametrize(
    "changes",
    [
        pytest.param({"deck": (RED,)}, id="blind-draw-available-003:45"),
        pytest.param({"face_up": (RED, EMPTY, EMPTY, EMPTY, EMPTY)}, id="face-up-available-003:45"),
        pytest.param({"ticket_deck": (0,)}, id="ticket-draw-available-003:59"),
        pytest.param({"hands": {0: hand(red=1)}}, id="claim-available-003:53"),
    ],
)
def test_pass_is_illegal_when_any_other_action_is_legal(changes: dict[str, object]) -> None:
    # RULINGS 5 "a pass is legal only then"
    s = with_(stuck(2), **changes)
    legal = legal_actions(s)
    assert legal != ()
    assert PASS not in legal
    with pytest.raises(IllegalActionError) as err:
        apply(s, PASS)
    assert err.value.rule == "pass.not_allowed"


def test_pass_is_illegal_in_a_normal_turn() -> None:
    s = after_setup(4, seed=1)
    assert PASS not in legal_actions(s)
    with pytest.raises(IllegalActionError) as err:
        apply(s, PASS)
    assert err.value.rule == "pass.not_allowed"


# ---------------------------------------------------------------------------------------------
# after the game: 003:103 "The game then ends"


def over_by_last_round() -> GameState:
    s = with_(after_setup(2, seed=2), hands={0: hand(red=2)}, trains={0: 3})
    s = apply(s, ClaimRoute(ATL_CHA, RED, 0))
    s = take_draw_turn(s)
    s = take_draw_turn(s)
    assert s.is_over
    return s


def over_by_passes() -> GameState:
    s = stuck(2)
    s = apply(apply(s, PASS), PASS)
    assert s.is_over
    return s


AFTER_GAME_ACTIONS = [
    pytest.param(DRAW_BLIND, id="draw-blind"),
    pytest.param(DrawFaceUp(0), id="draw-face-up"),
    pytest.param(ClaimRoute(CHI_DUL, RED, 0), id="claim"),
    pytest.param(DRAW_TICKETS, id="draw-tickets"),
    pytest.param(KeepTickets((0,)), id="keep-tickets"),
    pytest.param(PASS, id="pass"),
]


@pytest.mark.parametrize("action", AFTER_GAME_ACTIONS)
@pytest.mark.parametrize(
    "make_over",
    [
        pytest.param(over_by_last_round, id="last-round-003:103"),
        pytest.param(over_by_passes, id="all-passed-RULINGS-5"),
    ],
)
def test_actions_after_game_over_raise_game_over(
    make_over: Callable[[], GameState], action: Action
) -> None:
    s = make_over()
    assert legal_actions(s) == ()
    with pytest.raises(IllegalActionError) as err:
        apply(s, action)
    assert err.value.rule == "game.over"


# ---------------------------------------------------------------------------------------------
# wrong phase: 003:41 one action per turn; 003:17 starting tickets first; 003:49 the second card;
# 003:59 the ticket choice


def in_phase(phase: Phase) -> GameState:
    """Seat 0 in ``phase``, holding 3 red (so a red claim fails for its phase alone)."""
    if phase is Phase.SETUP_TICKETS:
        return with_(new_game(USA, 4, seed=1), hands={0: hand(red=3)})
    s = with_(after_setup(4, seed=1), hands={0: hand(red=3)})
    assert ClaimRoute(CHI_DUL, RED, 0) in legal_actions(s)
    if phase is Phase.TURN:
        return s
    if phase is Phase.SECOND_CARD:
        return apply(s, DRAW_BLIND)
    assert phase is Phase.KEEP_TICKETS
    return apply(s, DRAW_TICKETS)


WRONG_PHASE = [
    (Phase.SETUP_TICKETS, DRAW_BLIND, "003:17"),
    (Phase.SETUP_TICKETS, DrawFaceUp(0), "003:17"),
    (Phase.SETUP_TICKETS, ClaimRoute(CHI_DUL, RED, 0), "003:17"),
    (Phase.SETUP_TICKETS, DRAW_TICKETS, "003:17"),
    (Phase.TURN, KeepTickets((0,)), "003:59"),
    (Phase.SECOND_CARD, ClaimRoute(CHI_DUL, RED, 0), "003:41-003:49"),
    (Phase.SECOND_CARD, DRAW_TICKETS, "003:41-003:49"),
    (Phase.SECOND_CARD, KeepTickets((0,)), "003:49"),
    (Phase.KEEP_TICKETS, DRAW_BLIND, "003:41-003:59"),
    (Phase.KEEP_TICKETS, DrawFaceUp(0), "003:41-003:59"),
    (Phase.KEEP_TICKETS, ClaimRoute(CHI_DUL, RED, 0), "003:41-003:59"),
    (Phase.KEEP_TICKETS, DRAW_TICKETS, "003:41-003:59"),
]


@pytest.mark.parametrize(
    ("phase", "action"),
    [
        pytest.param(p, a, id=f"{p.name.lower()}-{type(a).__name__}-{cite}")
        for p, a, cite in WRONG_PHASE
    ],
)
def test_wrong_phase_actions_raise_turn_phase(phase: Phase, action: Action) -> None:
    s = in_phase(phase)
    assert s.phase is phase
    assert action not in legal_actions(s)
    with pytest.raises(IllegalActionError) as err:
        apply(s, action)
    assert err.value.rule == "turn.phase"


@pytest.mark.parametrize(
    "phase",
    [
        pytest.param(Phase.SETUP_TICKETS, id="setup-RULINGS-5"),
        pytest.param(Phase.SECOND_CARD, id="second-card-RULINGS-5"),
        pytest.param(Phase.KEEP_TICKETS, id="keep-tickets-RULINGS-5"),
    ],
)
def test_pass_outside_a_turn_start_is_rejected(phase: Phase) -> None:
    s = in_phase(phase)
    with pytest.raises(IllegalActionError) as err:
        apply(s, PASS)
    assert err.value.rule == "pass.not_allowed"


def test_wrong_phase_table_covers_every_action_type_but_pass() -> None:
    # the wrong-phase table covers every action type but Pass (tested above)
    covered = {type(a) for _, a, _ in WRONG_PHASE}
    assert covered == {DrawBlind, DrawFaceUp, ClaimRoute, DrawTickets, KeepTickets}
