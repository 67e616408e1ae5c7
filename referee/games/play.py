"""The one in-process game loop: a game of any family between policies, no processes, no
sockets.

Self-play, the sample strategies' matches, benchmarks and tests all play through
:func:`play`, so a game played in-process follows exactly the path a referee's game does
(``new_game``, then ``legal_actions``, the acting seat's ``view``, ``apply`` until the game
is over), written once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from referee.games.common.errors import RulesError
from referee.games.common.family import Family


class Playable(Protocol):
    """What the loop reads of a state, in every family."""

    @property
    def seat(self) -> int: ...

    @property
    def is_over(self) -> bool: ...


R = TypeVar("R")
S = TypeVar("S", bound=Playable)
A = TypeVar("A")
V = TypeVar("V")
O = TypeVar("O")  # noqa: E741
E = TypeVar("E")

#: A seat's player: (its view, the legal actions) -> one action. With ``views=False`` the view
#: is ``None`` (players that need none, such as uniformly random ones, cost nothing to show).
Policy = Callable[[Any, Sequence[Any]], Any]


class IllegalChoice(ValueError):
    """A policy chose an action the rules refuse: a broken player fails loudly, naming its
    seat and the rule, instead of being corrected silently."""


@dataclass(frozen=True, slots=True)
class Played(Generic[S, O]):
    final: S  #: the final state
    outcome: O  #: the family's outcome: ``seats[i].total`` and ``.rank`` in every family
    decisions: int  #: how many decisions were taken (each seat's, all together)


def play(
    family: Family[R, S, A, V, O, E],
    ruleset: R,
    policies: Sequence[Policy],
    seed: int,
    *,
    views: bool = True,
    names: Sequence[str] | None = None,
) -> Played[S, O]:
    """One game of ``ruleset`` dealt from ``seed``, seat ``i`` played by ``policies[i]``, each
    shown only its own ``view(state, seat)``. ``names`` label the seats in an
    :class:`IllegalChoice`. The engine judges every action (``apply`` refuses an illegal one
    naming the rule), so nothing here re-checks what it already does."""
    new_game, legal_actions, apply, view = (
        family.new_game,
        family.legal_actions,
        family.apply,
        family.view,
    )
    state = new_game(ruleset, len(policies), seed)
    decisions = 0
    while not state.is_over:
        seat = state.seat
        legal = legal_actions(state)
        action = policies[seat](view(state, seat) if views else None, legal)
        try:
            state = apply(state, action)
        except RulesError as e:
            who = f"seat {seat}" + (f" ({names[seat]})" if names else "")
            raise IllegalChoice(f"{who} chose illegal {action!r}: {e}") from e
        decisions += 1
    return Played(state, family.outcome(state), decisions)
