"""What one worker does: keep bots alive, play a game task, validate a bot.

Why a module of its own. A tournament has two halves: the driver (leaderboard/runner.py:
the schedule, ``--resume``, the store, the crew of workers, the progress events) and the
workers that play its tasks. Workers come in two kinds, local processes (the runner's, started
with ``spawn``, which import :func:`worker_main` from here) and Ray actors
(leaderboard/cluster.py), and both play with the same :class:`BotPool` and :func:`run_task`.
This module is that shared half, public for both; it imports neither the runner nor the
cluster (imports point down: worker <- runner <- cluster), so a worker loads no driver code.

Bots. A worker keeps its bots' processes alive across its games (ARCHITECTURE.md: bots are
started once per worker, not once per game; sandboxed, one per rotation a deal is played in,
:class:`BotPool`) and restarts a bot that died; a bot that cannot
be restarted plays its seats by the safe default (``SeatBot.down``), so a broken bot costs its
own games and never stalls the run. A local worker watches its parent: if it dies (SIGKILL),
the worker drops the game it is in, stops its bots and exits (:class:`_ParentWatch`).

Logs. Each bot's stdout and stderr in each game go to a file of their own,
``<records>/logs/<game id>/seat<N>-<bot>.log`` (capped per game by ``--log-kb``; what a bot
wrote as it started opens its first game's file), and each seat's result keeps its path.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import queue
import re
import secrets
import signal
import sys
import threading
import time
import traceback
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import grpc

from leaderboard import schedule as schedule_mod
from leaderboard.store import FaultRow, GameResult, SeatResult
from referee.games.protocol import printable
from referee.games.registry import AnyRuleset, family_of, load
from referee.hosting.config import LaunchError
from referee.hosting.launcher import LaunchedBot
from referee.hosting.sandbox import SandboxConfig
from referee.match import (
    Clock,
    Fault,
    GameStopped,
    Match,
    MatchResult,
    SeatBot,
    bot_channel,
)

ROOT = Path(__file__).resolve().parent.parent
#: the opponents of a validation game: copies of the random sample bot (fast and never faulty)
VALIDATION_BOT = ROOT / "sample_bots" / "random"
POLL_S = 0.5  #: how often a waiting worker checks that its parent is alive


@dataclass(frozen=True, slots=True)
class Entrant:
    """A bot entered in a tournament."""

    bot_id: int
    path: str  #: its folder, absolute
    name: str
    version: str
    content_hash: str

    @property
    def label(self) -> str:
        """``name version``, escaped: an entrant read from a store written before names were
        checked may hold control characters, and labels go to the terminal."""
        return printable(f"{self.name} {self.version}")


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything a worker needs; picklable (workers are spawned, not forked)."""

    variant: str  #: a variant name for referee.games.registry.load
    players: int
    move_ms: int
    bank_ms: int
    startup_s: float
    records: str | None  #: folder for game records, None for none
    validation_bot: str = str(VALIDATION_BOT)
    #: how bots are confined; not part of the stored tournament (a resumed run sets it anew)
    sandbox: SandboxConfig = field(default_factory=SandboxConfig)
    #: stop a bot no game of this worker has seated in this many games (0: keep every bot for
    #: the worker's life, as a tournament does). A ladder sets it: over weeks its workers meet
    #: versions that retire, and their processes would otherwise stay for good.
    idle_games: int = 0


# ---------------------------------------------------------------------------------------------
# tasks and answers between the parent and the workers


@dataclass(frozen=True, slots=True)
class Validate:
    key: str  #: the entrant's path (a ladder: any id unique among its tasks)
    entrant: Entrant
    seed: int  #: secret (``schedule.secret_seed``); never stored
    #: the ladder plays several pools on one crew: the variant and seat count of this game
    #: ("" and 0: the settings')
    variant: str = ""
    players: int = 0
    #: the folder of its logs under ``<records>/logs/`` ("": ``validation-<bot id>``)
    log_name: str = ""


@dataclass(frozen=True, slots=True)
class Play:
    key: str  #: the game id
    tournament_id: int
    game: schedule_mod.ScheduledGame
    seats: tuple[Entrant, ...]
    variant: str = ""  #: as :attr:`Validate.variant` ("": the settings')


Task = Validate | Play


@dataclass(frozen=True, slots=True)
class Validation:
    entrant: Entrant
    ok: bool
    reason: str  #: why it was left out ('' when ok)
    key: str = ""  #: the task's key
    log: str | None = None  #: the entrant's output in the game, where it was kept


