"""Games in-process: a :class:`~sdk.Bot` played and measured without processes or sockets.

::

    from sdk.local import evaluate, play_game
    from sdk.local import PlannerBot, RandomBot  # the sample bots, as classes

    record = play_game("usa", [MyBot(), RandomBot()], seed=1)   # a Record: ttr replay reads it
    print(evaluate(MyBot, [PlannerBot], variant="usa", games=40, workers=2))

Each bot is served by the SDK's own :class:`~sdk.bot.BotServicer`, the object ``sdk.run``
puts behind gRPC, and every request is the referee's: built by the family's wire functions
from ``view(state, seat)`` and the seat's projected events, serialised to bytes and parsed
back, the answer serialised and judged by :func:`referee.games.protocol.judge_bytes` (the
referee's judge). So the bot sees exactly what it would see over the wire, hidden
information stays hidden, and a bot that plays here plays the same over gRPC. What differs:
there is no clock (a slow bot is not timed out; each decision's time is still recorded), and a
bot that raises is a ``crash`` fault whose decision plays the safe default, as over the wire.

The record is the referee's (``referee.games.record``, the code ``referee.match`` writes with):
``ttr replay verify/show/view`` read it, and ``ttr_arena.notebook.Replay`` shows it in Jupyter.
"""

from __future__ import annotations

import json
import multiprocessing
import random
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

from referee.games.protocol import (
    DEFAULT_BANK_MS,
    DEFAULT_MOVE_MS,
    MAX_FAULTS_PER_DECISION,
    MAX_MESSAGE_CHARS,
    MAX_RULE_CHARS,
    bounded,
    judge_bytes,
)
from referee.games.record import Fault, action_entry, game_record, record_text
from referee.games.registry import AnyFamily, family_of, load
from sdk.bot import Bot, BotServicer, StrategyBot
from sdk.stats import wilson_interval as wilson_interval
from sdk.strategies.board import GreedyStrategy, PlannerStrategy, RandomStrategy
from sdk.strategies.card import CardGreedyStrategy, CardPlannerStrategy, CardRandomStrategy
from ttr.v1 import bot_service_pb2

__all__ = [
    "Evaluation",
    "GreedyBot",
    "PlannerBot",
    "RandomBot",
    "Record",
    "evaluate",
    "play_game",
    "wilson_interval",
]

#: the address a seat played in-process has in its record
LOCAL_ADDRESS = "in-process"


@dataclass(frozen=True, slots=True)
class Record:
    """One game's record (``ttr-record/1``, docs/records.md) as a dict in :attr:`data`."""

    data: dict[str, Any]

    @property
    def scores(self) -> list[int]:
        """Each seat's final total."""
        return [int(s["total"]) for s in self.data["outcome"]["seats"]]

    @property
    def ranks(self) -> list[int]:
        """Each seat's final rank (1 is first; ties share a rank)."""
        return [int(s["rank"]) for s in self.data["outcome"]["seats"]]

    @property
    def faults(self) -> list[dict[str, Any]]:
        faults: list[dict[str, Any]] = self.data["faults"]
        return faults

    def save(self, path: str | Path) -> Path:
        """Write the record to ``path`` (what ``ttr play --record`` writes)."""
        path = Path(path)
        path.write_text(record_text(self.data), encoding="utf-8")
        return path

    @classmethod
    def load(cls, path: str | Path) -> Record:
        return cls(json.loads(Path(path).read_text(encoding="utf-8")))


class RandomBot(StrategyBot):
    """The random sample bot (sample_bots/random) as a class: opponents for :func:`evaluate`."""

    def __init__(self) -> None:
        super().__init__(RandomStrategy, CardRandomStrategy)


class GreedyBot(StrategyBot):
    """The greedy sample bot (sample_bots/greedy) as a class."""

    def __init__(self) -> None:
        super().__init__(GreedyStrategy, CardGreedyStrategy)


class PlannerBot(StrategyBot):
    """The planner sample bot (sample_bots/planner) as a class."""

    def __init__(self) -> None:
        super().__init__(PlannerStrategy, CardPlannerStrategy)


