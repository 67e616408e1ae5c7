"""The Card Game's sample strategies (sdk/strategies/card.py): legal on every decision,
replayable from their seeds, the planner's helpers, and the planner's strength."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from functools import partial
from itertools import combinations

import pytest

from referee.games.card import (
    CardAction,
    CardGameState,
    CardRuleset,
    CardSeatView,
    DrawTickets,
    KeepTickets,
    PlaceMix,
    PlaceSuit,
    apply,
    legal_actions,
    load_card_ruleset,
    new_game,
    view,
)
from referee.games.common.cards import COLOURS, LOCOMOTIVE, NUM_CARD_KINDS, NUM_COLOURS
from sdk.strategies import (
    CardGreedyStrategy,
    CardPlannerStrategy,
    CardRandomStrategy,
    CardStrategy,
    play_card_match,
)
from sdk.strategies.card import (
    flush_moves,
    rob_chance,
    row_moves,
    shortfall,
    ticket_needs,
    ticket_score,
    unseen_cards,
    worth,
)

RULES = load_card_ruleset()
KINDS: tuple[Callable[[int], CardStrategy], ...] = (
    CardPlannerStrategy,
    CardGreedyStrategy,
    CardRandomStrategy,
)
RED, ORANGE, YELLOW, GREEN, BLUE, PINK, BLACK, WHITE = range(NUM_COLOURS)


def lineup(players: int, seed: int) -> list[CardStrategy]:
    """Every kind of strategy at the table, rotated so each kind sits in every seat."""
    return [KINDS[(seat + seed) % len(KINDS)](seed * 10 + seat) for seat in range(players)]


def cards(**counts: int) -> tuple[int, ...]:
    """Per-card-kind counts from colour names (``locomotive`` for Locomotives)."""
    out = [0] * NUM_CARD_KINDS
    for name, n in counts.items():
        out[LOCOMOTIVE if name == "locomotive" else COLOURS.index(name)] = n
    return tuple(out)


def play(
    strategies: Sequence[CardStrategy],
    seed: int,
    ruleset: CardRuleset = RULES,
    watch: Callable[[CardGameState, CardAction], None] | None = None,
) -> list[CardAction]:
    """A whole game; every action checked legal; ``watch`` sees each state and its action."""
    state = new_game(ruleset, len(strategies), seed)
    for seat, strategy in enumerate(strategies):
        strategy.new_game(ruleset, seat, seed)
    trace: list[CardAction] = []
    while not state.is_over:
        legal = legal_actions(state)
        action = strategies[state.seat].choose(view(state, state.seat), legal, ruleset)
        assert action in legal, (state.seat, action)
        if watch is not None:
            watch(state, action)
        trace.append(action)
        state = apply(state, action)
    return trace


def turn_view(seed: int = 3, players: int = 2) -> CardSeatView:
    """Seat 0's view of its first turn (each seat kept its first offered ticket)."""
    state = new_game(RULES, players, seed)
    while state.phase.name == "SETUP_TICKETS":
        state = apply(state, KeepTickets(state.offered[state.seat][:1]))
    return view(state, 0)


# ---------------------------------------------------------------------------------------------
# every strategy: legal, replayable


@pytest.mark.parametrize("players", [2, 3, 4])
def test_every_strategy_plays_only_legal_actions(players: int) -> None:
    for seed in range(6):  # each kind sits in every seat
        result = play_card_match(RULES, lineup(players, seed), seed)
        assert result.final
        assert len(result.seats) == players


def test_play_card_match_rejects_an_illegal_action() -> None:
    class Cheat(CardRandomStrategy):
        def choose(
            self, view: CardSeatView, legal: Sequence[CardAction], ruleset: CardRuleset
        ) -> CardAction:
            return PlaceSuit(RED, 9, 9)

    with pytest.raises(ValueError, match="illegal"):
        play_card_match(RULES, [Cheat(1), Cheat(2)], 1)