@dataclass(frozen=True, slots=True)
class Failed:
    """A task that raised in the worker: an internal error, reported with its traceback."""

    key: str
    error: str


Answer = Validation | GameResult | Failed


# ---------------------------------------------------------------------------------------------
# the worker


Key = tuple[str, int]  #: a bot of the pool: (folder, copy)
Slot = tuple[str, int, int]  #: one of its processes: (folder, copy, slot)


class BotPool:
    """The bot processes of one worker, kept alive across games, restarted when found dead.

    Sandboxed, no process of a bot plays a deal twice: the schedule deals each combination's
    games alike in every rotation of the seats (duplicate style), so a process that remembered
    a deal would know the starting hand and tickets of a seat an opponent now holds, and the
    deck order it saw. So each bot has numbered processes (slots), and a game takes the
    lowest slot whose process has not seen its deal, starting a new slot when all have. A
    deal is dealt to at most as many games as the round robin has rotations, so a bot has at
    most that many slots on a worker (players x bots processes, fewer where other workers
    played some rotations), each started once per worker: no restart between deals. Each
    slot is a jail of its own (its own /tmp, IPC and network namespace, its folder read-only),
    so its siblings share nothing writable through which a deal could pass.

    Before a game is seated, :meth:`prestart` spawns every process its seats will need (a new
    slot, or the restart of a dead one) at once, so they start side by side rather than one
    after the other; the seat then takes its spawned process (a *spare*) once it serves. No
    process is started on speculation: a spare started in the background whenever a bot had
    fewer slots than a deal has games went unused as often as not, and its start cost more
    than a game's wait (bench/README.md, "Issue 25, second pass": 30-38 starts for a
    32-game night against 22, 280-299 games/min against 352).

    The referee's channel to each process is kept with it (:meth:`channel`, ``Match(channels=
    ...)``) and closed when the process is stopped or replaced, or when a game lost its
    connection (:meth:`drop_failed_channels`): a game on a new channel connects first, which
    cost a game's four StartGame calls 3 ms (bench/README.md, "Issue 25, third pass")."""

    def __init__(self, startup_s: float, sandbox: SandboxConfig, idle_games: int = 0) -> None:
        self.startup_s = startup_s
        self.sandbox = sandbox
        self.idle_games = idle_games
        self.games = 0  #: games seated so far (:meth:`trim`)
        self.last_game: dict[Slot, int] = {}  #: the game each process last sat in
        self.bots: dict[Slot, LaunchedBot] = {}
        #: the referee's channel to each live process (and the address it was opened to),
        #: opened at the process's first game
        self.channels: dict[Slot, tuple[str, grpc.Channel]] = {}
        self.deals: dict[Slot, set[int]] = {}  #: seeds each live process has seen
        #: the slot each bot was last seated from: the process of the game in play, which
        #: :meth:`log_to`, :meth:`take_lines`, :meth:`death` and :meth:`trim` mean
        self.seated: dict[Key, int] = {}
        self.spares: dict[Key, LaunchedBot] = {}  #: spawned, not yet serving
        self.stopping: list[threading.Thread] = []  #: replaced bots being stopped
        #: why a bot last failed to start, whole (with the end of its stderr): ``SeatBot.down``
        #: keeps one line for the fault record, a left-out bot's reason shows all of it
        self.start_errors: dict[Key, str] = {}

    @property
    def by_deal(self) -> bool:
        """Whether deals pick the process: sandboxed with ``fresh_per_deal``. Unsandboxed a
        bot could keep a deal in a file anyway, and ``--reuse-bots`` waives the guarantee."""
        return self.sandbox.enabled and self.sandbox.fresh_per_deal

    def seat(
        self,
        path: str,
        name: str,
        version: str,
        copy: int = 0,
        deal: int | None = None,
    ) -> SeatBot:
        """A running bot for ``path`` (``copy`` tells copies of one bot apart) whose process
        has not seen ``deal`` before (sandboxed), or a ``down`` seat naming why it could not
        be started: the process :meth:`prestart` spawned for it, else one started now."""
        key = (path, copy)
        slot = self._slot_for(path, copy, deal)
        self.seated[key] = slot
        where = (path, copy, slot)
        bot = self.bots.get(where)
        if self._alive(where):
            assert bot is not None
            if deal is not None and self.by_deal:
                self.deals[where].add(deal)
            return SeatBot(name, version, bot.address)
        if bot is not None:
            # It died (crashed in its last game, or was killed): start it afresh, with nothing
            # seen. The old one is stopped in the background (close() waits).
            self._drop_channel(where)
            self._stop_later(bot)
        self.deals[where] = {deal} if deal is not None and self.by_deal else set()
        bot = self._take_spare(key)
        if bot is None:
            bot = LaunchedBot(path, startup_s=self.startup_s, sandbox=self.sandbox)
            try:
                bot.start()
            except LaunchError as e:
                self.bots[where] = bot
                self.start_errors[key] = str(e)
                return SeatBot(name, version, "", down=str(e).splitlines()[0])
        self.bots[where] = bot
        return SeatBot(name, version, bot.address)

    def _slot_for(self, path: str, copy: int, deal: int | None) -> int:
        """The slot a game of ``deal`` seats this bot from: the lowest whose live process has
        not seen the deal (sandboxed by deal), else 0."""
        slot = 0
        if deal is not None and self.by_deal:
            # A dead process's deals die with it: its slot restarts with nothing seen.
            while deal in self.deals.get((path, copy, slot), ()) and self._alive(
                (path, copy, slot)
            ):
                slot += 1
        return slot

    def prestart(self, seats: Sequence[tuple[str, int]], deal: int | None = None) -> None:
        """Spawn, side by side, the process of each seat (folder, copy) that a game of
        ``deal`` would otherwise start in :meth:`seat` one after the other: a new slot, or a
        dead process's restart. :meth:`seat` then takes each once it serves."""
        for path, copy in seats:
            if not self._alive((path, copy, self._slot_for(path, copy, deal))):
                self._start_spare((path, copy), path)

    def _alive(self, where: Slot) -> bool:
        bot = self.bots.get(where)
        return bot is not None and bot.process is not None and bot.process.poll() is None

    def channel(self, path: str, copy: int = 0) -> grpc.Channel | None:
        """The referee's channel to the process of the game in play, kept across its games
        (``Match(channels=...)``); ``None`` if it has none (it could not be started)."""
        where = (path, copy, self.seated.get((path, copy), 0))
        bot = self.bots.get(where)
        if bot is None or not bot.address:
            return None
        kept = self.channels.get(where)
        if kept is not None and kept[0] == bot.address:
            return kept[1]
        self._drop_channel(where)  # (a replaced process is dropped with it; this is a guard)
        channel = bot_channel(bot.address)
        self.channels[where] = (bot.address, channel)
        return channel

    def drop_failed_channels(self, seated: Sequence[Key], faults: Sequence[Fault]) -> None:
        """Close the kept channel of each seat (``seated``: folder and copy, by seat) whose
        game lost its connection to the bot (a fault with the status UNAVAILABLE), so its
        next game connects afresh: gRPC fails every call on a channel that is waiting to
        reconnect, and backs off for up to two minutes, where a new channel connects at its
        first call."""
        for fault in faults:
            if fault.rule == "UNAVAILABLE" and 0 <= fault.seat < len(seated):
                path, copy = seated[fault.seat]
                self._drop_channel((path, copy, self.seated.get((path, copy), 0)))

    def _drop_channel(self, where: Slot) -> None:
        kept = self.channels.pop(where, None)
        if kept is not None:
            kept[1].close()

    def _stop_later(self, bot: LaunchedBot) -> None:
        stopping = threading.Thread(target=bot.stop, name=f"stop-{bot.name}", daemon=True)
        stopping.start()
        self.stopping = [t for t in self.stopping if t.is_alive()]
        self.stopping.append(stopping)

    def _start_spare(self, key: Key, path: str) -> None:
        """Spawn a spare for ``key`` now, on this thread (see ``LaunchedBot.spawn``); it gets
        ready while the game plays."""
        if key in self.spares:
            return
        spare = LaunchedBot(path, startup_s=self.startup_s, sandbox=self.sandbox)
        try:
            spare.spawn()
        except LaunchError:
            return  # the synchronous start, when one is needed, reports the error
        self.spares[key] = spare

    def _take_spare(self, key: Key) -> LaunchedBot | None:
        """The spare for ``key`` once it serves, or ``None`` if there is none or it failed
        (it is then stopped, and a synchronous start reports why)."""
        spare = self.spares.pop(key, None)
        if spare is None:
            return None
        try:
            spare.wait_ready()
        except LaunchError:
            return None
        return spare

    def _in_play(self, path: str, copy: int) -> LaunchedBot | None:
        return self.bots.get((path, copy, self.seated.get((path, copy), 0)))

    def trim(self, seated: Sequence[Key]) -> None:
        """Count a game whose bots are ``seated`` (folder, copy; each in the slot it was last
        seated from), and stop the processes no game has seated in ``idle_games`` games (with
        ``idle_games``; a later game of one starts it again)."""
        self.games += 1
        for path, copy in seated:
            self.last_game[(path, copy, self.seated.get((path, copy), 0))] = self.games
        if not self.idle_games:
            return
        for where, last in list(self.last_game.items()):
            if self.games - last < self.idle_games:
                continue
            del self.last_game[where]
            self.deals.pop(where, None)
            self._drop_channel(where)
            bot = self.bots.pop(where, None)
            if bot is not None:
                self._stop_later(bot)
            key = (where[0], where[1])
            if not any(s[:2] == key for s in self.bots):  # its last process: the bot is gone
                self.start_errors.pop(key, None)
                spare = self.spares.pop(key, None)
                if spare is not None:
                    self._stop_later(spare)

    def log_to(self, path: str, copy: int, log: Path | None) -> None:
        """Send the output of a running bot (the process of its game) to ``log`` from now on
        (one file per game)."""
        bot = self._in_play(path, copy)
        if bot is not None:
            bot.log_to(log)

    def end_logs(self) -> None:
        """Close every process's log file (a Ray actor sends them back after each task)."""
        for bot in self.bots.values():
            bot.log_to(None)

    def take_lines(self, path: str, copy: int = 0) -> list[str]:
        """What a bot of the pool wrote since it was last asked (``LaunchedBot.take_lines``),
        for the record's decisions."""
        bot = self._in_play(path, copy)
        return [] if bot is None else bot.take_lines()

    def stderr_note(self, path: str, copy: int = 0) -> str:
        """The end of a bot's stderr, quoted to follow a reason (``LaunchedBot.stderr_note``)."""
        bot = self._in_play(path, copy)
        return "" if bot is None else bot.stderr_note()

    def death(self, path: str, copy: int = 0) -> str:
        """Why a bot of the pool is not running ("" while it runs): for fault messages."""
        bot = self._in_play(path, copy)
        return "" if bot is None else bot.death()

    def close(self) -> None:
        for where in list(self.channels):
            self._drop_channel(where)
        for thread in self.stopping:
            thread.join()
        self.stopping.clear()
        for spare in self.spares.values():
            spare.stop()
        self.spares.clear()
        for bot in self.bots.values():
            bot.stop()
        self.bots.clear()


