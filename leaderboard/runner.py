"""Running a tournament: validation games, the schedule over worker processes, the store.

Processes. The parent (``ttr tournament run``) owns the results store and is the only writer;
it sends tasks to ``workers`` worker processes and writes each finished game in its own
transaction as it arrives. Each worker keeps one process per bot alive across its games
(ARCHITECTURE.md: bots are started once per worker, not once per game) and restarts a bot that
died; a bot that cannot be restarted plays its seats by the safe default (``SeatBot.down``),
so a broken bot costs its own games and never stalls the run.

Kill safety. A game reaches the store only once finished, in one transaction, keyed by its
schedule slot (leaderboard/store.py). Killed at any moment, the run leaves every game either
stored or absent; ``--resume`` rebuilds the same schedule and plays the absent ones. Workers
watch their parent: if it dies (SIGKILL), they drop the game they are in, stop their bots
and exit instead of lingering (:class:`_ParentWatch`). A worker that dies mid-game has its
game handed to a fresh worker (once; a game that kills two workers is reported as failed
and left for ``--resume``).

Validation. Before a bot is entered it plays one game against copies of a sample bot; any
fault (it would not start, a timeout, a crash, a rejected answer) leaves it out, with the
reason reported and stored, and the tournament goes on with the others. The reason is whole:
the launcher's or the faults' account, the end of the bot's stderr, and where its whole output
is (``<records>/logs/validation-<bot id>/``).

Logs. Each bot's stdout and stderr in each game go to a file of their own,
``<records>/logs/<game id>/seat<N>-<bot>.log`` (capped per game by ``--log-kb``; what a bot
wrote as it started opens its first game's file), and the store keeps each seat's path.

Secrets. Bots never see a seed or a slot: every game, scheduled or validation, goes on the
wire under a fresh random id (the one :class:`Match` draws), validation seeds come from the
OS, and the entrant's seat in its validation game is drawn too, so the game looks like any
scheduled game of the same size (schedule.py says how game seeds are kept secret).
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import hashlib
import multiprocessing
import os
import queue
import re
import secrets
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.context import SpawnProcess
from pathlib import Path
from types import FrameType
from typing import Any, Protocol

from leaderboard import schedule as schedule_mod
from leaderboard.ratings import Rating, rate_game
from leaderboard.store import (
    BotRow,
    FaultRow,
    GameResult,
    SeatResult,
    Store,
    Tournament,
    TournamentSpec,
)
from referee.games.registry import AnyRuleset, family_of, load
from referee.hosting import sandbox as sandbox_mod
from referee.hosting.build import BUILD_FILES
from referee.hosting.config import BotConfig, LaunchError
from referee.hosting.launcher import LaunchedBot, load_bot_config
from referee.hosting.sandbox import SandboxConfig
from referee.match import Clock, Match, MatchResult, SeatBot

ROOT = Path(__file__).resolve().parent.parent
#: the opponents of a validation game: copies of the random sample bot (fast and never faulty)
VALIDATION_BOT = ROOT / "sample_bots" / "random"
#: folders and files that are not part of a bot's identity (caches, installed dependencies)
_HASH_SKIP_DIRS = frozenset(
    {"__pycache__", ".git", "node_modules", ".venv", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
)
_POLL_S = 0.5  #: how often a waiting worker checks that its parent is alive
_MAX_STILLBORN = 3  #: workers dying before they are ready: then stop instead of respawning


class TournamentError(Exception):
    """Something the organiser can fix (bad bot list, nothing to resume, ...); one line."""


def bot_content_hash(folder: str | Path) -> str:
    """SHA-256 over the bot folder's files (relative paths and bytes, in sorted order),
    skipping caches and installed dependencies. A bot whose files change is a new bot: its
    games and rating are kept apart from the old one's, and a resumed tournament refuses it."""
    digest = hashlib.sha256()
    for rel, path in bot_files(folder):
        digest.update(rel.encode() + b"\0")
        with contextlib.suppress(OSError):  # a file vanishing mid-walk: hash what is there
            digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def bot_files(folder: str | Path) -> list[tuple[str, Path]]:
    """The files that make a bot (relative path, path), sorted: what its content hash covers
    and what a cluster ships to its nodes (leaderboard/cluster.py)."""
    root = Path(folder)
    files: list[tuple[str, Path]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _HASH_SKIP_DIRS)
        for name in filenames:
            # the build's own stamp, log and lock change on every rebuild of the same sources
            if name.endswith(".pyc") or (Path(dirpath) == root and name in BUILD_FILES):
                continue
            path = Path(dirpath) / name
            files.append((path.relative_to(root).as_posix(), path))
    return sorted(files)


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
        return f"{self.name} {self.version}"


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


