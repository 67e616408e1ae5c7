"""The round-robin schedule (leaderboard/schedule.py): complete, fair and reproducible."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest

from leaderboard.schedule import build, game_seed, games_in


@pytest.mark.parametrize(("entrants", "players"), [(2, 2), (3, 2), (5, 3), (6, 4), (7, 5)])
def test_every_bot_plays_every_seat_equally_often(entrants: int, players: int) -> None:
    games = build(entrants, players, rounds=2, base_seed=7, tournament_id=1)
    seats = Counter((bot, seat) for g in games for seat, bot in enumerate(g.seats))
    per_seat = 2 * math.comb(entrants - 1, players - 1)  # rounds x combinations holding the bot
    assert seats == {(b, s): per_seat for b in range(entrants) for s in range(players)}


def test_each_combination_plays_every_rotation_with_one_seed_per_round() -> None:
    games = build(5, 3, rounds=2, base_seed=11, tournament_id=4)
    assert len(games) == games_in(5, 3, 2) == 2 * 10 * 3
    for (round_no, combo), group in itertools.groupby(games, lambda g: (g.round, g.combination)):
        group_games = list(group)
        members = sorted(group_games[0].seats)
        assert [g.rotation for g in group_games] == [0, 1, 2]
        assert {g.seats for g in group_games} == {
            tuple(members[r:] + members[:r]) for r in range(3)
        }
        assert len({g.seed for g in group_games}) == 1  # duplicate style: the same deal
        assert group_games[0].seed == game_seed(11, round_no, combo)
    combos = {tuple(sorted(g.seats)) for g in games}
    assert combos == set(itertools.combinations(range(5), 3))


def test_rounds_get_fresh_deals_and_ids_name_their_slot() -> None:
    games = build(4, 2, rounds=3, base_seed=1, tournament_id=9)
    seeds: dict[int, set[int]] = {g.round: set() for g in games}
    for g in games:
        seeds[g.round].add(g.seed)
    assert not seeds[1] & seeds[2] and not seeds[2] & seeds[3]
    assert [g.index for g in games] == list(range(len(games)))
    assert len({g.game_id for g in games}) == len(games)
    assert games[0].game_id == "t9-r1-c0-s0"


def test_the_schedule_is_the_same_every_time() -> None:
    assert build(6, 4, 2, 123, 2) == build(6, 4, 2, 123, 2)
    assert build(6, 4, 2, 123, 2) != build(6, 4, 2, 124, 2)
    assert game_seed(1, 1, 0) == game_seed(1, 1, 0) != game_seed(2, 1, 0)


def test_too_few_bots_or_bad_numbers_are_refused() -> None:
    with pytest.raises(ValueError, match="enter at least 4"):
        build(3, 4, 1, 1, 1)
    with pytest.raises(ValueError, match="at least 2 players"):
        build(3, 1, 1, 1, 1)
    with pytest.raises(ValueError, match="rounds"):
        build(3, 2, 0, 1, 1)
    assert games_in(3, 4, 1) == 0