def _game_logs(settings: Settings, game_id: str, seats: Sequence[SeatBot]) -> list[Path | None]:
    """Where each seat's bot writes during a game: ``<records>/logs/<game id>/seat<N>-<bot>.log``
    (capped per game by the sandbox's ``log_kb``); nowhere when records are off."""
    if settings.records is None:
        return [None] * len(seats)
    folder = Path(settings.records) / "logs" / game_id
    return [
        folder / f"seat{i}-{re.sub(r'[^A-Za-z0-9_.-]+', '_', s.name)[:40]}.log"
        for i, s in enumerate(seats)
    ]


def _seat_results(
    result: MatchResult,
    bot_ids: Sequence[int],
    ruleset: AnyRuleset,
    logs: Sequence[Path | None],
) -> tuple[SeatResult, ...]:
    faults = result.fault_counts()
    ticket_counts = family_of(ruleset).ticket_counts
    return tuple(
        SeatResult(
            seat=s.seat,
            bot_id=bot_ids[s.seat],
            score=s.total,
            rank=s.rank,
            tickets_completed=ticket_counts(s)[0],
            tickets_failed=ticket_counts(s)[1],
            faults=faults[s.seat],
            defaults=result.defaults[s.seat],
            log_path=None if logs[s.seat] is None else str(logs[s.seat]),
        )
        for s in sorted(result.outcome.seats, key=lambda s: s.seat)
    )


