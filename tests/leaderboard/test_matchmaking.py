"""Matchmaking (leaderboard/matchmaking.py): the rules one by one, then a simulated ladder.

The rules: never two versions of one author in a game; no game, with a reason, when the pool
has too few authors; opponents only from the window of versions nearest the seed in mu; seeds
drawn with the documented weights (measured over many draws); the same rng state, the same
match. The ladder (bench/matchmaking.py's ``simulate``): bots of hidden strengths random <
greedy < planner, several authors each, results drawn from the strengths and rated with the
project's TrueSkill (``leaderboard.ratings``): after a few hundred games the classes are in
order, games are between closer ratings than random pairing gives, and games per version are
spread evenly.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from dataclasses import replace

import pytest

from bench.matchmaking import simulate
from leaderboard.matchmaking import (
    Candidate,
    Match,
    MatchSettings,
    NoMatch,
    draw_match,
    draw_window,
    initial_rating,
    pick_match,
    seed_probabilities,
)
from leaderboard.ratings import MU, SIGMA


def pool(
    authors: int, versions_each: int = 1, games: int = 10, sigma: float = 2.0
) -> list[Candidate]:
    """``authors`` authors with ``versions_each`` versions each; mu spread 1 apart."""
    return [
        Candidate(
            a * versions_each + v + 1, f"author{a}", 10.0 + a * versions_each + v, sigma, games
        )
        for a in range(authors)
        for v in range(versions_each)
    ]


def match(candidates: list[Candidate], players: int, rng: random.Random) -> Match:
    result = draw_match(candidates, players, rng)
    assert isinstance(result, Match), result
    return result


# -- who may play ------------------------------------------------------------------------


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_never_two_versions_of_one_author_in_a_game(players: int) -> None:
    candidates = pool(authors=6, versions_each=4)  # neighbours in mu are mostly one author's
    by_version = {c.version: c for c in candidates}
    rng = random.Random(players)
    for _ in range(2000):
        seats = pick_match(candidates, players, rng)
        assert seats is not None
        assert len(seats) == players
        assert len({by_version[v].author for v in seats}) == players


def test_no_game_with_fewer_authors_than_seats_and_the_reason_says_so() -> None:
    candidates = pool(authors=3, versions_each=3)
    assert pick_match(candidates, 4, random.Random(1)) is None
    result = draw_match(candidates, 4, random.Random(1))
    assert isinstance(result, NoMatch)
    assert not result  # falsy, like the None of pick_match
    assert result.reason == (
        "a 4-player game needs versions of 4 different authors; 9 playable versions of 3 authors"
    )
    assert pick_match(candidates, 3, random.Random(1)) is not None  # 3 seats: fine
    empty = draw_match([], 2, random.Random(1))
    assert isinstance(empty, NoMatch)
    assert empty.reason == "the pool has no versions; a 2-player game needs 2 authors"


def test_disabled_and_retired_versions_never_play_and_the_reason_names_them() -> None:
    candidates = pool(authors=5)
    candidates[1] = replace(candidates[1], disabled=True)
    candidates[3] = replace(candidates[3], active=False)
    rng = random.Random(2)
    seen: Counter[int] = Counter()
    for _ in range(500):
        seats = pick_match(candidates, 3, rng)
        assert seats is not None
        seen.update(seats)
    assert set(seen) == {1, 3, 5}  # versions 2 (disabled) and 4 (retired) never play
    result = draw_match(candidates, 4, rng)
    assert isinstance(result, NoMatch)
    assert result.reason == (
        "a 4-player game needs versions of 4 different authors; 3 playable versions of "
        "3 authors (sitting out, disabled: 2; retired: 4)"
    )


def test_a_game_is_found_whenever_one_exists_the_window_widening_to_other_authors() -> None:
    # Author a's and b's many versions crowd around mu 25; c's only version is far away. A
    # 3-player game needs c whatever the window drawn: it widens until it holds c.
    crowd = [Candidate(v, "ab"[v % 2], 25.0 + v / 100, 2.0, 5) for v in range(1, 21)]
    far = Candidate(99, "c", 60.0, 2.0, 5)
    rng = random.Random(3)
    for _ in range(500):
        seats = pick_match([*crowd, far], 3, rng, MatchSettings(window_min=1, window_max=1))
        assert seats is not None and 99 in seats


def test_bad_input_is_the_callers_mistake() -> None:
    with pytest.raises(ValueError, match="at least 2 players"):
        draw_match(pool(3), 1, random.Random(0))
    with pytest.raises(ValueError, match="given twice"):
        draw_match([*pool(3), pool(3)[0]], 2, random.Random(0))
    with pytest.raises(ValueError):
        Candidate(1, "a", 25.0, 0.0, 0)  # a sigma of 0 would divide the seed weights
    with pytest.raises(ValueError):
        Candidate(1, "a", 25.0, 1.0, -1)
    with pytest.raises(ValueError):
        MatchSettings(window_min=5, window_max=4)
    with pytest.raises(ValueError):
        MatchSettings(uniform_seed_share=1.5)


# -- the window --------------------------------------------------------------------------


@pytest.mark.parametrize("players", [2, 4])
def test_opponents_come_from_the_window_of_the_nearest_mu(players: int) -> None:
    candidates = pool(authors=40)  # one version each, mu 10, 11, ..., 49
    by_version = {c.version: c for c in candidates}
    rng = random.Random(4)
    windows = []
    for _ in range(3000):
        found = match(candidates, players, rng)
        seed = by_version[found.seed]
        others = sorted(
            (c for c in candidates if c is not seed),
            key=lambda c: (abs(c.mu - seed.mu), c.version),
        )
        rank = {c.version: i for i, c in enumerate(others)}
        reach = max(found.window, players - 1)
        assert all(rank[v] < reach for v in found.seats if v != found.seed)
        windows.append(found.window)
    # The window size drawn: 3 at the least, 100 at most, mostly narrow, sometimes wide.
    assert min(windows) == 3 and max(windows) <= 100
    share_wide = sum(w >= 12 for w in windows) / len(windows)  # P(X >= 4) = 4 ** -1.5
    assert abs(share_wide - 1 / 8) < 0.03
    assert sorted(windows)[len(windows) // 2] == 4  # the median: 3 * 2 ** (1 / 1.5) = 4.76


def test_the_narrowest_window_plays_the_nearest_neighbour() -> None:
    candidates = pool(authors=10)
    by_version = {c.version: c for c in candidates}
    settings = MatchSettings(window_min=1, window_max=1)
    rng = random.Random(5)
    for _ in range(300):
        found = draw_match(candidates, 2, rng, settings)
        assert isinstance(found, Match)
        (opponent,) = (v for v in found.seats if v != found.seed)
        seed_mu = by_version[found.seed].mu
        nearest = min(
            (c for c in candidates if c.version != found.seed),
            key=lambda c: (abs(c.mu - seed_mu), c.version),
        )
        assert opponent == nearest.version


def test_the_window_size_is_pareto_between_its_bounds() -> None:
    rng = random.Random(6)
    settings = MatchSettings(window_min=4, window_max=40, window_tail=2.0)
    sizes = [draw_window(rng, settings) for _ in range(20000)]
    assert min(sizes) == 4 and max(sizes) == 40
    for k in (8, 16):  # P(size >= k) = (4 / k) ** 2
        assert abs(sum(s >= k for s in sizes) / len(sizes) - (4 / k) ** 2) < 0.01


# -- the seed ----------------------------------------------------------------------------


def test_seed_probabilities_are_the_documented_weights() -> None:
    s0 = SIGMA
    candidates = [
        Candidate(1, "a", 25.0, s0, 10),  # the fewest games, a new sigma: w = 1
        Candidate(2, "b", 25.0, s0, 11),  # 1 game ahead: w = 1 / 2 ** 2
        Candidate(3, "c", 25.0, s0 / 2, 10),  # half the sigma: w = 1 / 2
        Candidate(4, "d", 25.0, s0 / 4, 13),  # w = (1 / 4) / 4 ** 2
        Candidate(5, "e", 25.0, s0, 0, disabled=True),  # not playable: not counted at all
    ]
    w = {1: 1.0, 2: 0.25, 3: 0.5, 4: 1 / 64}
    total = sum(w.values())
    expected = {v: 0.9 * w[v] / total + 0.1 / 4 for v in w}
    got = seed_probabilities(candidates)
    assert got.keys() == expected.keys()
    for v in w:
        assert got[v] == pytest.approx(expected[v])
    assert sum(got.values()) == pytest.approx(1.0)
    assert seed_probabilities([]) == {}
    flat = seed_probabilities(candidates, MatchSettings(uniform_seed_share=1.0))
    assert all(p == pytest.approx(0.25) for p in flat.values())


def test_seeds_are_drawn_with_those_probabilities() -> None:
    candidates = [
        Candidate(1, "a", 20.0, SIGMA, 0),
        Candidate(2, "b", 22.0, 4.0, 2),
        Candidate(3, "c", 25.0, 2.0, 1),
        Candidate(4, "d", 28.0, 1.0, 5),
        Candidate(5, "e", 30.0, 1.0, 5),
    ]
    expected = seed_probabilities(candidates)
    draws = 20000
    rng = random.Random(7)
    seeds = Counter(match(candidates, 2, rng).seed for _ in range(draws))
    for version, p in expected.items():
        tolerance = 4 * math.sqrt(p * (1 - p) / draws)  # 4 standard errors
        assert abs(seeds[version] / draws - p) < tolerance, (version, seeds[version], p)
    # fewer games and a higher sigma draw more seeds: the order the weights say
    assert seeds[1] > seeds[3] > seeds[2] > seeds[4]


def test_the_seed_has_no_fixed_seat() -> None:
    candidates = pool(authors=8)
    rng = random.Random(8)
    seat_of_seed: Counter[int] = Counter()
    for _ in range(4000):
        found = match(candidates, 4, rng)
        seat_of_seed[found.seats.index(found.seed)] += 1
    assert all(800 < seat_of_seed[seat] < 1200 for seat in range(4)), seat_of_seed


# -- determinism ---------------------------------------------------------------------------


def test_the_same_rng_state_gives_the_same_matches_whatever_the_candidates_order() -> None:
    candidates = pool(authors=7, versions_each=2, sigma=3.0)
    shuffled = candidates[:]
    random.Random(9).shuffle(shuffled)
    first, second = random.Random(10), random.Random(10)
    a = [draw_match(candidates, 3, first) for _ in range(200)]
    b = [draw_match(shuffled, 3, second) for _ in range(200)]
    assert a == b
    c = [draw_match(candidates, 3, random.Random(11)) for _ in range(200)]
    assert a != c
    # pick_match is the same draw, seats only
    picked, drawn = random.Random(12), random.Random(12)
    for _ in range(20):
        assert pick_match(candidates, 3, picked) == match(candidates, 3, drawn).seats


# -- a new version -------------------------------------------------------------------------


def test_a_new_version_keeps_its_authors_latest_mu_with_sigma_reset() -> None:
    previous = [
        Candidate(7, "ann", 31.5, 1.2, 400),
        Candidate(12, "ann", 33.25, 1.1, 80),  # the latest: highest id
        Candidate(9, "ann", 29.0, 1.3, 200),
    ]
    assert initial_rating(previous) == (33.25, SIGMA)
    assert initial_rating(previous, MatchSettings(inherit_mu=False)) == (MU, SIGMA)
    assert initial_rating([]) == (MU, SIGMA)  # a first version starts as a new author
    assert initial_rating(previous, MatchSettings(sigma=5.0)) == (33.25, 5.0)
    with pytest.raises(ValueError, match="several authors"):
        initial_rating([*previous, Candidate(13, "bob", 20.0, 1.0, 5)])


# -- the ladder ----------------------------------------------------------------------------


@pytest.mark.parametrize(("players", "games"), [(4, 300), (2, 600)])
def test_a_simulated_ladder_orders_the_classes_pairs_close_ratings_and_stays_fair(
    players: int, games: int
) -> None:
    # 12 versions (4 authors each of random, greedy and planner strength), ~100 games each.
    ladder = simulate(games, players=players, copies=4, seed=1)
    baseline = simulate(games, players=players, copies=4, seed=1, pairing="random")
    print(
        f"\n{players} players, {games} games: mean |mu diff| {ladder.mean_mu_diff:.2f} "
        f"(random games at the same moments {ladder.random_mu_diff:.2f}, a randomly paired "
        f"ladder {baseline.mean_mu_diff:.2f}); mean |true diff| {ladder.mean_true_diff:.2f} "
        f"(random {ladder.random_true_diff:.2f}); games per version "
        f"{ladder.games_min}..{ladder.games_max} (random pairing {baseline.games_min}.."
        f"{baseline.games_max}); final mu {ladder.final_mu}"
    )
    assert ladder.order_correct, ladder.final_mu  # planner > greedy > random, every version
    # Closer games than random pairing: both at the same moments and against a random ladder.
    assert ladder.mean_mu_diff < 0.7 * ladder.random_mu_diff
    assert ladder.mean_mu_diff < 0.8 * baseline.mean_mu_diff
    assert ladder.mean_true_diff < 0.6 * ladder.random_true_diff  # the hidden strengths too
    # Fair: games per version within 10% (random pairing spreads them much wider).
    assert ladder.spread <= 1.10
    assert ladder.games_min + ladder.games_max > 0
    assert ladder.seconds < 10


def test_a_resubmitted_better_version_gets_a_burst_of_games_then_its_share() -> None:
    # Game 300: a random-strength author retires its version for one of planner strength,
    # rated by initial_rating (its old mu, sigma reset). Games counted over the last 200.
    later = simulate(500, players=4, copies=4, seed=1, resubmit_at=300, recent=200)
    marks = [later.newcomer_timeline[n - 1] for n in (10, 50, 100, 200)]
    print(f"\nthe new version's games after 10, 50, 100, 200 games: {marks}")
    assert later.newcomer_timeline[49] >= 40  # a burst: most of its first 50 games
    fair = 200 * 4 / 12  # its share of the 200 games since it entered
    assert later.newcomer_games is not None and later.newcomer_games <= 1.5 * fair
    assert later.newcomer_climbed is not None  # above every greedy version, for good
    assert later.order_correct, later.final_mu


def test_the_ladder_figures_tell_a_bad_matchmaker_apart() -> None:
    # The bounds above are not loose enough to pass anything: a window as wide as the pool
    # pairs no closer than random, and seeds blind to games (uniform opponents) are unfair.
    blind_to_mu = simulate(300, seed=1, settings=MatchSettings(window_min=100, window_max=100))
    assert blind_to_mu.mean_mu_diff > 0.9 * blind_to_mu.random_mu_diff
    blind_to_games = MatchSettings(
        games_exponent=0, sigma_exponent=0, uniform_seed_share=0, weighted_opponents=False
    )
    assert simulate(300, seed=1, settings=blind_to_games).spread > 1.3
