"""The round-robin schedule: which bots play which game, in which seats, with which deal.

Fairness is duplicate style (ARCHITECTURE.md, "Tournaments and leaderboard"): every
combination of ``players`` bots out of the entrants plays one game in each cyclic rotation of
its seating, and all rotations of a combination share one seed. Over the rotations each bot
of the combination sits in each seat once and plays each deal from each seat, so seat luck
(003:19 the first player; seat 0 here) and deal luck cancel within the combination.
``rounds`` repeats the whole round robin with fresh seeds.

The schedule is a pure function of (entrant count, players, rounds, base seed, tournament):
a resumed run rebuilds the same list, and a game's id names its slot, so a stored game is
recognised and never played twice.

Secrets. A bot that learns a game's seed knows every hand and the deck order, so seeds must
be unguessable: the base seed is drawn from the OS (:func:`secret_seed`) unless the organiser
gives one, and a game's seed is a 63-bit hash of it (nobody can search 2^63 deals for the one
matching their hand). The slot id here is the store's key only; bots are sent a fresh random
id per game (leaderboard/runner.py), since the slot would tell them round, combination and
rotation, and a validation game's id would set it apart.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import secrets
from dataclasses import dataclass


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


#: bits of every seed we draw or derive: beyond search, and within SQLite's signed INTEGER
SEED_BITS = 63


def secret_seed() -> int:
    """A seed from the OS's randomness, for when the organiser gives none: nothing a bot can
    see (the clock, a counter, the default of 1) predicts it."""
    return secrets.randbits(SEED_BITS)


def game_seed(base_seed: int, round_no: int, combination: int) -> int:
    """The seed of one combination's games in one round: a hash, so that neighbouring base
    seeds or rounds share no deals, and deterministic on every machine (no ``hash()``). It
    keeps 63 bits: with 32, a bot could find the seed that deals its hand by search."""
    digest = hashlib.sha256(f"ttr-arena/{base_seed}/{round_no}/{combination}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - SEED_BITS)


def games_in(entrants: int, players: int, rounds: int) -> int:
    """How many games :func:`build` schedules."""
    if entrants < players:
        return 0
    return rounds * math.comb(entrants, players) * players


def build(
    entrants: int, players: int, rounds: int, base_seed: int, tournament_id: int
) -> list[ScheduledGame]:
    """Every game of the tournament, in order: round, then combination, then rotation."""
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
            seed = game_seed(base_seed, round_no, c)
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