def play_game(task: Play, settings: Settings, ruleset: AnyRuleset, pool: BotPool) -> GameResult:
    pool.prestart([(e.path, 0) for e in task.seats], deal=task.game.seed)
    seats = [
        pool.seat(
            e.path,
            e.name,
            e.version,
            deal=task.game.seed,
        )
        for e in task.seats
    ]
    pool.trim([(e.path, 0) for e in task.seats])
    logs = _game_logs(settings, task.game.game_id, seats)
    for e, log in zip(task.seats, logs, strict=True):
        pool.log_to(e.path, 0, log)
    record = (
        None if settings.records is None else Path(settings.records) / f"{task.game.game_id}.json"
    )
    started = time.time()
    # No game_id: Match draws a random one for the wire. The slot id stays the store's key
    # and the record's name; sent to bots, it would tell them where they are in the schedule.
    result = _play_pooled(
        pool, [(e.path, 0) for e in task.seats], ruleset, seats, task.game.seed, settings, record
    )
    return GameResult(
        game_id=task.game.game_id,
        tournament_id=task.tournament_id,
        schedule_index=task.game.index,
        round=task.game.round,
        variant=ruleset.ident,
        num_seats=len(seats),
        seed=task.game.seed,
        end_reason=result.outcome.end_reason,
        decisions=result.decisions,
        record_path=None if record is None else str(record),
        started_at=started,
        finished_at=time.time(),
        seats=_seat_results(result, [e.bot_id for e in task.seats], ruleset, logs),
        faults=tuple(
            FaultRow(f.seat, f.decision, f.turn, f.kind, f.rule, f.message) for f in result.faults
        ),
    )


