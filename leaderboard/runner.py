"""Running a tournament: validation games, the schedule over worker processes, the store.

This module is the driver; what a worker does (keep bots alive, play a game, validate a bot,
the tasks and answers) is in leaderboard/worker.py, shared with the Ray actors of
leaderboard/cluster.py. The split keeps the worker free of driver code: imports point down
only (worker <- runner <- cluster), and a spawned worker process imports the worker alone.

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
and exit instead of lingering (``_ParentWatch`` in leaderboard/worker.py). A worker that dies
mid-game has its game handed to a fresh worker (once; a game that kills two workers is
reported as failed and left for ``--resume``).

Validation. Before a bot is entered it plays one game against copies of a sample bot; any
fault (it would not start, a timeout, a crash, a rejected answer) leaves it out, with the
reason reported and stored, and the tournament goes on with the others. The reason is whole:
the launcher's or the faults' account, the end of the bot's stderr, and where its whole output
is (``<records>/logs/validation-<bot id>/``).

Faults. Validation cannot catch a bot that behaves only while it is new. Every stored game
is counted by the tournament's fault rule (leaderboard/faults.py; by default a bot with faults
in 5 of its last 50 games): a bot over the line is disabled, with the reason stored and
reported, and each game of it not yet begun is skipped, whole (all its rotations), stored as
skipped and never played; games it is in as it is disabled finish and count, as do its
earlier ones. So no task is handed to a worker before one is free (``Crew.submit``): a task
still queued can be taken back. ``--resume`` keeps a disabled bot disabled and does not play
its skipped games.

Logs. Each bot's stdout and stderr in each game go to a file of their own,
``<records>/logs/<game id>/seat<N>-<bot>.log`` (capped per game by ``--log-kb``; what a bot
wrote as it started opens its first game's file), and the store keeps each seat's path.

Secrets. Bots never see a seed or a slot: every game, scheduled or validation, goes on the
wire under a fresh random id (the one :class:`Match` draws), validation seeds come from the
OS, and the entrant's seat in its validation game is drawn too, so the game looks like any
scheduled game of the same size. Scheduled game seeds derive from the base seed under the
store's secret key (:meth:`Store.seed_key`; schedule.py says why), fetched here in the
parent: the key never goes into a task, so no worker, Ray actor or bot holds it.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import multiprocessing
import os
import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.context import SpawnProcess
from pathlib import Path
from typing import Any, Protocol

from leaderboard import schedule as schedule_mod
from leaderboard.faults import FaultRule, FaultWatch, GameFaults
from leaderboard.ratings import Rating, rate_game
from leaderboard.store import (
    HEARTBEAT_S,
    BotRow,
    GameResult,
    SeatResult,
    Store,
    StoreError,
    Tournament,
    TournamentSpec,
)
from leaderboard.worker import (
    POLL_S,
    Answer,
    Entrant,
    Failed,
    Play,
    Settings,
    Task,
    Validate,
    Validation,
    worker_main,
)
from referee.games.registry import AnyRuleset, load
from referee.hosting import sandbox as sandbox_mod
from referee.hosting.build import BotBuildError, ensure_built
from referee.hosting.config import BotConfig, LaunchError, read_bot_config
from referee.hosting.folder import BotFolderError, content_hash
from referee.hosting.sandbox import SandboxConfig
from referee.hosting.seeds import exposed_by
from referee.match import fault_words

_MAX_STILLBORN = 3  #: workers dying before they are ready: then stop instead of respawning
#: A tournament's config ``seeds``: its game seeds derive under the store's key
#: (``schedule.game_seed``). Tournaments stored without it began before stores kept a key.
KEYED_SEEDS = "store-key"
DEFAULT_RULE = FaultRule()
_LADDER_STORE = (
    "{path} is a competition server's store (its season never finishes): tournaments need "
    "another --db; `ttr leaderboard show --db {path}` reads the ladder"
)  #: a bot faulting in 5 of its last 50 games is disabled


class TournamentError(Exception):
    """Something the organiser can fix (bad bot list, nothing to resume, ...); one line."""


# ---------------------------------------------------------------------------------------------
# the crew: where tasks play


class Crew(Protocol):
    """Where a run's tasks play: :class:`_Workers` (local processes, the default) or a Ray
    cluster's actors (``leaderboard.cluster.RayWorkers``); :func:`run` takes a factory."""

    def submit(self, tasks: Sequence[Task]) -> None:
        """Queue tasks; each is handed to a worker only once one is free, so that a task not
        yet begun can still be withdrawn."""
        ...

    def withdraw(self, which: Callable[[Task], bool]) -> list[Task]:
        """Take back the queued tasks ``which`` picks that no worker has begun (the games of
        a bot disabled meanwhile): they are not played, and :meth:`results` expects that
        many fewer answers."""
        ...

    def results(self, expected: int) -> Iterator[Answer]:
        """Answers as they come, ``expected`` of them less any withdrawn meanwhile; a task
        whose worker died is given to a new worker once, and answered ``Failed`` if that one
        dies too."""
        ...

    def close(self) -> None:
        """Stop every worker and its bots: after its current game, then by force."""
        ...


