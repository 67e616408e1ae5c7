"""The round-robin schedule (leaderboard/schedule.py): complete, fair and reproducible."""

from __future__ import annotations

import hashlib
import hmac
import itertools
import math
from collections import Counter

import pytest

from leaderboard.schedule import SEED_BITS, build, game_seed, games_in, public_game_seed

KEY = bytes(range(32))  #: a store's seed key, fixed here (a real one comes from secrets)


@pytest.mark.parametrize(("entrants", "players"), [(2, 2), (3, 2), (5, 3), (6, 4), (7, 5)])
def test_every_bot_plays_every_seat_equally_often(entrants: int, players: int) -> None:
    games = build(entrants, players, rounds=2, base_seed=7, tournament_id=1, key=KEY)
    seats = Counter((bot, seat) for g in games for seat, bot in enumerate(g.seats))
    per_seat = 2 * math.comb(entrants - 1, players - 1)  # rounds x combinations holding the bot
    assert seats == {(b, s): per_seat for b in range(entrants) for s in range(players)}


def test_each_combination_plays_every_rotation_with_one_seed_per_round() -> None:
    games = build(5, 3, rounds=2, base_seed=11, tournament_id=4, key=KEY)
    assert len(games) == games_in(5, 3, 2) == 2 * 10 * 3
    for (round_no, combo), group in itertools.groupby(games, lambda g: (g.round, g.combination)):
        group_games = list(group)
        members = sorted(group_games[0].seats)
        assert [g.rotation for g in group_games] == [0, 1, 2]
        assert {g.seats for g in group_games} == {
            tuple(members[r:] + members[:r]) for r in range(3)
        }
        assert len({g.seed for g in group_games}) == 1  # duplicate style: the same deal
        assert group_games[0].seed == game_seed(11, round_no, combo, key=KEY)
    combos = {tuple(sorted(g.seats)) for g in games}
    assert combos == set(itertools.combinations(range(5), 3))


def test_rounds_get_fresh_deals_and_ids_name_their_slot() -> None:
    games = build(4, 2, rounds=3, base_seed=1, tournament_id=9, key=KEY)
    seeds: dict[int, set[int]] = {g.round: set() for g in games}
    for g in games:
        seeds[g.round].add(g.seed)
    assert not seeds[1] & seeds[2] and not seeds[2] & seeds[3]
    assert [g.index for g in games] == list(range(len(games)))
    assert len({g.game_id for g in games}) == len(games)
    assert games[0].game_id == "t9-r1-c0-s0"


def test_the_schedule_is_the_same_every_time() -> None:
    assert build(6, 4, 2, 123, 2, key=KEY) == build(6, 4, 2, 123, 2, key=KEY)
    assert build(6, 4, 2, 123, 2, key=KEY) != build(6, 4, 2, 124, 2, key=KEY)
    assert game_seed(1, 1, 0, key=KEY) == game_seed(1, 1, 0, key=KEY) != game_seed(2, 1, 0, key=KEY)


def test_too_few_bots_or_bad_numbers_are_refused() -> None:
    with pytest.raises(ValueError, match="enter at least 4"):
        build(3, 4, 1, 1, 1, key=KEY)
    with pytest.raises(ValueError, match="at least 2 players"):
        build(3, 1, 1, 1, 1, key=KEY)
    with pytest.raises(ValueError, match="rounds"):
        build(3, 2, 0, 1, 1, key=KEY)
    assert games_in(3, 4, 1) == 0


def test_game_seeds_are_keyed_with_the_store_key() -> None:
    """An organiser's base seed alone gives nothing away: another key deals other games, and
    the seeds are not the public formula's (which anyone with the base seed can compute)."""
    other = bytes(range(1, 33))
    mine = build(4, 2, 2, 42, 1, key=KEY)
    theirs = build(4, 2, 2, 42, 1, key=other)
    assert [g.seats for g in mine] == [g.seats for g in theirs]  # the same slots ...
    assert not {g.seed for g in mine} & {g.seed for g in theirs}  # ... other deals
    public = {public_game_seed(42, r, c) for r in (1, 2) for c in range(6)}
    assert not {g.seed for g in mine} & public
    # pinned: HMAC-SHA256 under the key, the first 8 bytes big-endian less one bit
    digest = hmac.new(KEY, b"ttr-arena/tournament/42/1/0", hashlib.sha256).digest()
    assert mine[0].seed == int.from_bytes(digest[:8], "big") >> 1
    assert all(0 <= g.seed < 2**SEED_BITS for g in mine)


def test_the_public_formula_is_kept_for_tournaments_begun_before_keys() -> None:
    """``key=None`` deals as tournaments stored before keys were dealt (a resumed one keeps
    one deal per combination); pinned, so that such a store still resumes as it began."""
    old = build(3, 2, 1, 5, 1, key=None)
    assert [g.seed for g in old] == [public_game_seed(5, 1, g.combination) for g in old]
    digest = hashlib.sha256(b"ttr-arena/5/1/0").digest()
    assert old[0].seed == int.from_bytes(digest[:8], "big") >> 1