class _Aborted(Exception):
    """What ``context.abort`` raises in-process (gRPC raises its own exception there)."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(details)
        self.code = code
        self.details = details


class _Context:
    """The part of ``grpc.ServicerContext`` that :class:`BotServicer` uses."""

    def abort(self, code: grpc.StatusCode, details: str) -> None:
        raise _Aborted(code, details)


def _bot_name(bot: Bot) -> str:
    return type(bot).__name__


def play_game(
    variant: str,
    bots: Sequence[Bot],
    seed: int | None = None,
    *,
    names: Sequence[str] | None = None,
    game_id: str | None = None,
    move_ms: int = DEFAULT_MOVE_MS,
    bank_ms: int = DEFAULT_BANK_MS,
) -> Record:
    """Play one game of ``variant`` (``"usa"``, ``"usa1910@1"``, ``"cardgame"``, ...) between
    ``bots`` (seat ``i`` is ``bots[i]``), dealt from ``seed`` (a random one when ``None``), and
    return its :class:`Record`. ``names`` label the seats in the record (default: each bot's
    class name). ``move_ms``/``bank_ms`` are the clock the bots are told of (not enforced)."""
    ruleset = load(variant)
    family = family_of(ruleset)
    if not ruleset.min_players <= len(bots) <= ruleset.max_players:
        raise ValueError(
            f"{ruleset.ident} is for {ruleset.min_players}-{ruleset.max_players} players, "
            f"not {len(bots)}"
        )
    if seed is None:
        seed = random.randrange(2**31)
    game_id = game_id or uuid.uuid4().hex
    labels = list(names) if names is not None else [_bot_name(b) for b in bots]
    servicers = [BotServicer(b) for b in bots]
    context: Any = _Context()
    faults: list[Fault] = []
    actions: list[dict[str, Any]] = []

    def fault(seat: int, decision: int, turn: int, kind: str, rule: str, msg: str) -> Fault:
        f = Fault(
            seat,
            decision,
            turn,
            kind,
            bounded(rule, MAX_RULE_CHARS),
            bounded(msg, MAX_MESSAGE_CHARS),
        )
        faults.append(f)
        return f

    started = time.time()
    state = family.new_game(ruleset, len(bots), seed)
    initial_events = state.events
    pending: list[list[Any]] = [
        [family.project(e, i) for e in initial_events] for i in range(len(bots))
    ]
    settings = bot_service_pb2.ClockSettings(move_limit_ms=move_ms, bank_ms=bank_ms)
    for i, servicer in enumerate(servicers):
        start = bot_service_pb2.StartGameRequest(
            game_id=game_id, variant=ruleset.ident, seat=i, num_seats=len(bots), clock=settings
        )
        family.fill_start_for_seat(start, ruleset, seed)
        try:
            servicer.StartGame(_wire(start), context)
        except _Aborted as e:
            fault(i, -1, 0, "start_game", e.code.name, e.details)
    decision = 0
    while not state.is_over:
        seat = state.seat
        legal = tuple(family.legal_actions(state))
        chosen, default, ms = _ask(
            family,
            servicers[seat],
            context,
            state,
            legal,
            pending,
            game_id,
            decision,
            (move_ms, bank_ms),
            fault,
        )
        if chosen is None:
            chosen = legal[0]  # the referee's safe default (referee.match.safe_default)
        new_state = family.apply(state, chosen)
        for i in range(len(bots)):
            pending[i].extend(family.project(e, i) for e in new_state.events)
        actions.append(action_entry(decision, state, chosen, default, ms, new_state))
        state = new_state
        decision += 1
    outcome = family.outcome(state)
    outcome_pb = family.outcome_to_pb(outcome)
    for i, servicer in enumerate(servicers):
        end = bot_service_pb2.EndGameRequest(
            game_id=game_id,
            outcome=outcome_pb,
            events=family.events_to_pb(pending[i]),
            view=family.view_to_pb(family.view(state, i)),
        )
        pending[i] = []
        try:
            servicer.EndGame(_wire(end), context)
        except _Aborted as e:
            fault(i, -1, state.turn, "end_game", e.code.name, e.details)
    return Record(
        game_record(
            game_id=game_id,
            ruleset_ident=ruleset.ident,
            seed=seed,
            clock=(move_ms, bank_ms),
            seats=[(name, "local", LOCAL_ADDRESS) for name in labels],
            started_at=started,
            finished_at=time.time(),
            initial_events=initial_events,
            actions=actions,
            faults=faults,
            outcome=outcome,
        )
    )


def _wire(message: Any) -> Any:
    """``message`` as the other side of a socket gets it: serialised and parsed again."""
    return type(message).FromString(message.SerializeToString())


def _ask(
    family: AnyFamily,
    servicer: BotServicer,
    context: Any,
    state: Any,
    legal: tuple[Any, ...],
    pending: list[list[Any]],
    game_id: str,
    decision: int,
    clock: tuple[int, int],
    fault: Callable[[int, int, int, str, str, str], Fault],
) -> tuple[Any, str | None, float]:
    """The seat's accepted action (or ``None``), why the default is played, and the ms it took:
    ``referee.match.Match._ask`` without the clock and the network."""
    seat = state.seat
    rejection: bot_service_pb2.Rejection | None = None
    start = time.monotonic()
    for attempt in range(MAX_FAULTS_PER_DECISION):
        request_id = f"{game_id}/{decision}/{attempt}"
        request = family.act_request_pb(
            family.view(state, seat),
            pending[seat],
            legal,
            game_id,
            request_id,
            bot_service_pb2.Clock(move_limit_ms=clock[0], bank_left_ms=clock[1]),
            rejection,
        )
        pending[seat] = []
        try:
            reply = servicer.Act(_wire(request), context)
        except _Aborted as e:
            fault(seat, decision, state.turn, "crash", e.code.name, e.details)
            return None, "crash", (time.monotonic() - start) * 1000.0
        verdict = judge_bytes(reply.SerializeToString(), request_id, legal, state, family)
        if verdict.accepted:
            return verdict.action, None, (time.monotonic() - start) * 1000.0
        f = fault(seat, decision, state.turn, "rejected", verdict.rule, verdict.message)
        rejection = bot_service_pb2.Rejection(rule=f.rule, message=f.message)
    return None, "faults", (time.monotonic() - start) * 1000.0


# ---------------------------------------------------------------------------------------------
# evaluate: many games on several cores

#: A bot class, or any picklable callable that makes a fresh bot (each game gets new ones).
BotFactory = Callable[[], Bot]


@dataclass(frozen=True, slots=True)
class Evaluation:
    """How a bot did over :attr:`games` games. A win is a first place (a shared one counts)."""

    wins: int
    games: int
    win_rate: float
    interval: tuple[float, float]  #: Wilson 95% interval of the win rate
    mean_score: float  #: the bot's mean final total
    mean_opponent_score: float  #: the mean final total of the other seats
    mean_rank: float
    faults: int  #: the bot's faults over all games
    seconds: float  #: wall time of the whole evaluation

    def __str__(self) -> str:
        lo, hi = self.interval
        return (
            f"{self.wins}/{self.games} wins ({self.win_rate:.0%}, 95% {lo:.0%}-{hi:.0%}), "
            f"mean score {self.mean_score:.1f} vs {self.mean_opponent_score:.1f}, "
            f"mean rank {self.mean_rank:.2f}, {self.faults} faults, {self.seconds:.1f} s"
        )


def _one(
    task: tuple[str, BotFactory, Sequence[BotFactory], int, int],
) -> tuple[int, int, float, int]:
    """One game of an evaluation: (rank, score, mean opponent score, faults) of the bot."""
    variant, bot, opponents, seed, seat = task
    factories = list(opponents)
    factories.insert(seat, bot)
    record = play_game(variant, [make() for make in factories], seed, game_id=f"eval-{seed}-{seat}")
    scores = record.scores
    others = [s for i, s in enumerate(scores) if i != seat]
    faults = sum(1 for f in record.faults if f["seat"] == seat)
    return record.ranks[seat], scores[seat], sum(others) / len(others), faults


def evaluate(
    bot: BotFactory,
    opponents: Sequence[BotFactory],
    variant: str = "usa",
    games: int = 100,
    workers: int = 1,
    seed: int = 0,
) -> Evaluation:
    """Play ``bot`` against ``opponents`` (one seat each) ``games`` times on ``workers``
    processes and say how it did. Bots are given as classes or factories, so every game makes
    fresh ones; game ``g`` is dealt from ``seed + g`` and puts the bot in seat
    ``g % seats``, so each seat is played equally often (with ``games`` a multiple of the seat
    count). ``workers > 1`` starts processes with ``spawn``: the factories must then be
    importable by name (defined in a module, not in a notebook cell)."""
    if games < 1:
        raise ValueError("games must be at least 1")
    seats = len(opponents) + 1
    tasks = [(variant, bot, tuple(opponents), seed + g, g % seats) for g in range(games)]
    began = time.monotonic()
    if workers <= 1:
        results = [_one(t) for t in tasks]
    else:
        with ProcessPoolExecutor(
            max_workers=workers, mp_context=multiprocessing.get_context("spawn")
        ) as pool:
            results = list(pool.map(_one, tasks, chunksize=max(1, games // (workers * 4))))
    wins = sum(1 for rank, *_ in results if rank == 1)
    return Evaluation(
        wins=wins,
        games=games,
        win_rate=wins / games,
        interval=wilson_interval(wins, games),
        mean_score=sum(r[1] for r in results) / games,
        mean_opponent_score=sum(r[2] for r in results) / games,
        mean_rank=sum(r[0] for r in results) / games,
        faults=sum(r[3] for r in results),
        seconds=time.monotonic() - began,
    )