# ---------------------------------------------------------------------------------------------
# tasks and answers between the parent and the workers


@dataclass(frozen=True, slots=True)
class _Validate:
    key: str  #: the entrant's path
    entrant: Entrant
    seed: int  #: secret (``schedule.secret_seed``); never stored


@dataclass(frozen=True, slots=True)
class _Play:
    key: str  #: the game id
    tournament_id: int
    game: schedule_mod.ScheduledGame
    seats: tuple[Entrant, ...]


_Task = _Validate | _Play


@dataclass(frozen=True, slots=True)
class Validation:
    entrant: Entrant
    ok: bool
    reason: str  #: why it was left out ('' when ok)


@dataclass(frozen=True, slots=True)
class _Failed:
    """A task that raised in the worker: an internal error, reported with its traceback."""

    key: str
    error: str


_Answer = Validation | GameResult | _Failed


# ---------------------------------------------------------------------------------------------
# the worker


class _BotPool:
    """The bot processes of one worker, kept alive across games, restarted when found dead.

    Sandboxed, a bot is also restarted before a deal it has already played: the schedule
    deals each combination's games alike in every rotation of the seats (duplicate style), so
    a bot that remembered a deal would know the starting hand and tickets of a seat an
    opponent now holds, and the deck order it saw. A fresh process (and a fresh /tmp) has
    nothing to remember with.

    Those restarts would cost a bot start-up (some 0.2 s) per seat and game, so a sandboxed
    pool keeps one spare process per bot, started in the background while games run, and a
    restart takes the spare (bench/tournament.py measures the difference)."""

    def __init__(self, startup_s: float, sandbox: SandboxConfig) -> None:
        self.startup_s = startup_s
        self.sandbox = sandbox
        self.bots: dict[tuple[str, int], LaunchedBot] = {}
        self.deals: dict[tuple[str, int], set[int]] = {}  #: seeds each live process has seen
        self.spares: dict[tuple[str, int], LaunchedBot] = {}  #: spawned, not yet serving
        self.stopping: list[threading.Thread] = []  #: replaced bots being stopped
        #: why a bot last failed to start, whole (with the end of its stderr): ``SeatBot.down``
        #: keeps one line for the fault record, a left-out bot's reason shows all of it
        self.start_errors: dict[tuple[str, int], str] = {}

    def seat(
        self, path: str, name: str, version: str, copy: int = 0, deal: int | None = None
    ) -> SeatBot:
        """A running bot for ``path`` (``copy`` tells copies of one bot apart) that has not
        seen ``deal`` before (sandboxed), or a ``down`` seat naming why it could not be
        started."""
        key = (path, copy)
        bot = self.bots.get(key)
        seen = self.deals.setdefault(key, set())
        repeat = (
            deal is not None
            and deal in seen
            and self.sandbox.enabled
            and self.sandbox.fresh_per_deal
        )
        if deal is not None:
            seen.add(deal)
        if (
            bot is not None
            and bot.process is not None
            and bot.process.poll() is None
            and not repeat
        ):
            return SeatBot(name, version, bot.address)
        if bot is not None:
            # It died (crashed in its last game, or was killed), or it would remember this
            # deal: start it afresh. The old one is stopped in the background (close() waits).
            stopping = threading.Thread(target=bot.stop, name=f"stop-{bot.name}", daemon=True)
            stopping.start()
            self.stopping = [t for t in self.stopping if t.is_alive()]
            self.stopping.append(stopping)
        self.deals[key] = set() if deal is None else {deal}
        bot = self._take_spare(key)
        if bot is None:
            bot = LaunchedBot(path, startup_s=self.startup_s, sandbox=self.sandbox)
            try:
                bot.start()
            except LaunchError as e:
                self.bots[key] = bot
                self.start_errors[key] = str(e)
                return SeatBot(name, version, "", down=str(e).splitlines()[0])
        self.bots[key] = bot
        if self.sandbox.enabled and self.sandbox.fresh_per_deal:
            self._start_spare(key, path)
        return SeatBot(name, version, bot.address)

    def _start_spare(self, key: tuple[str, int], path: str) -> None:
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

    def _take_spare(self, key: tuple[str, int]) -> LaunchedBot | None:
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

    def log_to(self, path: str, copy: int, log: Path | None) -> None:
        """Send the output of a running bot to ``log`` from now on (one file per game)."""
        bot = self.bots.get((path, copy))
        if bot is not None:
            bot.log_to(log)

    def stderr_note(self, path: str, copy: int = 0) -> str:
        """The end of a bot's stderr, quoted to follow a reason (``LaunchedBot.stderr_note``)."""
        bot = self.bots.get((path, copy))
        return "" if bot is None else bot.stderr_note()

    def death(self, path: str, copy: int = 0) -> str:
        """Why a bot of the pool is not running ("" while it runs): for fault messages."""
        bot = self.bots.get((path, copy))
        return "" if bot is None else bot.death()

    def close(self) -> None:
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