@pytest.mark.parametrize("players", [2, 4])
def test_strategies_replay_from_their_seeds(players: int) -> None:
    seed = 11
    first = play(lineup(players, seed), seed)
    assert play(lineup(players, seed), seed) == first
    # new_game resets a strategy: one that played another game first replays the same
    reused = lineup(players, seed)
    play(reused, seed + 1)
    assert play(reused, seed) == first


def test_random_strategy_depends_on_its_seed() -> None:
    traces = {tuple(play([CardRandomStrategy(s), CardRandomStrategy(9)], 5)) for s in range(3)}
    assert len(traces) == 3


def test_random_strategy_is_uniform_over_the_legal_actions() -> None:
    state = new_game(RULES, 2, 4)
    legal = legal_actions(state)  # the starting tickets: 63 subsets
    strategy = CardRandomStrategy(1)
    strategy.new_game(RULES, 0, 4)
    counts = dict.fromkeys(legal, 0)
    for _ in range(len(legal) * 40):
        counts[strategy.choose(view(state, 0), legal, RULES)] += 1
    assert min(counts.values()) > 10  # 40 expected each


# ---------------------------------------------------------------------------------------------
# the helpers


def test_ticket_needs_sums_requirements() -> None:
    tickets = RULES.tickets
    assert ticket_needs(RULES, ()) == (0,) * NUM_COLOURS
    both = ticket_needs(RULES, (tickets[0].index, tickets[1].index))
    assert both == tuple(
        a + b for a, b in zip(tickets[0].requires, tickets[1].requires, strict=True)
    )


def test_shortfall_counts_locomotives_as_any_colour() -> None:
    needs = (2, 0, 1, 0, 0, 0, 0, 0)
    assert shortfall(cards(), needs) == 3
    assert shortfall(cards(red=1), needs) == 2
    assert shortfall(cards(red=1, locomotive=1), needs) == 1
    assert shortfall(cards(red=5, locomotive=3), needs) == 0
    assert shortfall([0.5] * NUM_CARD_KINDS, needs) == pytest.approx(1.5)


def test_worth_charges_missing_cards_and_pays_spare_ones() -> None:
    needs = (2, 0, 0, 0, 0, 0, 0, 0)
    assert worth(cards(red=2), needs, 8.0, 1.0) == 0.0
    assert worth(cards(red=1), needs, 8.0, 1.0) == -8.0
    assert worth(cards(red=1, locomotive=1, blue=2), needs, 8.0, 1.0) == 2.0


def test_ticket_score_is_completed_less_failed() -> None:
    one = next(t for t in RULES.tickets if t.size == 1)
    two = next(
        t
        for t in RULES.tickets
        if t.size == 2 and not any(a and b for a, b in zip(one.requires, t.requires, strict=True))
    )
    held = (one.index, two.index)
    assert ticket_score(RULES, (*one.requires, 0), held) == one.points - two.points
    assert ticket_score(RULES, cards(locomotive=3), held) == one.points + two.points
    assert ticket_score(RULES, cards(), held) == -one.points - two.points


def test_row_moves_takes_locomotives_first_one_card_a_turn() -> None:
    safe = [0.0] * 11
    assert row_moves(GREEN, 3, 2, 10, safe) == [(LOCOMOTIVE, 1.0)] * 2 + [(GREEN, 1.0)] * 3
    assert row_moves(GREEN, 3, 2, 3, safe) == [(LOCOMOTIVE, 1.0)] * 2 + [(GREEN, 1.0)]
    assert row_moves(GREEN, 3, 0, 0, safe) == []
    # a row of 3 at risk 0.5 while 2 or fewer: survives to move the first card, then halves
    risky = [0.0, 0.5, 0.5] + [0.0] * 8
    assert [p for _, p in row_moves(BLUE, 3, 0, 5, risky)] == [1.0, 0.5, 0.25]