class _Workers:
    """The worker processes, the task queue and the bookkeeping that survives a dead worker.

    Tasks wait here, in :attr:`pending`, and go to the shared queue only as workers free up
    (one task per worker at a time): once in that queue a task cannot be taken back, and a
    bot disabled for its faults must be left out of every game not yet begun."""

    def __init__(self, count: int, settings: Settings) -> None:
        self.ctx = multiprocessing.get_context("spawn")  # no fork: the parent may hold gRPC
        self.settings = settings
        self.tasks: Any = self.ctx.Queue()
        self.answers: Any = self.ctx.Queue()
        self.stop: Any = self.ctx.Event()
        self.procs: dict[int, SpawnProcess] = {}
        self.in_flight: dict[int, Task] = {}  #: worker number -> the task it is on
        self.by_key: dict[str, Task] = {}
        self.pending: collections.deque[Task] = collections.deque()  #: not yet handed out
        self.handed = 0  #: tasks put in the queue and not answered yet
        self.withdrawn = 0  #: tasks taken back by :meth:`withdraw`, in all
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
            target=worker_main,
            args=(number, self.settings, self.tasks, self.answers, self.stop, os.getpid()),
            name=f"ttr-worker-{number}",
            daemon=True,
        )
        proc.start()
        self.procs[number] = proc

    def submit(self, tasks: Sequence[Task]) -> None:
        for task in tasks:
            self.by_key[task.key] = task
        self.pending.extend(tasks)
        self._dispatch()

    def _dispatch(self) -> None:
        """Hand out pending tasks while a worker is free of one."""
        while self.pending and self.handed < len(self.procs):
            self.tasks.put(self.pending.popleft())
            self.handed += 1

    def withdraw(self, which: Callable[[Task], bool]) -> list[Task]:
        taken = [task for task in self.pending if which(task)]
        if taken:
            self.pending = collections.deque(t for t in self.pending if not which(t))
            self.withdrawn += len(taken)
        return taken

    def results(self, expected: int) -> Iterator[Answer]:
        """Answers as they come, ``expected`` of them less any withdrawn meanwhile; a task
        whose worker died is given to a new worker once, and reported as failed if it dies
        again."""
        done = 0
        withdrawn_before = self.withdrawn
        while done + self.withdrawn - withdrawn_before < expected:
            self._dispatch()
            try:
                kind, number, payload = self.answers.get(timeout=POLL_S)
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
            self.handed -= 1
            self._dispatch()  # the worker plays on while the parent stores this answer
            done += 1
            yield payload

    def _reap(self) -> list[Failed]:
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
            self.handed -= 1
            if task.key in self.retried:
                failed.append(
                    Failed(task.key, f"its worker died twice (last exit code {proc.exitcode})")
                )
            else:
                self.retried.add(task.key)
                self.pending.appendleft(task)
        self._dispatch()
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


