"""TrueSkill ratings, recomputed from the stored games every time they are shown.

Nothing here is stored or mutated in place: a rating is a pure function of the games of one
pool (one variant and seat count) in schedule order, so a resumed tournament, a re-run of
``ttr leaderboard show`` or a second machine reading the same file all get the same table.

Each game is a free-for-all: every seat is a one-player team, ranked by its final rank
(1 = first, equal ranks are ties, which is the order trueskill wants: lower is better).
The table sorts by the conservative rating mu - 3 sigma (trueskill's ``expose``): a bot must
have played enough games for its sigma to shrink before it can top the table.

trueskill has no type stubs; every use of it stays in the small typed functions below.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import trueskill

from leaderboard.store import BotRow, Disabled, GameResult, Store
from sdk.stats import wilson_interval as wilson_interval

MU = 25.0  #: a new bot's mean skill (the package default)
SIGMA = MU / 3  #: a new bot's uncertainty: mu - 3 sigma = 0 for a new bot
BETA = SIGMA / 2  #: the skill gap that gives the stronger bot ~76% to beat the weaker
TAU = SIGMA / 100  #: dynamics: keeps sigma from collapsing to 0 over many games
#: Probability that two equal bots tie. TTR's tie-breaks (most tickets completed, then the
#: longest path) leave exact ties rare, but they do happen and are rated as draws. The
#: package default (and the Microsoft Research calculator's) 10% is kept: the published
#: 8-player example is computed with it, which lets the tests pin our environment to it.
DRAW_PROBABILITY = 0.10


@dataclass(frozen=True, slots=True)
class Rating:
    mu: float
    sigma: float

    @property
    def conservative(self) -> float:
        """mu - 3 sigma: the skill the bot has with ~99.9% confidence; the sort key."""
        return self.mu - 3 * self.sigma


@dataclass(frozen=True, slots=True)
class Standing:
    """One row of a pool's table.

    ``wins`` counts games the bot finished with rank 1, including shared first places: a tie
    for first is a win for each tied bot (it was beaten by nobody).
    """

    rank: int  #: 1-based position in the table
    bot: BotRow
    rating: Rating
    games: int
    wins: int
    avg_score: float
    faults: int  #: faults summed over the bot's games in this pool
    win_rate: float  #: wins / games (0.0 with no games)
    win_interval: tuple[float, float]  #: 95% Wilson score interval for the win rate
    #: where it was disabled for its faults (leaderboard/faults.py), in the pool's tournaments:
    #: its games stay in the table, and the table says why it stopped playing
    disabled: tuple[Disabled, ...] = ()


def environment(draw_probability: float = DRAW_PROBABILITY) -> trueskill.TrueSkill:
    """An explicit TrueSkill environment with the package's defaults written out. Never the
    global ``trueskill.setup()``: a module-level setting would leak between pools and tests."""
    return trueskill.TrueSkill(
        mu=MU, sigma=SIGMA, beta=BETA, tau=TAU, draw_probability=draw_probability
    )


def _rate_free_for_all(
    env: trueskill.TrueSkill, ratings: list[Rating], ranks: list[int]
) -> list[Rating]:
    """One free-for-all: each player a one-player team; lower rank is better, equal ranks
    tie. The only call into trueskill's rating update."""
    groups = [(env.create_rating(mu=r.mu, sigma=r.sigma),) for r in ratings]
    rated: list[tuple[Any, ...]] = env.rate(groups, ranks=ranks)
    return [Rating(float(team[0].mu), float(team[0].sigma)) for team in rated]


def rate_games(
    games: Iterable[GameResult],
    env: trueskill.TrueSkill | None = None,
    start: Mapping[int, Rating] | None = None,
) -> dict[int, Rating]:
    """Ratings by bot_id after playing ``games`` in the given order from default ratings (or
    from ``start``, for a bot listed there: a ladder version starts from its author's mu).

    Pure: it builds new values only. A game with a single seat compares nobody and is skipped.
    A bot sitting in two seats of one game cannot be rated against itself: ValueError.
    """
    if env is None:
        env = environment()
    current: dict[int, Rating] = {}
    for game in games:
        current = rate_game(current, game, env, start)
    return current