def _play_pooled(
    pool: BotPool,
    paths: Sequence[Key],
    ruleset: AnyRuleset,
    seats: Sequence[SeatBot],
    seed: int,
    settings: Settings,
    record: Path | None = None,
) -> MatchResult:
    """One game between bots of ``pool`` (``paths``: each seat's folder and copy), as every
    game of a worker is played: the pool says why a seat's bot is down, hands over what it
    wrote and keeps its channel; the game stops early when the worker must
    (:class:`_ParentWatch`); a seat that lost its connection gets a new channel next time."""
    with _parent_watch.game():
        result = Match(
            ruleset,
            seats,
            seed,
            Clock(settings.move_ms, settings.bank_ms),
            record_path=record,
            diagnose=lambda i: pool.death(*paths[i]),
            lines=lambda i: pool.take_lines(*paths[i]),
            stop=_parent_watch.stop_requested,
            channels=lambda i: pool.channel(*paths[i]),
        ).run()
    pool.drop_failed_channels(paths, result.faults)
    return result


def validate_bot(
    task: Validate, settings: Settings, ruleset: AnyRuleset, pool: BotPool
) -> Validation:
    """One game: the entrant in a seat drawn at random, copies of the validation bot in the
    others. Passing means no fault of any kind in the entrant's seat. Id, seat, seed and clock
    are drawn as for a scheduled game, so that a bot cannot behave only when it is watched."""
    entrant = task.entrant
    players = task.players or settings.players
    log_name = task.log_name or f"validation-{entrant.bot_id}"
    pool.prestart([(entrant.path, 0), *((settings.validation_bot, i) for i in range(1, players))])
    hero = pool.seat(entrant.path, entrant.name, entrant.version)
    if hero.down:
        # What it wrote before failing goes to a log of its own; the reason quotes its end.
        [log] = _game_logs(settings, log_name, [hero])
        pool.log_to(entrant.path, 0, log)
        why = pool.start_errors.get((entrant.path, 0), hero.down)
        pool.trim([(entrant.path, 0)])
        return Validation(
            entrant,
            False,
            f"would not start: {why}" + _log_note(log),
            task.key,
            None if log is None else str(log),
        )
    others = [
        pool.seat(settings.validation_bot, "validation", "", copy=i) for i in range(1, players)
    ]
    if any(o.down for o in others):
        down = next(o.down for o in others if o.down)
        raise RuntimeError(f"the validation opponents would not start: {down}")
    seat = secrets.randbelow(players)
    seats = [*others[:seat], hero, *others[seat:]]
    paths = [(settings.validation_bot, i) for i in range(1, players)]
    paths.insert(seat, (entrant.path, 0))
    pool.trim(paths)
    logs = _game_logs(settings, log_name, seats)
    for (path, copy), log in zip(paths, logs, strict=True):
        pool.log_to(path, copy, log)
    result = _play_pooled(pool, paths, ruleset, seats, task.seed, settings)
    faults = [f for f in result.faults if f.seat == seat]
    if not faults and result.defaults[seat] == 0:
        return Validation(entrant, True, "", task.key, _str(logs[seat]))
    kinds: dict[str, int] = {}
    for f in faults:
        label = f"{f.kind} {f.rule}".strip()
        kinds[label] = kinds.get(label, 0) + 1
    summary = ", ".join(f"{k} x{n}" for k, n in sorted(kinds.items()))
    first = f"; first: {faults[0].message}" if faults else ""
    return Validation(
        entrant,
        False,
        f"{len(faults)} fault(s) in its validation game ({summary}){first}"
        + pool.stderr_note(entrant.path)
        + _log_note(logs[seat]),
        task.key,
        _str(logs[seat]),
    )