def _play(task: _Play, settings: Settings, ruleset: AnyRuleset, pool: _BotPool) -> GameResult:
    seats = [pool.seat(e.path, e.name, e.version, deal=task.game.seed) for e in task.seats]
    logs = _game_logs(settings, task.game.game_id, seats)
    for e, log in zip(task.seats, logs, strict=True):
        pool.log_to(e.path, 0, log)
    record = (
        None if settings.records is None else Path(settings.records) / f"{task.game.game_id}.json"
    )
    started = time.time()
    # No game_id: Match draws a random one for the wire. The slot id stays the store's key
    # and the record's name; sent to bots, it would tell them where they are in the schedule.
    with _parent_watch.game():
        result = Match(
            ruleset,
            seats,
            task.game.seed,
            Clock(settings.move_ms, settings.bank_ms),
            record_path=record,
            diagnose=lambda seat: pool.death(task.seats[seat].path),
        ).run()
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


def _validate(
    task: _Validate, settings: Settings, ruleset: AnyRuleset, pool: _BotPool
) -> Validation:
    """One game: the entrant in a seat drawn at random, copies of the validation bot in the
    others. Passing means no fault of any kind in the entrant's seat. Id, seat, seed and clock
    are drawn as for a scheduled game, so that a bot cannot behave only when it is watched."""
    entrant = task.entrant
    hero = pool.seat(entrant.path, entrant.name, entrant.version)
    if hero.down:
        # What it wrote before failing goes to a log of its own; the reason quotes its end.
        [log] = _game_logs(settings, f"validation-{entrant.bot_id}", [hero])
        pool.log_to(entrant.path, 0, log)
        why = pool.start_errors.get((entrant.path, 0), hero.down)
        return Validation(entrant, False, f"would not start: {why}" + _log_note(log))
    others = [
        pool.seat(settings.validation_bot, "validation", "", copy=i)
        for i in range(1, settings.players)
    ]
    if any(o.down for o in others):
        down = next(o.down for o in others if o.down)
        raise RuntimeError(f"the validation opponents would not start: {down}")
    seat = secrets.randbelow(settings.players)
    seats = [*others[:seat], hero, *others[seat:]]
    paths = [(settings.validation_bot, i) for i in range(1, settings.players)]
    paths.insert(seat, (entrant.path, 0))
    logs = _game_logs(settings, f"validation-{entrant.bot_id}", seats)
    for (path, copy), log in zip(paths, logs, strict=True):
        pool.log_to(path, copy, log)
    with _parent_watch.game():
        result = Match(
            ruleset,
            seats,
            task.seed,
            Clock(settings.move_ms, settings.bank_ms),
            diagnose=lambda i: pool.death(*paths[i]),
        ).run()
    faults = [f for f in result.faults if f.seat == seat]
    if not faults and result.defaults[seat] == 0:
        return Validation(entrant, True, "")
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
    )


