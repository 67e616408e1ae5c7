"""What a rules family is to everything around it: one typed record per family.

The referee loop, records and replay, self-play, the SDK, tournaments and the pages are written
once against :class:`Family` and never ask which game they run. Each family package builds its
own record in its ``family.py`` (``referee.games.board.family.BOARD``,
``referee.games.card.family.CARD``) from its engine, its wire codec (both halves: the referee's
encoders and the bot's decoders) and its presentation (score columns, breakdown, text
describer); ``referee.games.registry`` lists them. A third family is a third package with its
own ``family.py`` and one more line in the registry.

The record is generic in the family's own types (ruleset, state, action, view, outcome, event),
so mypy checks that each family's functions fit together where the record is built, and a
reader can follow any call from the referee into an engine: ``BOARD.apply`` *is*
``referee.games.board.engine.apply``. Code above the games holds an ``AnyFamily`` and passes
those values between one family's functions without looking inside them.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeAlias, TypeVar, overload

if TYPE_CHECKING:
    from referee.games.common.describe import Describer
    from ttr.v1 import actions_pb2, bot_service_pb2, events_pb2, scoring_pb2, view_pb2

R = TypeVar("R")  #: the family's ruleset
S = TypeVar("S")  #: its game state
A = TypeVar("A")  #: its actions
V = TypeVar("V")  #: a seat's view
O = TypeVar("O")  #: the outcome  # noqa: E741
E = TypeVar("E")  #: its events

A_co = TypeVar("A_co", covariant=True)

#: A score-table column: its header and the cell of one seat's score.
Column = tuple[str, Callable[[Any], str]]


class LegalActions(Sequence[A_co]):
    """The legal actions of a request as the SDK hands them to a bot, each read from its
    message when first used: many bots look at a few of them (a random bot at one), and
    reading all of them on every decision was most of the SDK's time per request
    (bench/wire.py). An action this version cannot read raises ``MalformedActionError`` when
    it is used, not before. Each family's wire module subclasses it with its decoder
    (``_read``, a memo of serialized action -> action) and its ``position``."""

    __slots__ = ("_actions", "_msgs")

    def __init__(self, msgs: Sequence[actions_pb2.Action]) -> None:
        self._msgs = msgs
        self._actions: list[A_co | None] = [None] * len(msgs)

    @staticmethod
    @abstractmethod
    def _read(data: bytes) -> Any: ...

    def __len__(self) -> int:
        return len(self._actions)

    @overload
    def __getitem__(self, index: int) -> A_co: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[A_co, ...]: ...

    def __getitem__(self, index: int | slice) -> A_co | tuple[A_co, ...]:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self))))
        action = self._actions[index]
        if action is None:
            action = self._actions[index] = self._read(self._msgs[index].SerializeToString())
        return action

    def __iter__(self) -> Iterator[A_co]:
        for i in range(len(self._actions)):
            yield self[i]

    @abstractmethod
    def position(self, action: Any) -> int: ...

    def __repr__(self) -> str:
        return f"LegalActions({list(self)!r})"


@dataclass(frozen=True, slots=True)
class Family(Generic[R, S, A, V, O, E]):
    """One rules family: its engine's pure functions, both halves of its wire codec, and how its
    scores read. Every field is the family's own function, typed in its own values."""

    name: str  #: "board" or "card": what records, bots (``Game.family``) and pages call it
    ruleset_type: type[R]  #: what :func:`referee.games.registry.family_of` recognises
    variants: Callable[[], tuple[str, ...]]
    load: Callable[[str], R]  #: a variant name to its ruleset (``RulesetError`` if unknown)

    # the engine
    new_game: Callable[[R, int, int], S]  #: (ruleset, seats, seed) -> state
    legal_actions: Callable[[S], Sequence[A]]
    apply: Callable[[S, A], S]
    view: Callable[[S, int], V]
    outcome: Callable[[S], O]
    project: Callable[[E, int], E]  #: (event, seat) -> what that seat may see of it
    #: the action classes a record may name, by class name
    action_types: Mapping[str, type[Any]]

    # the referee's half of the wire
    fill_start: Callable[[bot_service_pb2.StartGameRequest, R], None]
    view_to_pb: Callable[[V], view_pb2.SeatView]
    events_to_pb: Callable[[Iterable[E]], list[events_pb2.Event]]
    outcome_to_pb: Callable[[O], scoring_pb2.Outcome]
    action_from_pb: Callable[[actions_pb2.Action], A]  #: ``MalformedActionError`` naming the rule
    #: (view, events, legal, game_id, request_id, clock, rejection) -> ActRequest
    act_request_pb: Callable[..., bot_service_pb2.ActRequest]

    # the bot's half of the wire (the SDK)
    starts: Callable[[bot_service_pb2.StartGameRequest], bool]  #: is this StartGame ours?
    ruleset_from_start: Callable[[bot_service_pb2.StartGameRequest], R]
    view_from_pb: Callable[[view_pb2.SeatView], V]
    legal_from_pb: Callable[[Sequence[actions_pb2.Action]], LegalActions[A]]
    events_from_pb: Callable[[Iterable[events_pb2.Event]], list[E]]
    outcome_from_pb: Callable[[scoring_pb2.Outcome], O]
    action_to_pb: Callable[[A], actions_pb2.Action]
    is_action: Callable[[object], bool]  #: whether a bot's ``choose`` returned one of ours

    # how its scores and games read
    #: score-table columns between "total" and the end, for a ruleset (``ttr play``)
    columns: Callable[[R], list[Column]]
    #: one seat's score components for ``--json`` output, for (ruleset, seat score)
    breakdown: Callable[[R, Any], dict[str, object]]
    #: (completed, failed) ticket counts of one seat's score: the store keeps both
    ticket_counts: Callable[[Any], tuple[int, int]]
    #: (ruleset, seat names) -> the text describer of its events and views (``ttr replay``)
    describer: Callable[[R, Sequence[str]], Describer]

    def fill_start_for_seat(
        self, request: bot_service_pb2.StartGameRequest, ruleset: R, seed: int
    ) -> None:
        """What StartGame carries beyond its id, seat, seats and clock: the ruleset's static
        facts and the seat's ``bot_seed``, derived one way from the game seed (never the seed
        itself: it orders the decks)."""
        from referee.games.common.codec import bot_seed

        self.fill_start(request, ruleset)
        request.bot_seed = bot_seed(seed, request.seat)


#: a family of any game, as the code above the games holds it
AnyFamily: TypeAlias = Family[Any, Any, Any, Any, Any, Any]