#: the local crew, for drivers other than :func:`run` (the competition ladder)
LocalWorkers = _Workers


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
    #: a bot disabled for its faults (leaderboard/faults.py), why, and how many of its games
    #: not yet begun were skipped for it (after the ``played`` of the game that decided it)
    disabled: Callable[[Entrant, str, int], None] = lambda e, why, skipped: None


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
    #: games of disabled bots left unplayed, by this run and before it (never counted as played)
    skipped: int = 0
    #: the bots disabled for their faults, by this run or before it, with why
    disabled: list[tuple[Entrant, str]] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return self.stored_before + self.played + self.skipped == self.total


class _Guard:
    """The fault rule (leaderboard/faults.py) applied to one run: each stored game's seats
    are counted; a bot that crosses the line is disabled (stored with its reason, told to the
    events), and its games not yet begun are withdrawn from the crew and stored as skipped.
    Games it is playing as it is disabled finish and count, as do its earlier ones. A resumed
    run reads who is disabled from the store and counts the stored games again, in the order
    they finished, so a verdict the killed run had no time to store is given now."""

    def __init__(
        self,
        store: Store,
        tid: int,
        rule: FaultRule | None,
        entrants: dict[int, Entrant],
        events: Events,
    ) -> None:
        self.store = store
        self.tid = tid
        self.entrants = entrants
        self.events = events
        self.reasons = {d.bot_id: d.reason for d in store.disabled(tid)}
        self.watch: FaultWatch[int] | None = None
        if rule is not None:
            self.watch = FaultWatch(rule, disabled=set(self.reasons))

    def barred(self, task: Task) -> bool:
        """Whether a task is a game with a disabled bot in it (to skip, whole)."""
        return isinstance(task, Play) and any(e.bot_id in self.reasons for e in task.seats)

    def catch_up(self, stored: Sequence[GameResult]) -> None:
        for game in sorted(stored, key=lambda g: (g.finished_at, g.game_id)):
            self.judge(game, None)

    def judge(self, game: GameResult, crew: Crew | None) -> int:
        """Count a newly stored game; disable whom it puts over the line and skip their games
        still in ``crew``. Returns the games skipped."""
        if self.watch is None:
            return 0
        skipped = 0
        for seat in game.seats:
            if seat.bot_id not in self.entrants:
                continue
            verdict = self.watch.add(seat.bot_id, _faults_of(game, seat))
            if verdict is None:
                continue
            self.store.disable(self.tid, seat.bot_id, verdict.game_id, verdict.reason)
            self.reasons[seat.bot_id] = verdict.reason
            taken = crew.withdraw(self.barred) if crew is not None else []
            skipped += self.skip(taken)
            self.events.disabled(self.entrants[seat.bot_id], verdict.reason, len(taken))
        return skipped

    def skip(self, tasks: Sequence[Task]) -> int:
        """Store games as skipped, each for the first disabled bot in it; how many."""
        by_bot: dict[int, list[tuple[str, int]]] = {}
        for task in tasks:
            assert isinstance(task, Play)
            bot = next(e.bot_id for e in task.seats if e.bot_id in self.reasons)
            by_bot.setdefault(bot, []).append((task.game.game_id, task.game.index))
        done = 0
        for bot, games in by_bot.items():
            why = f"{self.entrants[bot].label} is disabled: {self.reasons[bot]}"
            done += self.store.skip(self.tid, games, bot, why)
        return done

    def disabled(self) -> list[tuple[Entrant, str]]:
        return [(self.entrants[b], why) for b, why in self.reasons.items() if b in self.entrants]


#: a fault quoted in a reason is cut to this many characters (the store keeps it whole)
_FAULT_CHARS = 200


def _faults_of(game: GameResult, seat: SeatResult) -> GameFaults:
    """A stored seat as the fault rule counts it: its faults and the first in words."""
    first = next((f for f in game.faults if f.seat == seat.seat), None)
    words = "" if first is None else fault_words(first.kind, first.rule, first.message)
    if len(words) > _FAULT_CHARS:
        words = words[: _FAULT_CHARS - 1] + "…"
    return GameFaults(game.game_id, seat.faults, " ".join(words.split()))


def _rule_of(spec: TournamentSpec) -> FaultRule | None:
    """The tournament's fault rule; none for one begun without it (before it existed, or
    with ``--no-disable``): a resumed run keeps the settings it began with."""
    data = spec.config.get("faults")
    return None if data is None else FaultRule.from_json(data)