def _log_note(log: Path | None) -> str:
    return "" if log is None else f"\n  (its whole output: {log})"


class _ParentWatch:
    """Cuts a worker's game short when its parent dies (Linux: PR_SET_PDEATHSIG). Played out,
    the game's record would land over the record of the same slot, which the resumed run
    plays again (bots see random ids, so as another game), and its bots would take that run's
    CPU. Only a game is cut short: anywhere else (starting a bot, where an exception would
    leak the process being started) the task loop's ``getppid`` check ends the worker, its
    bots stopped, within ``_POLL_S``."""

    def __init__(self) -> None:
        self.parent = 0  #: 0: not in a worker (a game played in-process is never cut short)
        self.in_game = False

    def watch(self, parent_pid: int) -> None:
        self.parent = parent_pid
        signal.signal(signal.SIGUSR1, self._parent_died)
        if sys.platform.startswith("linux"):
            with contextlib.suppress(OSError, AttributeError):
                ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGUSR1)  # PR_SET_PDEATHSIG

    def _parent_died(self, signum: int, frame: FrameType | None) -> None:
        if self.in_game:
            raise SystemExit(0)  # unwinds to the worker's ``finally``, which stops its bots

    @contextlib.contextmanager
    def game(self) -> Iterator[None]:
        self.in_game = True
        try:
            if self.parent and os.getppid() != self.parent:
                raise SystemExit(0)  # orphaned just before: do not begin
            yield
        finally:
            self.in_game = False


_parent_watch = _ParentWatch()


def _worker_main(
    number: int, settings: Settings, tasks: Any, answers: Any, stop: Any, parent_pid: int
) -> None:
    """A worker's life: take tasks until told to stop or orphaned, keeping bots alive.
    ``stop`` (an Event) ends it before its next task, however many are queued: an
    interrupted run does not wait for the rest of the schedule."""

    def on_term(signum: int, frame: FrameType | None) -> None:
        raise SystemExit(0)  # unwinds to the ``finally`` that stops the bots

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    _parent_watch.watch(parent_pid)
    ruleset = load(settings.variant)
    pool = _BotPool(settings.startup_s, settings.sandbox)
    answers.put(("ready", number, None))
    try:
        while not stop.is_set():
            if os.getppid() != parent_pid:
                return  # the parent was killed: nobody will read our answers
            try:
                task: _Task | None = tasks.get(timeout=_POLL_S)
            except queue.Empty:
                continue
            if task is None:
                return
            answers.put(("start", number, task.key))
            answers.put(("done", number, _run_task(task, settings, ruleset, pool)))
    finally:
        pool.close()


def _run_task(task: _Task, settings: Settings, ruleset: AnyRuleset, pool: _BotPool) -> _Answer:
    """One task on a worker (a local process or a Ray actor: leaderboard/cluster.py); an
    exception is an internal error, answered with its traceback."""
    try:
        if isinstance(task, _Play):
            return _play(task, settings, ruleset, pool)
        return _validate(task, settings, ruleset, pool)
    except Exception:
        return _Failed(task.key, traceback.format_exc(limit=8))


class Crew(Protocol):
    """Where a run's tasks play: :class:`_Workers` (local processes, the default) or a Ray
    cluster's actors (``leaderboard.cluster.RayWorkers``); :func:`run` takes a factory."""

    def submit(self, tasks: Sequence[_Task]) -> None: ...

    def results(self, expected: int) -> Iterator[_Answer]:
        """Answers as they come, ``expected`` of them; a task whose worker died is given to
        a new worker once, and answered ``_Failed`` if that one dies too."""
        ...

    def close(self) -> None:
        """Stop every worker and its bots: after its current game, then by force."""
        ...