def rate_game(
    ratings: Mapping[int, Rating],
    game: GameResult,
    env: trueskill.TrueSkill | None = None,
    start: Mapping[int, Rating] | None = None,
) -> dict[int, Rating]:
    """``ratings`` (by bot_id; a bot not in it starts from ``start``, or fresh) after one more
    game, as a new
    dict. The step :func:`rate_games` repeats; the tournament's live top 5 uses it to follow
    games as they finish, while the table itself is always recomputed from the store."""
    if env is None:
        env = environment()
    current = dict(ratings)
    seats = sorted(game.seats, key=lambda s: s.seat)
    if len(seats) < 2:
        return current
    bot_ids = [s.bot_id for s in seats]
    if len(set(bot_ids)) != len(bot_ids):
        raise ValueError(f"game {game.game_id}: a bot sits in two seats ({bot_ids})")
    fresh = _initial(env)
    start = start or {}
    before = [current.get(bot_id, start.get(bot_id, fresh)) for bot_id in bot_ids]
    after = _rate_free_for_all(env, before, [s.rank for s in seats])
    current.update(zip(bot_ids, after, strict=True))
    return current


def rating_history(
    games: Iterable[GameResult],
    env: trueskill.TrueSkill | None = None,
    start: Mapping[int, Rating] | None = None,
) -> dict[int, list[tuple[int, Rating]]]:
    """Each bot's rating after each game it played, as (the game's position in ``games``,
    counting from 1; the rating then): the steps :func:`rate_games` takes, kept for the
    league page's chart. A bot's last entry is its :func:`rate_games` rating, so the chart
    ends where the table stands."""
    if env is None:
        env = environment()
    current: dict[int, Rating] = {}
    history: dict[int, list[tuple[int, Rating]]] = {}
    for position, game in enumerate(games, start=1):
        if len(game.seats) < 2:
            continue  # rate_game skips it: nobody was compared
        current = rate_game(current, game, env, start)
        for seat in game.seats:
            history.setdefault(seat.bot_id, []).append((position, current[seat.bot_id]))
    return history


def starting_ratings(store: Store, variant: str, players: int) -> dict[int, Rating]:
    """The pool's bots that do not start fresh (ladder versions), with where they start."""
    return {
        b: Rating(mu, sigma) for b, (mu, sigma) in store.starting_ratings(variant, players).items()
    }


def _initial(env: trueskill.TrueSkill) -> Rating:
    """A new bot's rating in ``env`` (which may not use our defaults)."""
    rating = env.create_rating()
    return Rating(float(rating.mu), float(rating.sigma))


def standings(
    store: Store, variant: str, players: int, tournament_id: int | None = None
) -> list[Standing]:
    """The table of one pool (variant ident such as "usa@1", and seat count), from every
    stored game of it or, with ``tournament_id``, from that tournament's games alone (every
    bot then starts from a fresh rating, as if the store held nothing else).

    Sorted by conservative rating, highest first; equal ones by mu (higher first), then by
    bot name, version and id, so the order is total and the same on every run.
    """
    games = store.games(variant=variant, players=players, tournament_id=tournament_id)
    ratings = rate_games(games, start=starting_ratings(store, variant, players))
    bots = store.bots()
    played: dict[int, int] = {}
    wins: dict[int, int] = {}
    score: dict[int, int] = {}
    faults: dict[int, int] = {}
    for game in games:
        for seat in game.seats:
            bot_id = seat.bot_id
            played[bot_id] = played.get(bot_id, 0) + 1
            wins[bot_id] = wins.get(bot_id, 0) + (seat.rank == 1)
            score[bot_id] = score.get(bot_id, 0) + seat.score
            faults[bot_id] = faults.get(bot_id, 0) + seat.faults
    fresh = _initial(environment())
    tournaments = {g.tournament_id for g in games}
    disabled: dict[int, list[Disabled]] = {}
    for d in store.disabled(tournament_id):
        if d.tournament_id in tournaments and d.bot_id in played:
            disabled.setdefault(d.bot_id, []).append(d)

    def key(bot_id: int) -> tuple[float, float, str, str, int]:
        rating = ratings.get(bot_id, fresh)
        bot = bots[bot_id]
        return (-rating.conservative, -rating.mu, bot.name, bot.version, bot_id)

    table = []
    for position, bot_id in enumerate(sorted(played, key=key), start=1):
        n, w = played[bot_id], wins[bot_id]
        table.append(
            Standing(
                rank=position,
                bot=bots[bot_id],
                rating=ratings.get(bot_id, fresh),
                games=n,
                wins=w,
                avg_score=score[bot_id] / n,
                faults=faults[bot_id],
                win_rate=w / n,
                win_interval=wilson_interval(w, n),
                disabled=tuple(disabled.get(bot_id, ())),
            )
        )
    return table
