"""TrueSkill ratings recomputed from stored games: pinned to Microsoft Research's published
example, recovering a known order of strength, handling ties, and pure."""

from __future__ import annotations

import copy
import itertools
import random
from pathlib import Path

import pytest

from leaderboard.ratings import (
    MU,
    SIGMA,
    Rating,
    environment,
    rate_games,
    standings,
    wilson_interval,
)
from leaderboard.store import GameResult, SeatResult, Store, TournamentSpec
from tests.helpers import stored_game


def ffa(index: int, seating: list[tuple[int, int]], variant: str = "usa@1") -> GameResult:
    """A free-for-all game of tournament 1: ``seating`` is (bot_id, rank) per seat; each seat
    scores 100 - rank and made rank - 1 faults."""
    return stored_game(
        index,
        tuple(
            SeatResult(seat, bot_id, 100 - rank, rank, 0, 0, rank - 1, 0)
            for seat, (bot_id, rank) in enumerate(seating)
        ),
        variant,
    )


def test_environment_is_the_package_defaults_written_out() -> None:
    env = environment()
    defaults = pytest.approx((25.0, 25 / 3, 25 / 6, 25 / 300), rel=1e-12)
    assert (env.mu, env.sigma, env.beta, env.tau) == defaults
    assert env.draw_probability == 0.10
    assert Rating(MU, SIGMA).conservative == pytest.approx(0.0)


# Microsoft Research's published example (research.microsoft.com/en-us/projects/trueskill/
# details.aspx): 8 new players in one free-for-all, finishing in order. The trueskill package
# pins the same figures in its test_microsoft_research_example, to 3 decimals.
MSR_8_PLAYERS = [
    (36.771, 5.749),
    (32.242, 5.133),
    (29.074, 4.943),
    (26.322, 4.874),
    (23.678, 4.874),
    (20.926, 4.943),
    (17.758, 5.133),
    (13.229, 5.749),
]


def test_microsoft_research_8_player_free_for_all() -> None:
    # Bot ids 11..18 seated in an order unlike the finishing order: ranks, not seats, count.
    seating = [(11 + seat, rank) for seat, rank in enumerate([3, 1, 8, 2, 7, 4, 6, 5])]
    rated = rate_games([ffa(0, seating)])
    by_finish = [rated[bot_id] for bot_id, _ in sorted(seating, key=lambda s: s[1])]
    for rating, (mu, sigma) in zip(by_finish, MSR_8_PLAYERS, strict=True):
        assert rating.mu == pytest.approx(mu, abs=1e-3)
        assert rating.sigma == pytest.approx(sigma, abs=1e-3)


def test_hidden_strength_order_is_recovered() -> None:
    """Six bots of known strength play 300 4-player games (random seatings, noisy
    performance); the conservative ratings must rank them exactly in order of strength.
    Not a lucky seed: seeds 0-29 all give the exact order too."""
    rng = random.Random(20240607)
    strength = {1: 0.0, 2: 2.0, 3: 4.0, 4: 6.0, 5: 8.0, 6: 10.0}  # performance ~ N(s, 3)
    games = []
    for index in range(300):
        bots = rng.sample(sorted(strength), 4)
        performance = {bot: rng.gauss(strength[bot], 3.0) for bot in bots}
        order = sorted(bots, key=lambda bot: -performance[bot])
        games.append(ffa(index, [(bot, order.index(bot) + 1) for bot in bots]))
    rated = rate_games(games)
    by_rating = sorted(rated, key=lambda bot: rated[bot].conservative, reverse=True)
    assert by_rating == [6, 5, 4, 3, 2, 1]
    assert all(r.sigma < SIGMA / 2 for r in rated.values())  # 200 games each: well measured


def test_a_tie_pulls_the_two_ratings_together() -> None:
    strong, weak = 1, 2
    before = rate_games([ffa(i, [(strong, 1), (weak, 2)]) for i in range(5)])
    after = rate_games(
        [*(ffa(i, [(strong, 1), (weak, 2)]) for i in range(5)), ffa(5, [(1, 1), (2, 1)])]
    )
    assert after[strong].mu < before[strong].mu
    assert after[weak].mu > before[weak].mu
    assert after[strong].mu - after[weak].mu < before[strong].mu - before[weak].mu


def test_equal_players_tying_keep_equal_means() -> None:
    rated = rate_games([ffa(0, [(1, 1), (2, 2), (3, 2), (4, 4)])])
    assert rated[2].mu == pytest.approx(rated[3].mu, abs=0.02)
    assert rated[2].sigma == pytest.approx(rated[3].sigma)
    assert rated[1].mu > rated[2].mu > rated[4].mu


def test_recompute_is_pure() -> None:
    rng = random.Random(5)
    games = [
        ffa(i, [(bot, rank) for rank, bot in enumerate(rng.sample(range(1, 6), 3), start=1)])
        for i in range(40)
    ]
    snapshot = copy.deepcopy(games)
    env = environment()
    first = rate_games(games, env)
    second = rate_games(iter(games), env)
    assert first == second
    assert games == snapshot
    assert rate_games(games) == first  # a fresh environment changes nothing either