class _Workers:
    """The worker processes, the task queue and the bookkeeping that survives a dead worker."""

    def __init__(self, count: int, settings: Settings) -> None:
        self.ctx = multiprocessing.get_context("spawn")  # no fork: the parent may hold gRPC
        self.settings = settings
        self.tasks: Any = self.ctx.Queue()
        self.answers: Any = self.ctx.Queue()
        self.stop: Any = self.ctx.Event()
        self.procs: dict[int, SpawnProcess] = {}
        self.in_flight: dict[int, _Task] = {}  #: worker number -> the task it is on
        self.by_key: dict[str, _Task] = {}
        self.retried: set[str] = set()
        self.ready: set[int] = set()
        self.stillborn = 0  #: workers that died before they were ready
        self.next_number = 0
        for _ in range(count):
            self._spawn()

    def _spawn(self) -> None:
        number = self.next_number
        self.next_number += 1
        proc = self.ctx.Process(
            target=_worker_main,
            args=(number, self.settings, self.tasks, self.answers, self.stop, os.getpid()),
            name=f"ttr-worker-{number}",
            daemon=True,
        )
        proc.start()
        self.procs[number] = proc

    def submit(self, tasks: Sequence[_Task]) -> None:
        for task in tasks:
            self.by_key[task.key] = task
            self.tasks.put(task)

    def results(self, expected: int) -> Iterator[_Answer]:
        """Answers as they come, ``expected`` of them; a task whose worker died is given to a
        new worker once, and reported as failed if it dies again."""
        done = 0
        while done < expected:
            try:
                kind, number, payload = self.answers.get(timeout=_POLL_S)
            except queue.Empty:
                for failed in self._reap():
                    done += 1
                    yield failed
                continue
            if kind == "ready":
                self.ready.add(number)
                continue
            if kind == "start":
                self.in_flight[number] = self.by_key[payload]
                continue
            self.in_flight.pop(number, None)
            done += 1
            yield payload

    def _reap(self) -> list[_Failed]:
        failed = []
        for number, proc in list(self.procs.items()):
            if proc.is_alive():
                continue
            del self.procs[number]
            if number not in self.ready:
                self.stillborn += 1
                if self.stillborn >= _MAX_STILLBORN:
                    raise TournamentError(
                        f"worker processes exit as they start (exit code {proc.exitcode}); "
                        "a script that runs a tournament must guard its code with "
                        "`if __name__ == '__main__':` (workers are spawned)"
                    )
            task = self.in_flight.pop(number, None)
            self._spawn()
            if task is None:
                continue
            if task.key in self.retried:
                failed.append(
                    _Failed(task.key, f"its worker died twice (last exit code {proc.exitcode})")
                )
            else:
                self.retried.add(task.key)
                self.tasks.put(task)
        return failed

    def close(self, timeout: float = 10.0) -> None:
        """Stop every worker (each stops its bots): after its current game, then by force."""
        self.stop.set()
        for _ in self.procs:
            self.tasks.put(None)
        deadline = time.monotonic() + timeout
        for proc in self.procs.values():
            proc.join(max(0.0, deadline - time.monotonic()))
        for proc in self.procs.values():
            if proc.is_alive():
                proc.terminate()  # SIGTERM: the worker still stops its bots
        for proc in self.procs.values():
            proc.join(5.0)
            if proc.is_alive():
                proc.kill()
        self.procs.clear()
        self.tasks.close()
        self.answers.close()


# ---------------------------------------------------------------------------------------------
# the parent


