"""The round-robin schedule: which bots play which game, in which seats, with which deal.

Fairness is duplicate style (ARCHITECTURE.md, "Tournaments and leaderboard"): every
combination of ``players`` bots out of the entrants plays one game in each cyclic rotation of
its seating, and all rotations of a combination share one seed. Over the rotations each bot
of the combination sits in each seat once and plays each deal from each seat, so seat luck
(003:19 the first player; seat 0 here) and deal luck cancel within the combination.
``rounds`` repeats the whole round robin with fresh seeds.

The schedule is a pure function of (entrant count, players, rounds, base seed, tournament,
the store's seed key): a resumed run rebuilds the same list, and a game's id names its slot,
so a stored game is recognised and never played twice.

Secrets. A bot that learns a game's seed knows every hand and the deck order, so seeds must
be unguessable: the base seed is drawn from the OS (:func:`secret_seed`) unless the organiser
gives one, and a game's seed is HMAC-SHA256 of the base seed, round and combination under the
store's secret key (:func:`game_seed`; ``referee.hosting.seeds`` says why), 63 bits of it. An
organiser's ``--seed 42`` is a number anyone could try, and the engine and this formula are
public: without the key, a bot that tried every small base seed against its dealt hand would
find the one that deals it, and then know every game of the night. With the key (in the store
file, out of every bot's reach) the same store and ``--seed`` deal the same games again, and
the number alone tells nothing. Tournaments begun before stores kept a key are resumed with
the public formula they began with (:func:`public_game_seed`), so that every rotation of a
combination keeps one deal. The slot id here is the store's key only; bots are sent a fresh
random id per game (leaderboard/runner.py), since the slot would tell them round, combination
and rotation, and a validation game's id would set it apart.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import secrets
from dataclasses import dataclass

from referee.hosting.seeds import SEED_BITS, keyed_seed

__all__ = [
    "SEED_BITS",
    "ScheduledGame",
    "build",
    "game_seed",
    "games_in",
    "public_game_seed",
    "secret_seed",
]


@dataclass(frozen=True, slots=True)
class ScheduledGame:
    index: int  #: position in the schedule (the order ratings are computed in)
    #: ``t{tournament}-r{round}-c{combination}-s{rotation}``: the store's key, never sent to bots
    game_id: str
    round: int  #: 1-based
    combination: int  #: 0-based index of the combination in lexicographic order
    rotation: int  #: 0..players-1: how far the combination's seating is rotated
    seed: int  #: the deal; the same for every rotation of a combination in a round
    seats: tuple[int, ...]  #: entrant numbers (0-based, into the sorted entrant list), by seat


def secret_seed() -> int:
    """A seed from the OS's randomness, for when the organiser gives none: nothing a bot can
    see (the clock, a counter, the default of 1) predicts it."""
    return secrets.randbits(SEED_BITS)


def game_seed(base_seed: int, round_no: int, combination: int, *, key: bytes | None) -> int:
    """The seed of one combination's games in one round: HMAC-SHA256 under the store's
    ``key``, so that neighbouring base seeds or rounds share no deals, it is the same on every
    machine (no ``hash()``), and a bot that knows or guesses the base seed learns nothing. It
    keeps 63 bits: with 32, a bot could find the seed that deals its hand by search. ``key``
    None is :func:`public_game_seed`, only for tournaments begun before stores kept a key."""
    if key is None:
        return public_game_seed(base_seed, round_no, combination)
    return keyed_seed(key, f"ttr-arena/tournament/{base_seed}/{round_no}/{combination}")


def public_game_seed(base_seed: int, round_no: int, combination: int) -> int:
    """The game seed of tournaments begun before stores kept a key: SHA-256 of the base seed,
    round and combination, which anyone can compute. Kept so that such a tournament, resumed,
    deals its remaining rotations as it dealt the first; never used for a new one, since a
    guessable base seed (``--seed 42``) gives away every deal through it."""
    digest = hashlib.sha256(f"ttr-arena/{base_seed}/{round_no}/{combination}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - SEED_BITS)


def games_in(entrants: int, players: int, rounds: int) -> int:
    """How many games :func:`build` schedules."""
    if entrants < players:
        return 0
    return rounds * math.comb(entrants, players) * players


def build(
    entrants: int,
    players: int,
    rounds: int,
    base_seed: int,
    tournament_id: int,
    *,
    key: bytes | None,
) -> list[ScheduledGame]:
    """Every game of the tournament, in order: round, then combination, then rotation; seeds
    from :func:`game_seed` under ``key`` (the store's, :meth:`Store.seed_key`)."""
    if players < 2:
        raise ValueError(f"a game needs at least 2 players, not {players}")
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, not {rounds}")
    if entrants < players:
        raise ValueError(
            f"{entrants} bot(s) cannot fill a {players}-player game: enter at least {players}"
        )
    games: list[ScheduledGame] = []
    for round_no in range(1, rounds + 1):
        for c, combo in enumerate(itertools.combinations(range(entrants), players)):
            seed = game_seed(base_seed, round_no, c, key=key)
            for rotation in range(players):
                games.append(
                    ScheduledGame(
                        index=len(games),
                        game_id=f"t{tournament_id}-r{round_no}-c{c}-s{rotation}",
                        round=round_no,
                        combination=c,
                        rotation=rotation,
                        seed=seed,
                        seats=combo[rotation:] + combo[:rotation],
                    )
                )
    return games
