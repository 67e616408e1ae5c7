"""When a bot version is disabled for faulting too often: the rule, written once.

Why. Validation (one game before a bot is entered) catches a bot that is broken; it cannot
catch one that behaves only while it is new: a bot that plays its first game properly and
then crashes, times out or answers illegally in every later game passes validation and then
costs every game it sits in. Its faults stay on its own seat (the referee plays its moves by
the safe default), so the others' results are sound, but the night is spent on its games and
its opponents play a puppet. Halite's answer, taken here: a version whose recent games fault
too often is disabled, left out of every later game, with the reason shown.

The rule. Among a bot's last :attr:`FaultRule.window` finished games (default 50), count the
games in which its seat had any fault (a timeout, a crash, a rejected answer, a lost
connection, a failed StartGame or EndGame: what ``referee.match`` records per seat). The bot
is disabled once that count reaches :meth:`FaultRule.threshold`: ``max(minimum,
ceil(rate * games counted))``, by default ``max(5, ceil(10% of up to 50))``, so at least 5
faulty games. A bot that times out once under load is never disabled; one that faults in
every second game is, after about ten.

The rule is pure (no store, no clock, no I/O): the tournament runner (leaderboard/runner.py)
feeds it the games of a night as they finish, and a ladder can feed it a version's games from
any source. :class:`FaultWatch` keeps the recent games of many bots and says who just crossed
the line.
"""

from __future__ import annotations

import collections
import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Generic, TypeVar

WINDOW = 50  #: games counted: a bot's most recent ones
RATE = 0.10  #: the share of them that may fault
MINIMUM = 5  #: the fewest faulty games that disable, however few games are counted


@dataclass(frozen=True, slots=True)
class GameFaults:
    """One finished game of one bot, as the rule sees it."""

    game_id: str
    faults: int = 0  #: the faults of the bot's seat in that game (0: a clean game)
    #: the first of them in words (``referee.match.fault_words``), quoted in the reason
    first: str = ""


@dataclass(frozen=True, slots=True)
class Verdict:
    """A bot crossed the line: after which game, and the figures that say why."""

    game_id: str  #: the game that made the count reach the threshold
    faulty: int  #: games with a fault among those counted
    counted: int  #: games counted (at most the window)
    last: str  #: the most recent fault in words

    @property
    def reason(self) -> str:
        """One line for the organiser and the bot's author."""
        last = f" (last: {self.last})" if self.last else ""
        return (
            f"disabled after game {self.game_id}: faulted in {self.faulty} of its last "
            f"{self.counted} games{last}"
        )


@dataclass(frozen=True, slots=True)
class FaultRule:
    """``window`` games counted, ``rate`` of them may fault, but never fewer than
    ``minimum`` faulty games disable (so that a short run of bad luck early on does not)."""

    window: int = WINDOW
    rate: float = RATE
    minimum: int = MINIMUM

    def __post_init__(self) -> None:
        if self.window < 1:
            raise ValueError(f"the fault window must be at least 1 game, not {self.window}")
        if not 0 < self.rate <= 1:
            raise ValueError(f"the fault rate must be above 0 and at most 1, not {self.rate}")
        if self.minimum < 1:
            raise ValueError(f"the fewest faulty games must be at least 1, not {self.minimum}")

    def threshold(self, counted: int) -> int:
        """Faulty games among ``counted`` that disable. The rate is read as the decimal
        the organiser wrote (0.1 is 1/10, not the float just above it), so that 10% of 30
        games is 3, not 4."""
        return max(self.minimum, math.ceil(Fraction(repr(self.rate)) * counted))

    def verdict(self, games: Sequence[GameFaults]) -> Verdict | None:
        """Whether a bot whose finished games are ``games`` (oldest first) is to be disabled
        now, judged on the last :attr:`window` of them; ``None`` if not."""
        counted = list(games)[-self.window :]
        faulty = [g for g in counted if g.faults > 0]
        if not counted or len(faulty) < self.threshold(len(counted)):
            return None
        return Verdict(counted[-1].game_id, len(faulty), len(counted), faulty[-1].first)

    def describe(self) -> str:
        """The rule in words, for help texts and summaries."""
        return (
            f"faulty in at least max({self.minimum}, {self.rate * 100:g}% of the games "
            f"counted) of its last {self.window} games"
        )

    def to_json(self) -> dict[str, float | int]:
        """As kept in a tournament's settings (a resumed run judges by the same rule)."""
        return {"window": self.window, "rate": self.rate, "minimum": self.minimum}

    @classmethod
    def from_json(cls, data: dict[str, float | int]) -> FaultRule:
        return cls(int(data["window"]), float(data["rate"]), int(data["minimum"]))


K = TypeVar("K", bound=Hashable)


@dataclass
class FaultWatch(Generic[K]):
    """The recent games of many bots (keyed by anything: a bot id, a version), judged by
    ``rule`` as each one is added. A bot is judged until it is disabled, then ignored: its
    verdict is given once."""

    rule: FaultRule
    disabled: set[K] = field(default_factory=set)
    _games: dict[K, collections.deque[GameFaults]] = field(default_factory=dict)

    def add(self, bot: K, game: GameFaults) -> Verdict | None:
        """Count ``game`` for ``bot``; its verdict if this game disables it."""
        if bot in self.disabled:
            return None
        recent = self._games.setdefault(bot, collections.deque(maxlen=self.rule.window))
        recent.append(game)
        verdict = self.rule.verdict(recent)
        if verdict is not None:
            self.disabled.add(bot)
            self._games.pop(bot, None)
        return verdict

    def add_all(self, games: Iterable[tuple[K, GameFaults]]) -> list[tuple[K, Verdict]]:
        """:meth:`add` for each (bot, game) in order; the verdicts given."""
        verdicts = []
        for bot, game in games:
            verdict = self.add(bot, game)
            if verdict is not None:
                verdicts.append((bot, verdict))
        return verdicts