@dataclass
class Events:
    """What the run reports as it goes (the CLI draws the progress display from these)."""

    #: the tournament begun or resumed, before anything else (outputs name it)
    begun: Callable[[Tournament], None] = lambda t: None
    validating: Callable[[int], None] = lambda total: None
    validated: Callable[[Validation], None] = lambda v: None
    playing: Callable[[int, int], None] = lambda total, done: None  #: games in all, done before
    played: Callable[[GameResult, list[tuple[Entrant, Rating]]], None] = lambda g, top: None
    failed: Callable[[str, str], None] = lambda key, error: None
    #: a stored game's seat that had faults, with its bot (the seat's ``log_path`` says where
    #: to look), before that game's ``played``
    faulty: Callable[[GameResult, SeatResult, Entrant], None] = lambda g, s, e: None


@dataclass
class Outcome:
    """How a run ended."""

    tournament: Tournament
    entrants: list[Entrant]  #: accepted, in schedule order
    rejected: list[Validation]
    total: int  #: games in the schedule
    stored_before: int  #: games already stored when this run started (resume)
    played: int  #: games played and stored by this run
    failed: list[tuple[str, str]] = field(default_factory=list)  #: (game id, error)

    @property
    def complete(self) -> bool:
        return self.stored_before + self.played == self.total


def _schedule_order(entrants: list[Entrant]) -> list[Entrant]:
    """The order entrant numbers refer to: by name, version and hash, whatever the order of
    the command line, so that a resumed run rebuilds the same schedule."""
    return sorted(entrants, key=lambda e: (e.name, e.version, e.content_hash))


def _load_entrants(
    store: Store,
    bot_dirs: Sequence[str],
    variant: str | None = None,
    sandbox: SandboxConfig | None = None,
) -> list[Entrant]:
    """Read each folder's bot.toml, hash the folder and add the bot to the store; a bot whose
    bot.toml does not declare ``variant`` is refused."""
    seen_paths: dict[str, str] = {}
    seen_names: dict[str, str] = {}
    loaded: list[tuple[BotConfig, str, str]] = []
    for spec in bot_dirs:
        folder = Path(spec)
        if not folder.exists() and ":" in spec:
            raise TournamentError(
                f"{spec}: tournaments take bot folders; a bot running at an address cannot be "
                "hashed or restarted"
            )
        try:
            config = load_bot_config(folder, sandbox)  # its build jailed as the bots are
        except LaunchError as e:
            raise TournamentError(str(e)) from None
        refusal = config.refusal(variant) if variant is not None else None
        if refusal is not None:
            raise TournamentError(refusal)
        path = str(folder.resolve())
        if path in seen_paths:
            raise TournamentError(f"{spec}: the same bot folder is entered twice")
        if config.name in seen_names:
            raise TournamentError(
                f"two bots are named {config.name!r} ({seen_names[config.name]} and {spec}): "
                "give each its own name in bot.toml"
            )
        seen_paths[path] = spec
        seen_names[config.name] = spec
        loaded.append((config, bot_content_hash(folder), path))
    return [
        Entrant(
            store.add_bot(config.name, config.version, config.author, digest),
            path,
            config.name,
            config.version,
            digest,
        )
        for config, digest, path in loaded
    ]


def _settings_of(spec: TournamentSpec) -> Settings:
    c = spec.config
    return Settings(
        variant=str(c["variant_name"]),
        players=spec.players,
        move_ms=int(c["move_ms"]),
        bank_ms=int(c["bank_ms"]),
        startup_s=float(c["startup_s"]),
        records=c.get("records"),
    )