def test_flush_moves_places_the_biggest_suits_first() -> None:
    free = [0] * NUM_COLOURS
    hand = cards(red=4, blue=2, locomotive=1)
    # time for everything: red (with the Locomotive) now, blue next turn
    assert flush_moves(hand, 10, 0, free) == list(hand)
    # two turns: red row moves 2 (Locomotive first), blue placed at turn 1 moves 1
    moved = flush_moves(hand, 2, 0, free)
    assert moved[LOCOMOTIVE] == 1 and moved[RED] == 1 and moved[BLUE] == 1
    # from the next turn on, one turn less for each row
    assert sum(flush_moves(hand, 2, 1, free)) == 1
    # a busy colour waits for its row to go
    busy = list(free)
    busy[RED] = 5
    assert flush_moves(hand, 4, 0, busy)[RED] == 0
    # three single cards make a mix; two do not
    assert sum(flush_moves(cards(red=1, blue=1, white=1), 3, 0, free)) == 3
    assert sum(flush_moves(cards(red=1, blue=1), 3, 0, free)) == 0


def test_rob_chance_falls_with_the_row_size() -> None:
    v = turn_view()
    unseen = unseen_cards(v, RULES, (0,) * NUM_CARD_KINDS)
    chances = [rob_chance(m, RED, v, unseen, 1.0) for m in range(1, 8)]
    assert all(0.0 <= c <= 1.0 for c in chances)
    assert chances == sorted(chances, reverse=True)
    assert chances[0] > chances[-1]
    empty_hands = dataclasses.replace(
        v, players=tuple(dataclasses.replace(p, hand_size=0) for p in v.players)
    )
    assert rob_chance(1, RED, empty_hands, unseen, 1.0) == 0.0


def test_unseen_cards_are_the_deck_less_what_the_seat_sees() -> None:
    v = turn_view()
    unseen = unseen_cards(v, RULES, (0,) * NUM_CARD_KINDS)
    others = sum(p.hand_size for p in v.players if p.seat != v.seat)
    assert sum(unseen) == v.deck_size + others


# ---------------------------------------------------------------------------------------------
# the planner


def test_stack_tracker_follows_the_hidden_stack() -> None:
    """The stack is hidden from its owner (000:119-122); the planner rebuilds it exactly from
    its Railyard, robbing and a four-player game's second deck included."""
    checked = 0

    def watch(state: CardGameState, action: CardAction, strategies: list[CardStrategy]) -> None:
        nonlocal checked
        strategy = strategies[state.seat]
        if isinstance(strategy, CardPlannerStrategy) and state.phase.name == "TURN":
            assert tuple(strategy.tracker.stack) == state.stacks[state.seat]
            checked += 1

    for seed in range(6):
        players = 2 + seed % 3
        strategies: list[CardStrategy] = [
            CardPlannerStrategy(seat) if seat % 2 == 0 else CardRandomStrategy(seat)
            for seat in range(players)
        ]
        play(strategies, seed, watch=partial(watch, strategies=strategies))
    assert checked > 100


def test_planner_reads_a_stack_the_ruleset_shows() -> None:
    looking = dataclasses.replace(RULES, owners_see_stack=True)
    planner = CardPlannerStrategy(1)

    def watch(state: CardGameState, action: CardAction) -> None:
        if state.seat == 0 and state.phase.name == "TURN":
            assert tuple(planner.tracker.stack) == state.stacks[0]

    play([planner, CardGreedyStrategy(2), CardRandomStrategy(3)], 7, looking, watch)


def test_future_turns_follow_the_deck() -> None:
    planner = CardPlannerStrategy()
    planner.new_game(RULES, 0, 1)
    v = turn_view()
    rate = planner.rate(v)
    assert rate == pytest.approx(planner.prior_rate * v.num_seats)  # nothing seen yet
    assert planner.future_turns(v) == math.ceil(v.deck_size / rate)
    assert planner.future_turns(dataclasses.replace(v, deck_size=1)) == 1
    # 000:191-193 the final round: this turn is the seat's last of the deck
    assert planner.future_turns(dataclasses.replace(v, deck_size=0, last_round=2)) == 0


