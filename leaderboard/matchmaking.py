"""Who plays the ladder's next game: matchmaking, written once as a pure rule.

Why. A league night (leaderboard/schedule.py) plays every combination, which a ladder that
runs for weeks between dozens of submitted versions cannot: it plays one game at a time, and
each game should teach the ratings the most. Halite III's coordinator answers with two draws,
and this module follows its approach (not its code): a *seed* version that needs games, then
opponents of similar strength around it. A game between close ratings is the one whose result
is hardest to predict, so it tells the ratings the most, and it is the game an author wants to
watch; the seed draw keeps every version's share of games fair.

The rules, for one rating pool (one variant and seat count: the caller passes that pool's
versions; ratings never mix pools):

1. **Who may play.** A version that is ``active`` (entered and not retired) and not
   ``disabled`` (leaderboard/faults.py). A game needs versions of ``players`` different
   authors: never two versions of one author in a game, so that nobody's versions can help or
   block each other. Fewer authors than seats: no game, and :class:`NoMatch` says why.
2. **The seed.** Drawn with probability (:func:`seed_probabilities`)::

       p_i = (1 - u) * w_i / sum(w) + u / n
       w_i = (sigma_i / sigma_0) ** a / (1 + g_i - g_min) ** b

   ``g_i`` the version's games, ``g_min`` the fewest any playable version has, ``sigma_0``
   the initial sigma, ``n`` the playable versions; by default ``a = 1``, ``b = 2``,
   ``u = 0.1``. Few games (counted against the least-played version, so that the pull does
   not fade as every count grows) and a high sigma (a rating still unsure, as a new
   version's is) draw seeds; a version 1 game ahead of the least-played has a quarter of its
   weight, 3 games ahead a sixteenth. The uniform share ``u`` seeds every version now and
   then, whatever its count. A ladder that runs for weeks should count ``games`` over the
   pool's recent games (say its last few hundred), not all time: then a version entered late
   gets a burst of games until it has its share of the recent ones, instead of being pulled
   to catch up on the whole history (bench/matchmaking.py, ``--resubmit-at``).
3. **The window.** A size ``k = min(floor(window_min * X), window_max)`` with ``X`` Pareto
   distributed (``(1 - U) ** (-1 / window_tail)``, U uniform in [0, 1)): by default at least
   3, half the time at most 4, one time in eight 12 or more, up to 100. Mostly close
   neighbours, now and then a wide field, as Halite's heavy-tailed rank limit does, so that a
   version whose rating is off still meets the versions that would show it. The window is the
   ``k`` versions of *other* authors nearest the seed in mu (ties: lower version id first),
   widened to at least ``players - 1`` versions and until it holds ``players - 1`` different
   authors, so that a legal game is always found when one exists.
4. **The opponents.** Drawn from the window one by one, one version per author, each with
   the seed weight ``w_i`` (``weighted_opponents``, the default) or uniformly (Halite's way).
   Weighted, the versions in the middle of the ratings, which sit in most windows, stop
   collecting more games than those at the ends (bench/matchmaking.py, 300 4-player games
   of 12 versions, 20 seeds: max/min games per version 1.03 on average against 1.14
   uniformly, with games as close).
5. **The seats.** Seed and opponents in a shuffled seat order: the seed has no fixed seat.

Everything is a function of its arguments: the same candidates (in any order) and an rng in
the same state give the same match; nothing is read or written. A new version's starting
rating is :func:`initial_rating`: by default its author's latest mu, with sigma reset, so a
resubmission starts near its predecessor (opponents of its strength) but is seeded often
until its games have confirmed or moved it.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from leaderboard.ratings import MU, SIGMA


@dataclass(frozen=True, slots=True)
class Candidate:
    """One submitted version as matchmaking sees it, in one pool."""

    version: int  #: the version's id (the store's, unique in the pool); newer versions higher
    author: str  #: who submitted it: two versions of one author never meet in a game
    mu: float
    sigma: float
    #: games it has played in this pool (a long-running ladder: in the pool's recent games;
    #: rule 2 of the module doc says why)
    games: int
    active: bool = True  #: False: retired (by its author or the organiser), plays no more
    disabled: bool = False  #: True: disabled for its faults (leaderboard/faults.py)

    def __post_init__(self) -> None:
        if not (math.isfinite(self.mu) and math.isfinite(self.sigma) and self.sigma > 0):
            raise ValueError(f"version {self.version}: mu {self.mu}, sigma {self.sigma}")
        if self.games < 0:
            raise ValueError(f"version {self.version}: {self.games} games")

    @property
    def playable(self) -> bool:
        return self.active and not self.disabled


@dataclass(frozen=True, slots=True)
class MatchSettings:
    """The knobs of :func:`pick_match` and :func:`initial_rating` (the module doc says how
    each is used). The defaults keep a simulated ladder's games per version within about 5%
    of each other while most games are between neighbours in mu (bench/matchmaking.py)."""

    #: a in the seed weight: how much an unsure rating (high sigma) draws seeds
    sigma_exponent: float = 1.0
    #: b in the seed weight: how fast the pull falls with games above the least-played
    games_exponent: float = 2.0
    #: u: the share of seeds drawn uniformly among the playable versions
    uniform_seed_share: float = 0.1
    window_min: int = 3  #: the narrowest opponent window (versions nearest the seed in mu)
    window_max: int = 100  #: the widest window drawn
    #: the Pareto tail index of the window size: lower, wide windows more often
    window_tail: float = 1.5
    #: opponents drawn from the window with the seed weight (False: uniformly)
    weighted_opponents: bool = True
    #: a new version starts from its author's latest mu (False: from ``mu``, as a new author)
    inherit_mu: bool = True
    mu: float = MU  #: a new author's mu
    sigma: float = SIGMA  #: every new version's sigma, and sigma_0 in the seed weight

    def __post_init__(self) -> None:
        if self.sigma_exponent < 0 or self.games_exponent < 0:
            raise ValueError("the seed weight's exponents must be >= 0")
        if not 0 <= self.uniform_seed_share <= 1:
            raise ValueError(f"uniform_seed_share {self.uniform_seed_share} not in [0, 1]")
        if not 1 <= self.window_min <= self.window_max:
            raise ValueError(f"window bounds {self.window_min}..{self.window_max}")
        if self.window_tail <= 0:
            raise ValueError(f"window_tail {self.window_tail} must be > 0")
        if not (math.isfinite(self.mu) and math.isfinite(self.sigma) and self.sigma > 0):
            raise ValueError(f"initial rating mu {self.mu}, sigma {self.sigma}")


@dataclass(frozen=True, slots=True)
class Match:
    """A game to play: what :func:`draw_match` found, with how it found it (for the log)."""

    seats: tuple[int, ...]  #: version ids in seat order (seat 0 first)
    seed: int  #: the seed version's id
    window: int  #: the window size drawn (before widening for players or authors)


@dataclass(frozen=True, slots=True)
class NoMatch:
    """No legal game in the pool, and why in one line (for the organiser's log)."""

    reason: str

    def __bool__(self) -> bool:
        return False


def seed_probabilities(
    candidates: Iterable[Candidate], settings: MatchSettings | None = None
) -> dict[int, float]:
    """Each playable version's probability of being drawn as the seed (rule 2 of the module
    doc), by version id; they sum to 1. Empty when nothing is playable. Public so that the
    weights the docs state are the weights the draw uses, and the tests can measure them."""
    settings = settings or MatchSettings()
    playable = sorted((c for c in candidates if c.playable), key=lambda c: c.version)
    if not playable:
        return {}
    weights = _need(playable, settings)
    total = sum(weights)
    u, n = settings.uniform_seed_share, len(playable)
    return {c.version: (1 - u) * w / total + u / n for c, w in zip(playable, weights, strict=True)}


def draw_window(rng: random.Random, settings: MatchSettings) -> int:
    """The window size: ``window_min`` times a Pareto draw, capped at ``window_max`` (rule 3
    of the module doc), so most windows are narrow and a few are wide. One draw from ``rng``.
    """
    spread: float = (1.0 - rng.random()) ** (-1.0 / settings.window_tail)
    return min(math.floor(settings.window_min * spread), settings.window_max)


def draw_match(
    candidates: Iterable[Candidate],
    players: int,
    rng: random.Random,
    settings: MatchSettings | None = None,
) -> Match | NoMatch:
    """The next game of one pool (rules 1 to 5 of the module doc), or why there is none.

    ``candidates``: the pool's versions, in any order (the draw sorts them by version id, so
    the order a store returns them in changes nothing). Deterministic given ``rng``'s state.
    ``players`` below 2 or a version id given twice is the caller's mistake: ValueError.
    """
    settings = settings or MatchSettings()
    if players < 2:
        raise ValueError(f"a game needs at least 2 players, not {players}")
    everyone = sorted(candidates, key=lambda c: c.version)
    ids = [c.version for c in everyone]
    if len(set(ids)) != len(ids):
        raise ValueError(f"a version id is given twice: {ids}")
    playable = [c for c in everyone if c.playable]
    authors = {c.author for c in playable}
    if len(authors) < players:
        return NoMatch(_why_not(everyone, playable, len(authors), players))

    probabilities = seed_probabilities(playable, settings)
    (seed,) = rng.choices(playable, weights=[probabilities[c.version] for c in playable])
    window_size = draw_window(rng, settings)

    others = sorted(
        (c for c in playable if c.author != seed.author),
        key=lambda c: (abs(c.mu - seed.mu), c.version),
    )
    reach = min(max(window_size, players - 1), len(others))
    seen: set[str] = set()
    for position, candidate in enumerate(others):
        seen.add(candidate.author)
        if position + 1 >= reach and len(seen) >= players - 1:
            reach = position + 1
            break
    window = others[:reach]

    chosen = [seed]
    taken = {seed.author}
    if settings.weighted_opponents:
        need = dict(zip((c.version for c in playable), _need(playable, settings), strict=True))
        while len(chosen) < players:
            left = [c for c in window if c.author not in taken]
            (pick,) = rng.choices(left, weights=[need[c.version] for c in left])
            chosen.append(pick)
            taken.add(pick.author)
    else:
        for candidate in rng.sample(window, len(window)):
            if candidate.author not in taken:
                chosen.append(candidate)
                taken.add(candidate.author)
                if len(chosen) == players:
                    break
    rng.shuffle(chosen)
    return Match(seats=tuple(c.version for c in chosen), seed=seed.version, window=window_size)


def pick_match(
    candidates: Iterable[Candidate],
    players: int,
    rng: random.Random,
    settings: MatchSettings | None = None,
) -> tuple[int, ...] | None:
    """The next game's version ids in seat order, or None when the pool has no legal game
    (:func:`draw_match` gives the reason). The same draw, for a caller that needs no more."""
    match = draw_match(candidates, players, rng, settings)
    return match.seats if isinstance(match, Match) else None


def initial_rating(
    previous_versions_of_author: Iterable[Candidate], settings: MatchSettings | None = None
) -> tuple[float, float]:
    """(mu, sigma) for an author's new version in one pool.

    With ``inherit_mu`` (the default) mu is that of the author's latest version there (the
    highest version id: ids are handed out in submission order), so a small change starts
    where its predecessor stood and meets opponents of its strength, instead of climbing from
    the bottom through games that teach nobody anything. Sigma is always reset to the
    initial one: the new code may be better or worse, and the high sigma both lets its first
    games move it fast and draws seeds to it. A first version (or ``inherit_mu=False``) starts
    as a new author does. Versions of more than one author: ValueError (the caller's mix-up).
    """
    settings = settings or MatchSettings()
    previous = list(previous_versions_of_author)
    authors = {c.author for c in previous}
    if len(authors) > 1:
        raise ValueError(f"versions of several authors: {sorted(authors)}")
    if not settings.inherit_mu or not previous:
        return (settings.mu, settings.sigma)
    latest = max(previous, key=lambda c: c.version)
    return (latest.mu, settings.sigma)


def _need(playable: Sequence[Candidate], settings: MatchSettings) -> list[float]:
    """w_i of rule 2 for each of ``playable`` (not empty), unnormalised."""
    fewest = min(c.games for c in playable)
    return [
        (c.sigma / settings.sigma) ** settings.sigma_exponent
        / (1 + c.games - fewest) ** settings.games_exponent
        for c in playable
    ]


def _why_not(
    everyone: Sequence[Candidate], playable: Sequence[Candidate], authors: int, players: int
) -> str:
    """The one line :class:`NoMatch` carries: what is missing, and which versions sit out."""
    if not everyone:
        return f"the pool has no versions; a {players}-player game needs {players} authors"
    benched = []
    disabled = [c.version for c in everyone if c.disabled]
    retired = [c.version for c in everyone if not c.active and not c.disabled]
    if disabled:
        benched.append("disabled: " + ", ".join(map(str, disabled)))
    if retired:
        benched.append("retired: " + ", ".join(map(str, retired)))
    out = f" (sitting out, {'; '.join(benched)})" if benched else ""
    have = f"{authors} author{'s' if authors != 1 else ''}"
    return (
        f"a {players}-player game needs versions of {players} different authors; "
        f"{len(playable)} playable version{'s' if len(playable) != 1 else ''} of {have}{out}"
    )