def _begin(
    store: Store,
    bot_dirs: Sequence[str],
    *,
    variant: str,
    players: int,
    rounds: int,
    base_seed: int,
    move_ms: int,
    bank_ms: int,
    startup_s: float,
    records: str | None,
    name: str,
    sandbox: SandboxConfig | None = None,
) -> tuple[Tournament, list[Entrant]]:
    unfinished = store.unfinished_tournament()
    if unfinished is not None:
        raise TournamentError(
            f"{store.path} holds an unfinished tournament (#{unfinished.tournament_id}, "
            f"{unfinished.spec.name}): finish it with --resume, or use another --db"
        )
    ruleset = _ruleset(variant)
    if not ruleset.min_players <= players <= ruleset.max_players:
        raise TournamentError(
            f"{ruleset.name} is for {ruleset.min_players}-{ruleset.max_players} players, "
            f"not {players}"
        )
    if rounds < 1:
        raise TournamentError(f"--rounds must be at least 1, not {rounds}")
    if records is not None:
        _check_writable(Path(records))
    entrants = _load_entrants(store, bot_dirs, ruleset.name, sandbox)
    if len(entrants) < players:
        raise TournamentError(
            f"{len(entrants)} bot(s) entered; {players}-player games need at least {players}"
        )
    spec = TournamentSpec(
        name=name or time.strftime("league %Y-%m-%d %H:%M"),
        variant=ruleset.ident,
        players=players,
        rounds=rounds,
        base_seed=base_seed,
        config={
            "variant_name": ruleset.name,
            "move_ms": move_ms,
            "bank_ms": bank_ms,
            "startup_s": startup_s,
            # absolute, so that --resume from another folder writes to the same place
            "records": None if records is None else str(Path(records).resolve()),
            "bots": [{"bot_id": e.bot_id, "path": e.path} for e in entrants],
        },
    )
    return store.begin_tournament(spec), entrants