def test_planner_draws_tickets_on_its_last_turn_and_keeps_what_its_stack_completes() -> None:
    planner = CardPlannerStrategy()
    planner.new_game(RULES, 0, 1)
    v = turn_view()
    held = v.tickets
    planner.tracker.observe(v)
    extra = next(t for t in RULES.tickets if t.size == 3 and t.index not in held)
    # the stack completes the held ticket and ``extra``, exactly
    planner.tracker.stack = [*ticket_needs(RULES, (*held, extra.index)), 0]
    last = dataclasses.replace(v, deck_size=0, last_round=1)
    legal = (PlaceMix((RED, GREEN, BLUE)), DrawTickets())
    assert planner.choose(last, legal, RULES) == DrawTickets()
    misses = [
        t.index
        for t in RULES.tickets
        if t.index not in (*held, extra.index)
        and shortfall(planner.tracker.stack, ticket_needs(RULES, (*held, t.index))) > 0
    ]
    offered = (misses[0], extra.index, misses[1], misses[2])
    keep = dataclasses.replace(last, phase="keep_tickets", offered=offered)
    choices = tuple(
        KeepTickets(tuple(sorted(c))) for n in range(5) for c in combinations(offered, n)
    )
    assert planner.choose(keep, choices, RULES) == KeepTickets((extra.index,))


def test_tickets_value_rewards_what_the_stack_can_complete() -> None:
    planner = CardPlannerStrategy()
    small = next(t for t in RULES.tickets if t.size == 2)
    needs = [*small.requires, 0]
    nothing = [0.0] * NUM_CARD_KINDS
    covered = planner.tickets_value(RULES, (small.index,), needs, 0.0, 1.0)
    hopeless = planner.tickets_value(RULES, (small.index,), nothing, 0.0, 1.0)
    assert covered > small.points / 2 > 0 > hopeless
    # cards still to come make a ticket with nothing yet worth keeping
    assert planner.tickets_value(RULES, (small.index,), nothing, 6.0, 1.0) > 0


def test_planner_keeps_starting_tickets() -> None:
    for seed in range(5):
        state = new_game(RULES, 3, seed)
        planner = CardPlannerStrategy(1)
        planner.new_game(RULES, 0, seed)
        legal = legal_actions(state)
        chosen = planner.choose(view(state, 0), legal, RULES)
        assert chosen in legal and isinstance(chosen, KeepTickets) and chosen.tickets


def test_greedy_keeps_cheap_tickets() -> None:
    greedy = CardGreedyStrategy(1)
    for seed in range(10):
        state = new_game(RULES, 2, seed)
        greedy.new_game(RULES, 0, seed)
        chosen = greedy.choose(view(state, 0), legal_actions(state), RULES)
        assert isinstance(chosen, KeepTickets) and chosen.tickets
        sizes = [RULES.tickets[t].size for t in chosen.tickets]
        assert len(sizes) == 1 or max(sizes) <= greedy.cheap


# ---------------------------------------------------------------------------------------------
# strength


#: Planner against three random players, 4 players, seeds 0-99, the planner's seat rotating
#: (seed % 4); a win is rank 1 alone (a shared first place is not a win). Measured: 79 of 80
#: (98.8 %); over 1,000 games (seeds 1000-1999) 97 % [95.7, 97.9] (95 % Wilson).
STRENGTH_GAMES = 100


def test_planner_beats_three_random_players() -> None:
    wins = 0
    for seed in range(STRENGTH_GAMES):
        hero = seed % 4
        strategies: list[CardStrategy] = [
            CardPlannerStrategy(seed) if seat == hero else CardRandomStrategy(seed * 10 + seat)
            for seat in range(4)
        ]
        result = play_card_match(RULES, strategies, seed)
        ranks = [s.rank for s in result.seats]
        if ranks[hero] == 1 and ranks.count(1) == 1:
            wins += 1
    assert wins > 0.9 * STRENGTH_GAMES, f"{wins} of {STRENGTH_GAMES}"