def _schedule_order(entrants: list[Entrant]) -> list[Entrant]:
    """The order entrant numbers refer to: by name, version and hash, whatever the order of
    the command line, so that a resumed run rebuilds the same schedule."""
    return sorted(entrants, key=lambda e: (e.name, e.version, e.content_hash))


def _load_entrants(
    store: Store,
    bot_dirs: Sequence[str],
    variant: str | None = None,
    sandbox: SandboxConfig | None = None,
) -> tuple[list[Entrant], dict[str, str]]:
    """Read each folder's bot.toml, build it, hash the folder and add the bot to the store; a
    bot whose bot.toml does not declare ``variant`` is refused. A bot whose build fails is
    still an entrant (it is left out before validation, :func:`run`): one broken entry does not
    stop the night. Returns the entrants and, by folder, why a build failed."""
    seen_paths: dict[str, str] = {}
    seen_names: dict[str, str] = {}
    loaded: list[tuple[BotConfig, str, str]] = []
    failed: dict[str, str] = {}
    for spec in bot_dirs:
        folder = Path(spec)
        if not folder.exists() and ":" in spec:
            raise TournamentError(
                f"{spec}: tournaments take bot folders; a bot running at an address cannot be "
                "hashed or restarted"
            )
        try:
            config = read_bot_config(folder)
        except LaunchError as e:
            raise TournamentError(str(e)) from None
        try:
            ensure_built(config, sandbox)  # jailed as the bots are
        except BotBuildError as e:
            failed[str(folder.resolve())] = e.summary
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
        try:
            digest = content_hash(folder)
        except BotFolderError as e:  # left out as a failed build is: the night goes on
            failed[path] = str(e)
            digest = "refused:" + path
        loaded.append((config, digest, path))
    entrants = [
        Entrant(
            store.add_bot(config.name, config.version, config.author, digest),
            path,
            config.name,
            config.version,
            digest,
        )
        for config, digest, path in loaded
    ]
    return entrants, failed