def test_game_order_matters_and_is_the_given_order() -> None:
    """TrueSkill is order dependent, hence ratings use the schedule order from the store."""
    games = [ffa(0, [(1, 1), (2, 2)]), ffa(1, [(2, 1), (1, 2)]), ffa(2, [(1, 1), (3, 2)])]
    assert rate_games(games) != rate_games(games[::-1])


def test_a_bot_in_two_seats_of_one_game_is_refused() -> None:
    with pytest.raises(ValueError, match="two seats"):
        rate_games([ffa(0, [(1, 1), (1, 2)])])


@pytest.mark.parametrize(
    ("successes", "trials", "expected"),
    [
        # Hand computed with z = 1.96: centre (p + z²/2n) / (1 + z²/n),
        # half-width z / (1 + z²/n) * sqrt(p(1-p)/n + z²/4n²).
        (0, 10, (0.0, 0.27753)),  # z²/10 / (1 + z²/10) = 0.384146 / 1.384146
        (10, 10, (0.72247, 1.0)),
        (5, 10, (0.23659, 0.76341)),  # 0.5 -+ 1.416009 * 0.186020
        (62, 100, (0.52210, 0.70902)),  # 0.615561 -+ 1.887459 * 0.049518
        (0, 0, (0.0, 1.0)),  # no games: we know nothing
    ],
)
def test_wilson_interval(successes: int, trials: int, expected: tuple[float, float]) -> None:
    lo, hi = wilson_interval(successes, trials)
    assert lo == pytest.approx(expected[0], abs=1e-5)
    assert hi == pytest.approx(expected[1], abs=1e-5)


def test_wilson_interval_refuses_impossible_counts() -> None:
    with pytest.raises(ValueError):
        wilson_interval(11, 10)
    with pytest.raises(ValueError):
        wilson_interval(-1, 10)


def test_standings_of_a_pool(tmp_path: Path) -> None:
    path = tmp_path / "league.sqlite"
    with Store(path) as store:
        t = store.begin_tournament(TournamentSpec("night", "usa@1", 3, 1, 0, {}))
        assert t.tournament_id == 1  # ffa() games belong to tournament 1
        a = store.add_bot("alpha", "1", "", "h1")
        b = store.add_bot("beta", "1", "", "h2")
        c = store.add_bot("gamma", "1", "", "h3")
        d = store.add_bot("delta", "1", "", "h4")  # plays only in other pools
        index = itertools.count()
        for seating in itertools.permutations([a, b, c]):
            ranks = {a: 1, b: 2, c: 3}
            store.record_game(ffa(next(index), [(bot, ranks[bot]) for bot in seating]))
        store.record_game(ffa(next(index), [(b, 1), (a, 1), (c, 3)]))  # shared first place
        store.record_game(ffa(next(index), [(d, 1), (a, 2)]))  # usa@1, 2 players
        store.record_game(ffa(next(index), [(d, 1), (a, 2), (b, 3)], variant="europe@1"))
        table = standings(store, "usa@1", 3)
        assert standings(store, "usa@1", 3) == table  # recomputed, same result
        assert [s.bot.name for s in standings(store, "usa@1", 2)] == ["delta", "alpha"]
        assert standings(store, "usa@2", 3) == []
    assert [(s.rank, s.bot.name) for s in table] == [(1, "alpha"), (2, "beta"), (3, "gamma")]
    alpha, beta, gamma = table
    # A shared first place is a win for each of the tied bots.
    assert [(s.games, s.wins) for s in table] == [(7, 7), (7, 1), (7, 0)]
    assert (alpha.win_rate, beta.win_rate, gamma.win_rate) == (1.0, 1 / 7, 0.0)
    assert alpha.win_interval == wilson_interval(7, 7)
    assert gamma.win_interval == wilson_interval(0, 7)
    assert (alpha.avg_score, gamma.avg_score) == (99.0, 97.0)  # score = 100 - rank
    assert beta.avg_score == pytest.approx((6 * 98 + 99) / 7)
    assert (alpha.faults, beta.faults, gamma.faults) == (0, 6, 14)  # faults = rank - 1
    assert alpha.rating == rate_games_of(path, "usa@1", 3)[a]
    assert alpha.rating.conservative > beta.rating.conservative > gamma.rating.conservative


def rate_games_of(path: Path, variant: str, players: int) -> dict[int, Rating]:
    with Store(path) as store:
        return rate_games(store.games(variant, players))


def test_standings_break_equal_ratings_by_name(tmp_path: Path) -> None:
    """Two bots that only ever tie with each other have equal ratings: name decides."""
    with Store(tmp_path / "league.sqlite") as store:
        store.begin_tournament(TournamentSpec("night", "usa@1", 2, 1, 0, {}))
        zed = store.add_bot("zed", "1", "", "h1")
        amy = store.add_bot("amy", "1", "", "h2")
        store.record_game(ffa(0, [(zed, 1), (amy, 1)]))
        table = standings(store, "usa@1", 2)
    assert table[0].rating == table[1].rating
    assert [s.bot.name for s in table] == ["amy", "zed"]