def _str(path: Path | None) -> str | None:
    return None if path is None else str(path)


def _log_note(log: Path | None) -> str:
    return "" if log is None else f"\n  (its whole output: {log})"


class _ParentWatch:
    """Cuts a worker's game short when its parent dies (Linux: PR_SET_PDEATHSIG) or the worker
    is told to stop (SIGTERM). Played out, the game's record would land over the record of the
    same slot, which the resumed run plays again (bots see random ids, so as another game), and
    its bots would take that run's CPU.

    In a game the signal only raises a flag, which the game loop reads before each decision
    (``Match(stop=...)``: at most one decision later, the bot's answer or its clock): an
    exception thrown into gRPC's code from a signal handler could leave a Play stream's call
    half torn down, and the channel's close then waited for it forever, a worker that never
    exited (tests/cli/test_server.py's SIGKILL test, under load). Outside a game (between
    tasks, starting bots, where an exception would leak the process being started) the task
    loop's ``getppid`` check ends the worker, its bots stopped, within ``POLL_S``."""

    def __init__(self) -> None:
        self.parent = 0  #: 0: not in a worker (a game played in-process is never cut short)
        self.in_game = False
        self.stopping = False  #: the game in play is to end before its next decision

    def watch(self, parent_pid: int) -> None:
        self.parent = parent_pid
        signal.signal(signal.SIGUSR1, self._parent_died)
        if sys.platform.startswith("linux"):
            with contextlib.suppress(OSError, AttributeError):
                ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGUSR1)  # PR_SET_PDEATHSIG

    def _parent_died(self, signum: int, frame: FrameType | None) -> None:
        self.stopping = True

    def terminate(self) -> None:
        """SIGTERM: end now, or, in a game, before its next decision."""
        self.stopping = True
        if not self.in_game:
            raise SystemExit(0)  # unwinds to the worker's ``finally``, which stops its bots

    def stop_requested(self) -> bool:
        return self.stopping

    @contextlib.contextmanager
    def game(self) -> Iterator[None]:
        if self.stopping or (self.parent and os.getppid() != self.parent):
            raise SystemExit(0)  # orphaned or stopped just before: do not begin
        self.in_game = True
        try:
            yield
        except GameStopped:
            raise SystemExit(0) from None  # the worker's ``finally`` stops its bots
        finally:
            self.in_game = False


_parent_watch = _ParentWatch()


def worker_main(
    number: int, settings: Settings, tasks: Any, answers: Any, stop: Any, parent_pid: int
) -> None:
    """A worker's life: take tasks until told to stop or orphaned, keeping bots alive.
    ``stop`` (an Event) ends it before its next task, however many are queued: an
    interrupted run does not wait for the rest of the schedule."""

    def on_term(signum: int, frame: FrameType | None) -> None:
        _parent_watch.terminate()  # unwinds to the ``finally`` that stops the bots

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    _parent_watch.watch(parent_pid)
    ruleset = load(settings.variant)
    pool = BotPool(settings.startup_s, settings.sandbox, settings.idle_games)
    answers.put(("ready", number, None))
    try:
        while not stop.is_set():
            if os.getppid() != parent_pid:
                return  # the parent was killed: nobody will read our answers
            try:
                task: Task | None = tasks.get(timeout=POLL_S)
            except queue.Empty:
                continue
            if task is None:
                return
            answers.put(("start", number, task.key))
            answers.put(("done", number, run_task(task, settings, ruleset, pool)))
    finally:
        pool.close()


@functools.cache
def _ruleset(variant: str) -> AnyRuleset:
    return load(variant)


def run_task(task: Task, settings: Settings, ruleset: AnyRuleset, pool: BotPool) -> Answer:
    """One task on a worker (a local process or a Ray actor: leaderboard/cluster.py); an
    exception is an internal error, answered with its traceback."""
    try:
        if task.variant:
            ruleset = _ruleset(task.variant)
        if isinstance(task, Play):
            return play_game(task, settings, ruleset, pool)
        return validate_bot(task, settings, ruleset, pool)
    except Exception:
        return Failed(task.key, traceback.format_exc(limit=8))