def _leave_out(
    store: Store,
    tid: int,
    entrants: Sequence[Entrant],
    failed: dict[str, str],
    status: dict[int, tuple[bool, str]],
    events: Events,
) -> None:
    """Enter each bot whose build failed or whose folder was refused as left out, with why,
    before validation: as a bot that will not start is, and the night goes on."""
    for e in entrants:
        why = failed.get(e.path)
        if why is not None and e.bot_id not in status:
            store.enter(tid, e.bot_id, e.path, False, why)
            status[e.bot_id] = (False, why)
            events.validated(Validation(e, False, why))


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
    faults: FaultRule | None = None,
) -> tuple[Tournament, list[Entrant], dict[str, str]]:
    unfinished = store.unfinished_tournament()
    if unfinished is not None and unfinished.spec.config.get("ladder"):
        raise TournamentError(_LADDER_STORE.format(path=store.path))
    if unfinished is not None:
        raise TournamentError(
            f"{store.path} holds an unfinished tournament (#{unfinished.tournament_id}, "
            f"{unfinished.spec.name}): finish it with --resume, give it up with "
            f"`ttr tournament abandon --db {store.path}`, or use another --db"
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
    entrants, failed = _load_entrants(store, bot_dirs, ruleset.name, sandbox)
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
            "seeds": KEYED_SEEDS,
            "faults": None if faults is None else faults.to_json(),
        },
    )
    return store.begin_tournament(spec), entrants, failed


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
    if tournament.spec.config.get("ladder"):
        raise TournamentError(_LADDER_STORE.format(path=store.path))
    rows = store.bots()
    entrants = []
    for entry in tournament.spec.config["bots"]:
        row: BotRow = rows[int(entry["bot_id"])]
        path = str(entry["path"])
        if not Path(path).is_dir():
            raise TournamentError(
                f"{path}: bot {row.name!r} of this tournament is gone; restore the folder to "
                f"finish it, or give it up with `ttr tournament abandon --db {store.path}`"
            )
        try:
            digest = content_hash(path)
        except BotFolderError as e:
            raise TournamentError(str(e)) from None
        if digest != row.content_hash:
            raise TournamentError(
                f"{path}: bot {row.name!r} changed since the tournament began; restore its "
                "files to finish this tournament, or give it up with "
                f"`ttr tournament abandon --db {store.path}` and start a new one"
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


def _keep_private(
    store: Store, records: str | None, folders: Sequence[str], sandbox: SandboxConfig | None
) -> None:
    """Refuse, before anything is stored, a store or records folder that jailed bots could
    read: the store holds the seed key (and with it every deal to come), the records every
    finished game's seed, which the other rotations of its combination share. They would be
    in reach inside a bot folder or a ``--read-only`` path."""
    jail = sandbox or SandboxConfig()
    if not jail.enabled:
        return  # unjailed bots can read anything the organiser can: trusted by definition
    readable = sandbox_mod.bot_readable(jail, folders)
    for what, path in (("results store", store.path), ("records folder", records)):
        exposed = None if path is None else exposed_by(Path(path), readable)
        if exposed is not None:
            raise TournamentError(
                f"{path}: the {what} is inside {exposed}, which the bots can read, and it "
                "holds the seeds of games still to be played; keep it elsewhere"
            )


def keyed_deals(tournament: Tournament) -> bool:
    """Whether the tournament's game seeds derive under its store's key. Those begun before
    stores kept a key are resumed with the public formula they began with: a rotation dealt
    otherwise than the rotations already played would not be duplicate play."""
    return tournament.spec.config.get("seeds") == KEYED_SEEDS


def _deal_key(store: Store, tournament: Tournament) -> bytes | None:
    """The key the tournament's game seeds derive under (None: the public formula of a
    tournament begun before keys). The same store gives the same key every time, so a
    resumed run deals exactly what it would have dealt had it not stopped."""
    return store.seed_key() if keyed_deals(tournament) else None


def _ruleset(variant: str) -> AnyRuleset:
    try:
        return load(variant)
    except ValueError as e:
        raise TournamentError(str(e)) from None


class _Heartbeat:
    """The run's sign of life in the store (:meth:`Store.beat`), so that the league page and
    ``ttr leaderboard show`` can tell a running tournament from a killed one. A thread of the
    parent beats every ``every`` seconds on a connection of its own: the run's loop can wait
    on one game or validation far longer than that. Each stored game beats too (in its own
    transaction, :meth:`Store.record_game`). :meth:`stop` ends the heartbeat, so a run that
    ends unfinished (failed games, an error, Ctrl-C) reads as stopped at once; only a killed
    parent leaves a heartbeat behind, and that one goes stale."""

    def __init__(self, store: Store, tournament_id: int, every: float = HEARTBEAT_S) -> None:
        self.store = store
        self.tournament_id = tournament_id
        self.every = every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="ttr-heartbeat", daemon=True)

    def start(self) -> _Heartbeat:
        self.store.beat(self.tournament_id)  # a resumed run is running from now on
        self._thread.start()
        return self

    def _beat(self) -> None:
        try:
            own = Store(self.store.path, create=False)
        except StoreError:
            return  # the file is gone: nothing to beat in, and the run will say so itself
        own.clock = self.store.clock
        with own:
            while not self._stop.wait(self.every):
                # A store locked past its timeout, or a full disk: this beat is lost, the
                # next one may not be (too many lost, and the run reads as stopped).
                with contextlib.suppress(sqlite3.Error):
                    own.beat(self.tournament_id)

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        # Failing here must not hide why the run ended; the heartbeat then goes stale.
        with contextlib.suppress(sqlite3.Error):
            self.store.end_heartbeat(self.tournament_id)


def _live_top(
    ratings: dict[int, Rating], entrants: dict[int, Entrant], n: int = 5
) -> list[tuple[Entrant, Rating]]:
    ranked = sorted(ratings.items(), key=lambda kv: (-kv[1].conservative, -kv[1].mu))
    return [(entrants[bot_id], rating) for bot_id, rating in ranked[:n] if bot_id in entrants]