def _check_writable(folder: Path) -> None:
    """Fail before the first game, not in every game, when records cannot be written."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as e:
        raise TournamentError(
            f"{folder}: cannot write game records there ({e.strerror or e})"
        ) from None


def _resume(store: Store, bot_dirs: Sequence[str]) -> tuple[Tournament, list[Entrant]]:
    tournament = store.unfinished_tournament()
    if tournament is None:
        raise TournamentError(f"{store.path} has no unfinished tournament to resume")
    rows = store.bots()
    entrants = []
    for entry in tournament.spec.config["bots"]:
        row: BotRow = rows[int(entry["bot_id"])]
        path = str(entry["path"])
        if not Path(path).is_dir():
            raise TournamentError(f"{path}: bot {row.name!r} of this tournament is gone")
        if bot_content_hash(path) != row.content_hash:
            raise TournamentError(
                f"{path}: bot {row.name!r} changed since the tournament began; restore its "
                "files to finish this tournament, or start a new one"
            )
        entrants.append(Entrant(row.bot_id, path, row.name, row.version, row.content_hash))
    records = tournament.spec.config.get("records")
    if records is not None:
        _check_writable(Path(records))
    if bot_dirs:
        given = {str(Path(d).resolve()) for d in bot_dirs}
        if given != {e.path for e in entrants}:
            raise TournamentError(
                "--resume finishes the tournament with the bots it began with; leave out the "
                "bot folders, or give exactly those: " + " ".join(e.path for e in entrants)
            )
    return tournament, entrants


def _ruleset(variant: str) -> AnyRuleset:
    try:
        return load(variant)
    except ValueError as e:
        raise TournamentError(str(e)) from None


def _live_top(
    ratings: dict[int, Rating], entrants: dict[int, Entrant], n: int = 5
) -> list[tuple[Entrant, Rating]]:
    ranked = sorted(ratings.items(), key=lambda kv: (-kv[1].conservative, -kv[1].mu))
    return [(entrants[bot_id], rating) for bot_id, rating in ranked[:n] if bot_id in entrants]


def run(
    store: Store,
    *,
    bot_dirs: Sequence[str],
    variant: str = "usa",
    players: int = 4,
    rounds: int = 1,
    base_seed: int | None = None,
    workers: int = 2,
    resume: bool = False,
    move_ms: int = 1000,
    bank_ms: int = 60_000,
    startup_s: float = 10.0,
    records: str | None = None,
    name: str = "",
    events: Events | None = None,
    sandbox: SandboxConfig | None = None,
    crews: Callable[[int, Settings], Crew] | None = None,
) -> Outcome:
    """Run a tournament to the end (or, with ``resume``, the store's unfinished one) and
    return how it went. Raises :class:`TournamentError` for what the organiser must fix.
    ``base_seed`` None draws a secret one (kept in the store, shown once the tournament is
    finished). ``crews`` makes the workers from a count and the settings: local processes
    by default, a Ray cluster's with ``leaderboard.cluster.Cluster.crew``."""
    crews = crews or _Workers
    events = events or Events()
    if resume:
        tournament, entrants = _resume(store, bot_dirs)
    else:
        tournament, entrants = _begin(
            store,
            bot_dirs,
            variant=variant,
            players=players,
            rounds=rounds,
            base_seed=schedule_mod.secret_seed() if base_seed is None else base_seed,
            move_ms=move_ms,
            bank_ms=bank_ms,
            startup_s=startup_s,
            records=records,
            name=name,
            sandbox=sandbox,
        )
    events.begun(tournament)
    spec = tournament.spec
    settings = dataclasses.replace(_settings_of(spec), sandbox=sandbox or SandboxConfig())
    if settings.sandbox.enabled:
        reason = sandbox_mod.unavailable_reason()
        if reason is not None:
            raise TournamentError(
                f"cannot sandbox the bots: {reason}; fix that, or pass --no-sandbox "
                "(only for bots you trust)"
            )
    tid = tournament.tournament_id
    crew: Crew | None = None
    try:
        status = {row.bot_id: (accepted, reason) for row, _, accepted, reason in store.entries(tid)}
        unvalidated = [e for e in entrants if e.bot_id not in status]
        if unvalidated:
            crew = crews(max(1, min(workers, len(unvalidated))), settings)
            events.validating(len(unvalidated))
            crew.submit([_Validate(e.path, e, schedule_mod.secret_seed()) for e in unvalidated])
            for answer in crew.results(len(unvalidated)):
                if isinstance(answer, _Failed):
                    raise TournamentError(f"validating {answer.key} failed:\n{answer.error}")
                assert isinstance(answer, Validation)
                e = answer.entrant
                store.enter(tid, e.bot_id, e.path, answer.ok, answer.reason)
                status[e.bot_id] = (answer.ok, answer.reason)
                events.validated(answer)
        order = _schedule_order([e for e in entrants if status[e.bot_id][0]])
        rejected = [
            Validation(e, False, status[e.bot_id][1]) for e in entrants if not status[e.bot_id][0]
        ]
        if len(order) < spec.players:
            store.finish_tournament(tid)
            raise TournamentError(
                f"only {len(order)} bot(s) passed validation; {spec.players}-player games "
                f"need at least {spec.players}"
            )
        games = schedule_mod.build(len(order), spec.players, spec.rounds, spec.base_seed, tid)
        stored = store.finished_game_ids(tid)
        pending = [
            _Play(g.game_id, tid, g, tuple(order[i] for i in g.seats))
            for g in games
            if g.game_id not in stored
        ]
        outcome = Outcome(tournament, order, rejected, len(games), len(games) - len(pending), 0)
        events.playing(len(games), outcome.stored_before)
        if pending:
            if crew is None:
                crew = crews(max(1, min(workers, len(pending))), settings)
            by_id = {e.bot_id: e for e in order}
            live: dict[int, Rating] = {}
            for game in store.games(variant=spec.variant, players=spec.players):
                if game.tournament_id == tid:
                    live = rate_game(live, game)
            crew.submit(pending)
            for answer in crew.results(len(pending)):
                if isinstance(answer, _Failed):
                    outcome.failed.append((answer.key, answer.error))
                    events.failed(answer.key, answer.error)
                    continue
                assert isinstance(answer, GameResult)
                if store.record_game(answer):
                    outcome.played += 1
                live = rate_game(live, answer)
                for s in answer.seats:
                    if s.faults:
                        events.faulty(answer, s, by_id[s.bot_id])
                events.played(answer, _live_top(live, by_id))
        if outcome.complete:
            store.finish_tournament(tid)
            outcome.tournament = next(t for t in store.tournaments() if t.tournament_id == tid)
        return outcome
    finally:
        if crew is not None:
            crew.close()