def _play(
    store: Store,
    crew: Crew,
    pending: list[Play],
    stored: list[GameResult],
    guard: _Guard,
    outcome: Outcome,
    events: Events,
) -> None:
    """Play the pending games on ``crew``, storing each as it comes, with the live top of the
    tournament's games (``stored`` before this run, then these) and the fault rule."""
    live: dict[int, Rating] = {}
    for game in stored:
        live = rate_game(live, game)
    crew.submit(pending)
    for answer in crew.results(len(pending)):
        if isinstance(answer, Failed):
            outcome.failed.append((answer.key, answer.error))
            events.failed(answer.key, answer.error)
            continue
        assert isinstance(answer, GameResult)
        new = store.record_game(answer)
        if new:
            outcome.played += 1
        live = rate_game(live, answer)
        for s in answer.seats:
            if s.faults:
                events.faulty(answer, s, guard.entrants[s.bot_id])
        events.played(answer, _live_top(live, guard.entrants))
        if new:
            outcome.skipped += guard.judge(answer, crew)


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
    faults: FaultRule | None = DEFAULT_RULE,
) -> Outcome:
    """Run a tournament to the end (or, with ``resume``, the store's unfinished one) and
    return how it went. Raises :class:`TournamentError` for what the organiser must fix.
    ``base_seed`` None draws a secret one (kept in the store, shown once the tournament is
    finished). ``crews`` makes the workers from a count and the settings: local processes
    by default, a Ray cluster's with ``leaderboard.cluster.Cluster.crew``. ``faults`` is the
    rule that disables a bot faulting too often (leaderboard/faults.py), None for none; kept
    with the tournament (a resumed run judges by the one it began with)."""
    crews = crews or _Workers
    events = events or Events()
    failed: dict[str, str] = {}  #: why a build failed, by folder (a resumed run rebuilds)
    if resume:
        tournament, entrants = _resume(store, bot_dirs)
        _keep_private(
            store, tournament.spec.config.get("records"), [e.path for e in entrants], sandbox
        )
    else:
        _keep_private(store, records, bot_dirs, sandbox)
        tournament, entrants, failed = _begin(
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
            faults=faults,
        )
    tid = tournament.tournament_id
    heartbeat = _Heartbeat(store, tid).start()
    crew: Crew | None = None
    try:
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
        status = {row.bot_id: (accepted, reason) for row, _, accepted, reason in store.entries(tid)}
        _leave_out(store, tid, entrants, failed, status, events)
        unvalidated = [e for e in entrants if e.bot_id not in status]
        if unvalidated:
            crew = crews(max(1, min(workers, len(unvalidated))), settings)
            events.validating(len(unvalidated))
            crew.submit([Validate(e.path, e, schedule_mod.secret_seed()) for e in unvalidated])
            for answer in crew.results(len(unvalidated)):
                if isinstance(answer, Failed):
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
        games = schedule_mod.build(
            len(order),
            spec.players,
            spec.rounds,
            spec.base_seed,
            tid,
            key=_deal_key(store, tournament),
        )
        mine = store.games(variant=spec.variant, players=spec.players, tournament_id=tid)
        by_id = {e.bot_id: e for e in order}
        guard = _Guard(store, tid, _rule_of(spec), by_id, events)
        guard.catch_up(mine)
        done = {g.game_id for g in mine} | store.skipped_game_ids(tid)
        pending = [
            Play(g.game_id, tid, g, tuple(order[i] for i in g.seats))
            for g in games
            if g.game_id not in done
        ]
        guard.skip([p for p in pending if guard.barred(p)])  # a bot disabled before this run
        pending = [p for p in pending if not guard.barred(p)]
        outcome = Outcome(tournament, order, rejected, len(games), len(mine), 0)
        outcome.skipped = len(store.skipped_game_ids(tid))
        events.playing(len(games), outcome.stored_before + outcome.skipped)
        if pending:
            if crew is None:
                crew = crews(max(1, min(workers, len(pending))), settings)
            _play(store, crew, pending, mine, guard, outcome, events)
        outcome.disabled = guard.disabled()
        if outcome.complete:
            store.finish_tournament(tid)
            outcome.tournament = next(t for t in store.tournaments() if t.tournament_id == tid)
        return outcome
    finally:
        if crew is not None:
            crew.close()
        heartbeat.stop()
