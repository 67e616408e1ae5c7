"""The ladder: submissions in, builds, validation games, matchmaking, games, ratings; forever.

Why one object. A competition server has one writer of results and one place that decides
what plays next; :class:`Ladder` is both, and the web layer reaches it only through
:class:`leaderboard.ladder.model.Backend` (which it implements). Three kinds of threads touch
it: the HTTP app's (``submit`` and the read methods, each with a store connection of its own),
the build threads (``builds`` of the season at once, each build in the jail), and the ladder
thread (:meth:`Ladder._run`), the only one that records games, validations and state changes
that follow from them.

The data folder::

    season.db        the results store (a tournament for the season; leaderboard/ladder/store.py)
    versions/        each version's files exactly as uploaded, by author and content hash
    builds/<bot id>/ a copy of them that was built (and that the bot runs from)
    uploads/         uploads being unpacked (a kill leaves debris here: cleared at start)
    records/         game records and every seat's log (``records/logs/<game id>/``)
    server.lock      held while a server runs on the folder: one writer

Kill safety (SIGKILL at any moment, then start again). An upload is unpacked in ``uploads/``
and renamed into ``versions/`` before its row is committed, so a committed version always has
its files; files without a row (killed in between) are removed at start, and the uploader,
who got no answer, sends again. A build runs in a fresh copy in ``builds/``: a build cut short
is queued again and redone from the uploaded files; a validation cut short is played again. A
game is recorded once finished, in one transaction, under a random id; a game cut short was
never recorded (its record file, if the kill came after the game wrote it, is removed at
start), so no game is counted twice and none that was counted is lost. Ratings, recent games
and the fault watch are rebuilt from the stored games at start, so matchmaking goes on where
it stopped.

Builds. A version stays ``queued`` until a build slot is free for it (``builds`` of the
season at once); the next to start is the fairest (:meth:`LadderStore.build_queue`: an author
with fewer builds in the last day first), so one author's ten uploads take turns with everyone
else's. Each build has the season's ``build_timeout_s``; :meth:`Ladder.stop` cancels the builds
running (their jails killed at once) and a build cut short is queued again at the next start.

The machine's faults. A full disk (SQLite's ``database or disk is full``, ``ENOSPC`` on a
record, a log, a build's copy) pauses the ladder instead of ending it: the games in progress
are cut short (never recorded), the version a build or validation was for is left as it was
(built or validated again once the ladder goes on: the machine's fault is never the
author's), uploads are refused with :class:`~leaderboard.ladder.model.DiskFull` (507), and
every :data:`RETRY_S` the ladder tries a write; once one succeeds it goes on where it
stopped, as after a restart. Any other error ends the ladder thread, and ``on_death`` is told
(``ttr server run`` then exits non-zero with the reason, for a supervisor to start it again):
a server must never go on answering while its ladder no longer plays.

The season. The store keeps the season a start ran (:meth:`LadderStore.save_season`); a start
that changes its pools or clocks is refused unless it says ``reconfigure``
(leaderboard/ladder/season.py, ``season_changes``), and :func:`stored_season` is what a start
without a season file runs.

Games are ordered as they are recorded: the store's ``schedule_index`` of a ladder game is
its position in the order results came in, so the ratings recomputed from the store (the
league page, ``ttr leaderboard show``) step through the games in the order the ladder rated
them, and agree with it.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import errno
import fcntl
import os
import queue
import random
import re
import secrets
import shutil
import sqlite3
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from leaderboard import schedule as schedule_mod
from leaderboard.faults import FaultWatch, GameFaults
from leaderboard.ladder.model import (
    PAUSED,
    RUNNING,
    STOPPED,
    Author,
    AuthorGame,
    DiskFull,
    PoolStanding,
    SeasonInfo,
    SubmissionError,
    Submitted,
    ValidationGame,
    VersionInfo,
)
from leaderboard.ladder.season import Pool, Season, season_changes
from leaderboard.ladder.store import DAY_S, LadderStore, VersionRow
from leaderboard.matchmaking import Candidate, Match, draw_match, initial_rating
from leaderboard.ratings import Rating, rate_game, rate_games, starting_ratings
from leaderboard.runner import Crew, LocalWorkers
from leaderboard.store import GameResult, StoreError
from leaderboard.worker import Entrant, Failed, Play, Settings, Task, Validate, Validation
from referee.games.protocol import printable
from referee.hosting.build import LOG as BUILD_LOG
from referee.hosting.build import BotBuildError, ensure_built
from referee.hosting.config import LaunchError, read_bot_config
from referee.hosting.folder import BotFolderError, entries
from referee.hosting.sandbox import SandboxConfig
from referee.hosting.upload import unpack
from referee.match import fault_words

BUILD_LOG_BYTES = 256 << 10  #: the most of a build log an author is shown (its end)
#: a worker stops a bot it has not seated in this many games (``Settings.idle_games``): the
#: processes of retired and disabled versions go, active ones meet often enough to stay
IDLE_GAMES = 200
IDLE_S = 0.5  #: how often an idle ladder looks for work (a submission wakes it at once)
_LOG_NOTE = re.compile(r"\n\s*\(its whole output: [^\n]*\)")
RETRY_S = 2.0  #: how often a ladder paused by a full disk tries to write again
#: what that try writes (and removes): room for an upload's or a game's files, not one byte.
#: Less than this free on the data folder's disk also tells a failed build or validation game
#: apart as the machine's fault, not the version's.
PROBE_BYTES = 1 << 20
#: how the worker processes' tracebacks (``Failed``) name a full disk
_DISK_WORDS = ("No space left on device", "Disk quota exceeded", "database or disk is full")


class LadderError(Exception):
    """The ladder cannot start on this data folder (another server holds it, a store of
    something else); one line."""


def _log_default(line: str) -> None:
    print(line, flush=True)


class Ladder:
    """A season on a data folder. ``open`` (recovery), ``start`` (the ladder thread), then
    ``stop``; the :class:`~leaderboard.ladder.model.Backend` methods work once opened."""

    def __init__(
        self,
        season: Season,
        data: str | Path,
        *,
        sandbox: SandboxConfig | None = None,
        crew: Callable[[int, Settings], Crew] | None = None,
        log: Callable[[str], None] = _log_default,
        rng: random.Random | None = None,
        reconfigure: bool = False,
        on_death: Callable[[BaseException], None] | None = None,
    ) -> None:
        """``reconfigure``: this start may change the pools and clocks of the season the store
        holds (refused otherwise, naming the changes). ``on_death``: called on the ladder
        thread with what ended it (never for a full disk, which pauses it); the server exits
        on it."""
        self.spec = season
        self.data = Path(data).resolve()
        self.sandbox = sandbox if sandbox is not None else SandboxConfig()
        self.build_sandbox = dataclasses.replace(
            self.sandbox, build_mb=season.build_mb, online_builds=False
        )
        self.make_crew = crew or LocalWorkers
        self.log = log
        self.rng = rng or random.Random(secrets.randbits(64))
        self.reconfigure = reconfigure
        self.on_death = on_death
        self.retry_s = RETRY_S
        self.db_path = self.data / "season.db"
        self.records = self.data / "records"
        self.tournament_id = 0
        self._local = threading.local()
        self._lock_file: IO[bytes] | None = None
        self._submit_locks: dict[int, threading.Lock] = collections.defaultdict(threading.Lock)
        self._submit_guard = threading.Lock()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        #: (bot id, error or "", or None: the machine failed it, the disk full)
        self._built: queue.Queue[tuple[int, str | None]] = queue.Queue()
        self._building: set[int] = set()  #: builds running (the ladder thread's)
        self._build_threads: list[threading.Thread] = []
        self._cancel_builds = threading.Event()  #: set by ``stop``: kills the running builds
        #: (why, since): set while a full disk pauses the ladder
        self._paused: tuple[str, float] | None = None
        self._disk_report = ""  #: a full disk an upload met, for the ladder thread to pause on
        # the ladder thread's view of the games (rebuilt from the store at open)
        self.ratings: dict[tuple[str, int], dict[int, Rating]] = {}
        self.starts: dict[tuple[str, int], dict[int, Rating]] = {}
        self.recent: dict[tuple[str, int], collections.deque[tuple[int, ...]]] = {}
        self.watch: FaultWatch[int] = FaultWatch(season.faults)
        self.next_index = 0
        self.games_played = 0  #: this run's, for the log and benchmarks
        self.error: BaseException | None = None  #: what stopped the ladder thread, if anything

    # ------------------------------------------------------------------------------------------
    # opening and recovery

    def open(self) -> None:
        """Take the data folder (one server at a time), open or create the season, and put
        right what a kill left: debris removed, builds and validations cut short redone."""
        for sub in ("versions", "builds", "uploads", "records"):
            (self.data / sub).mkdir(parents=True, exist_ok=True)
        self._lock_file = open(self.data / "server.lock", "a+b")  # noqa: SIM115
        try:
            fcntl.flock(self._lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock_file.close()
            self._lock_file = None
            raise LadderError(
                f"{self.data}: another ttr server is running on this data folder"
            ) from None
        os.chmod(self.data, 0o700)  # the store holds the seed key and token hashes
        try:
            self._open()
        except (OSError, sqlite3.Error) as e:
            why = disk_fault(e)
            if why is None:
                raise
            raise LadderError(
                f"{self.data}: the disk is full ({why}): free some space and start again"
            ) from None

    def _open(self) -> None:
        store = self.store()
        try:
            stored = store.stored_season()
        except StoreError as e:
            raise LadderError(str(e)) from None
        changes = [] if stored is None else season_changes(stored, self.spec)
        guarded = [str(c) for c in changes if c.guarded]
        if guarded and not self.reconfigure:
            raise LadderError(
                f"{self.data}: this start would change the running season's pools or clocks ("
                + "; ".join(guarded)
                + "), which its ratings compare games by: start with --reconfigure to change "
                "them (the games so far stay as they were played), or with neither --config "
                "nor the flags that changed them to run the season as stored"
            )
        first = self.spec.pools[0]
        try:
            self.tournament_id = store.open_season(
                self.spec.name, first.variant, first.players, self._config()
            )
        except StoreError as e:
            raise LadderError(str(e)) from None
        store.save_season(self.spec, self._config())
        if changes:
            self.log(
                "ttr server: the season changes at this start: " + "; ".join(map(str, changes))
            )
        self._sweep(store)
        builds, validating = store.restart_pending()
        if builds or validating:
            self.log(
                f"ttr server: {builds} build(s) and {validating} validation(s) cut short "
                "by the last stop are done again"
            )
        self._replay_games(store)

    def _config(self) -> dict[str, Any]:
        s = self.spec
        return {
            "records": str(self.records),
            "pools": [[p.variant, p.players, p.weight] for p in s.pools],
            "move_ms": s.move_ms,
            "bank_ms": s.bank_ms,
            "per_day": s.per_day,
            "active_versions": s.active_versions,
            "fault_rule": s.faults.to_json(),
        }

    def _sweep(self, store: LadderStore) -> None:
        """Remove what no row names: uploads being unpacked, version folders renamed in but
        never committed, builds of versions that no longer need them, records and logs of
        games that were never stored."""
        for entry in (self.data / "uploads").iterdir():
            _remove(entry)
        kept = store.version_folders()
        for entry in (self.data / "versions").iterdir():
            if f"versions/{entry.name}" not in kept:
                _remove(entry)
        self._sweep_records(store)

    def _sweep_records(self, store: LadderStore) -> None:
        """Records and logs of games never stored (cut short by a kill or a pause)."""
        stored = store.game_ids(self.tournament_id)
        for entry in self.records.glob("*.json"):
            if entry.stem not in stored:
                _remove(entry)
        logs = self.records / "logs"
        if logs.is_dir():
            for entry in logs.iterdir():
                if not entry.name.startswith("validation-") and entry.name not in stored:
                    _remove(entry)

    def _replay_games(self, store: LadderStore) -> None:
        """Ratings, recent games and the fault watch from the stored games, as the ladder
        thread keeps them while it runs."""
        tid = self.tournament_id
        disabled = {d.bot_id for d in store.disabled(tid)}
        self.watch = FaultWatch(self.spec.faults, disabled=set(disabled))
        every: list[GameResult] = []
        for pool in self.spec.pools:
            key = (pool.variant, pool.players)
            games = store.games(variant=pool.variant, players=pool.players, tournament_id=tid)
            self.starts[key] = starting_ratings(store, pool.variant, pool.players)
            self.ratings[key] = rate_games(games, start=self.starts[key])
            self.recent[key] = collections.deque(
                (tuple(s.bot_id for s in g.seats) for g in games), maxlen=self.spec.recent_games
            )
            every += games
        for game in sorted(every, key=lambda g: g.schedule_index):
            for seat in game.seats:
                self.watch.add(seat.bot_id, _game_faults(game, seat.seat))
        self.next_index = store.next_index(tid)

    def store(self) -> LadderStore:
        """This thread's connection to the store (SQLite connections stay in their thread)."""
        store: LadderStore | None = getattr(self._local, "store", None)
        if store is None:
            store = LadderStore(self.db_path)
            self._local.store = store
        return store

    def _drop_store(self) -> None:
        """Close this thread's connection (after a full disk: whatever state a failed write
        left it in goes with it); the next :meth:`store` opens a fresh one."""
        store: LadderStore | None = getattr(self._local, "store", None)
        self._local.store = None
        if store is not None:
            with contextlib.suppress(sqlite3.Error):
                store.close()

    # ------------------------------------------------------------------------------------------
    # running

    def start(self) -> None:
        self._thread = threading.Thread(target=self._main, name="ttr-ladder", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        """Stop after the games in progress, recorded (cut short after ``timeout``: a game
        cut short is not recorded, and its record, if it wrote one, goes at the next start).
        The builds running are killed at once, jail and all (a build cut short is queued
        again at the next start): a build may take ``build_timeout_s``, a stop may not."""
        until = time.monotonic() + timeout
        self._stopping.set()
        self._cancel_builds.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
        for thread in self._build_threads:
            thread.join(max(0.0, until - time.monotonic()))
        if self._lock_file is not None:
            self._lock_file.close()
            self._lock_file = None

    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _main(self) -> None:
        try:
            while True:
                try:
                    self._run()
                    return
                except Exception as e:
                    why = disk_fault(e)
                    if why is None:
                        raise
                    if not self._pause(why):
                        return
        except BaseException as e:  # the store is left consistent; the server exits on it
            self.error = e
            self.log(f"ttr server: the ladder stopped: {type(e).__name__}: {e}")
            self.log(traceback.format_exc().rstrip())  # for the organiser's bug report
            if self.on_death is not None:
                self.on_death(e)

    def _pause(self, why: str) -> bool:
        """Wait until the disk has room (a write of :data:`PROBE_BYTES` and one of the store
        succeed, tried every ``retry_s``); False if the ladder is stopped meanwhile. Called
        once ``_run`` has ended: its games were cut short, nothing is in flight."""
        self._paused = (why, time.time())
        self.log(
            f"ttr server: the ladder is paused: the disk of {self.data} is full ({why}); "
            f"it tries again every {self.retry_s:g} s, and uploads are refused (507) meanwhile"
        )
        self._drop_store()
        with contextlib.suppress(OSError, sqlite3.Error):
            self._sweep_records(self.store())  # what the games cut short left: room too
        while not self._stopping.wait(self.retry_s):
            try:
                self._probe()
            except (OSError, sqlite3.Error) as e:
                if disk_fault(e) is None:
                    raise
                self._drop_store()
                continue
            self._paused = None
            self._disk_report = ""
            self.log("ttr server: the disk has room again: the ladder goes on")
            return True
        return False

    def _probe(self) -> None:
        probe = self.data / "uploads" / f".probe-{secrets.token_hex(4)}"
        try:
            with open(probe, "wb") as f:
                f.write(bytes(PROBE_BYTES))
                f.flush()
                os.fsync(f.fileno())
        finally:
            with contextlib.suppress(FileNotFoundError):
                probe.unlink()
        self.store().probe_write()

    def _disk_full_now(self) -> bool:
        """Less than :data:`PROBE_BYTES` free where the data folder is: a build or a game
        that failed now failed for the machine, not for its author's code."""
        try:
            st = os.statvfs(self.data)
        except OSError:
            return False
        free = st.f_bfree if os.geteuid() == 0 else st.f_bavail  # root writes the reserve
        return free * st.f_frsize < PROBE_BYTES

    def _run(self) -> None:
        first = self.spec.pools[0]
        settings = Settings(
            variant=first.variant,
            players=first.players,
            move_ms=self.spec.move_ms,
            bank_ms=self.spec.bank_ms,
            startup_s=self.spec.startup_s,
            records=str(self.records),
            sandbox=self.sandbox,
            idle_games=IDLE_GAMES,
        )
        store = self.store()
        # After a pause, as after a restart: a build whose answer was lost is built again,
        # a validation cut short is played again (the first start's open() did both).
        for row in store.version_rows(states=frozenset({"building"})):
            if row.bot_id not in self._building:
                store.set_state(row.bot_id, "queued", only_from=frozenset({"building"}))
        crew = self.make_crew(self.spec.workers, settings)
        in_flight: dict[str, Task] = {}
        validations: collections.deque[Validate] = collections.deque()
        for row in store.version_rows(states=frozenset({"validating"})):
            validations.extend(self._validation_tasks(row))
        try:
            while True:
                stopping = self._stopping.is_set()
                if self._disk_report and not stopping:
                    raise DiskFull(self._disk_report)  # an upload met it: pause on it
                if not stopping:
                    self._wake.clear()
                    self._start_builds(store)
                    self._finish_builds(store, validations)
                    while len(in_flight) < self.spec.workers:
                        task = validations.popleft() if validations else self._next_game(store)
                        if task is None:
                            break
                        in_flight[task.key] = task
                        crew.submit([task])
                if not in_flight:
                    if stopping:
                        break
                    self._wake.wait(IDLE_S)
                    continue
                # Stopping, the games in progress are played out and recorded: a graceful
                # stop leaves no game half-counted (``stop``'s timeout cuts them short).
                for answer in crew.results(1):
                    self._answer(store, answer, in_flight)
        finally:
            crew.close()

    # builds -----------------------------------------------------------------------------------

    def _start_builds(self, store: LadderStore) -> None:
        """Start the fairest queued builds (:meth:`LadderStore.build_queue`) while a slot is
        free: a version is ``building`` only once its build has really started."""
        if len(self._building) >= self.spec.builds:
            return
        for row in store.build_queue(since=time.time() - DAY_S):
            if len(self._building) >= self.spec.builds:
                return
            if not store.set_state(row.bot_id, "building", only_from=frozenset({"queued"})):
                continue
            self._building.add(row.bot_id)
            self.log(f"ttr server: building {row.author} v{row.number}")
            thread = threading.Thread(
                target=self._build, args=(row,), name=f"ttr-build-{row.bot_id}", daemon=True
            )
            self._build_threads = [t for t in self._build_threads if t.is_alive()] + [thread]
            thread.start()

    def _build(self, row: VersionRow) -> None:
        """On a build thread: a fresh copy of the uploaded files, built in the jail within
        the season's ``build_timeout_s`` (or until ``stop``). The answer goes to the ladder
        thread, which alone changes the version's state."""
        error: str | None = ""
        try:
            work = self.build_folder(row.bot_id)
            _remove(work)
            shutil.copytree(self.data / row.folder, work, symlinks=True)
            config = read_bot_config(work)
            ensure_built(
                config,
                self.build_sandbox,
                timeout_s=self.spec.build_timeout_s,
                cancel=self._cancel_builds,
            )
            entries(work)  # what the build left must obey the folder's rule for links too
        except BotBuildError as e:
            error = f"build failed: {e.summary}"
            if disk_fault(e) is not None or self._disk_full_now():
                error = None
        except (LaunchError, BotFolderError, OSError) as e:
            error = f"build failed: {printable(str(e).splitlines()[0] if str(e) else repr(e))}"
            if disk_fault(e) is not None or self._disk_full_now():
                error = None
        except Exception as e:  # never leave a version building forever
            error = f"build failed: internal error ({type(e).__name__}); the organiser has the log"
            self.log(f"ttr server: build of {row.author} v{row.number}: {e!r}")
        self._built.put((row.bot_id, error))
        self._wake.set()

    def build_folder(self, bot_id: int) -> Path:
        return self.data / "builds" / str(bot_id)

    def _finish_builds(self, store: LadderStore, validations: collections.deque[Validate]) -> None:
        while True:
            try:
                bot_id, error = self._built.get_nowait()
            except queue.Empty:
                return
            self._building.discard(bot_id)
            if self._stopping.is_set():
                return  # left "building": queued again at the next start
            if error is None:  # left "building": queued again when the ladder goes on
                raise DiskFull("a build could not be written")
            row = store.version_row(bot_id)
            if row is None or row.state != "building":
                continue
            if error:
                store.set_state(bot_id, "failed", error, only_from=frozenset({"building"}))
                self.log(f"ttr server: {row.author} v{row.number} {error}")
                continue
            store.set_state(bot_id, "validating", only_from=frozenset({"building"}))
            row = store.version_row(bot_id)
            assert row is not None
            validations.extend(self._validation_tasks(row))

    # validation -------------------------------------------------------------------------------

    def _entrant(self, row: VersionRow) -> Entrant:
        return Entrant(
            row.bot_id,
            str(self.build_folder(row.bot_id)),
            row.author,
            f"v{row.number}",
            row.content_hash,
        )

    def _validation_tasks(self, row: VersionRow) -> list[Validate]:
        return [
            Validate(
                key=f"validate-{row.bot_id}-{i}",
                entrant=self._entrant(row),
                seed=schedule_mod.secret_seed(),
                variant=pool.variant,
                players=pool.players,
                log_name=f"validation-{row.bot_id}-{i}",
            )
            for i, pool in enumerate(self.spec.pools)
        ]

    def _validated(self, store: LadderStore, task: Validate, answer: Validation) -> None:
        bot_id = task.entrant.bot_id
        row = store.version_row(bot_id)
        if row is None or row.state != "validating":
            return
        reason = _LOG_NOTE.sub("", answer.reason)
        store.record_validation(bot_id, task.variant, task.players, answer.ok, reason, answer.log)
        pool = f"{task.variant} {task.players}p"
        if not answer.ok:
            why = f"validation game ({pool}) failed: {reason}"
            store.set_state(bot_id, "failed", why, only_from=frozenset({"validating"}))
            self.log(f"ttr server: {row.author} v{row.number} {why.splitlines()[0]}")
            return
        done = {(v.variant, v.players) for v in store.validation_rows(bot_id) if v.ok}
        if all((p.variant, p.players) in done for p in self.spec.pools):
            self._activate(store, row)

    def _activate(self, store: LadderStore, row: VersionRow) -> None:
        """Join the ladder: in each pool its rating starts where its author's latest version
        stands (sigma reset: leaderboard.matchmaking.initial_rating); the author's oldest
        active versions beyond ``active_versions`` retire."""
        mine = store.version_rows(author_id=row.author_id)
        starts: dict[tuple[str, int], tuple[float, float]] = {}
        for pool in self.spec.pools:
            key = (pool.variant, pool.players)
            previous = [
                self._candidate(key, v)
                for v in mine
                if v.bot_id != row.bot_id and self._rated(key, v.bot_id)
            ]
            starts[key] = initial_rating(previous, self.spec.matchmaking)
        active = sorted((v for v in mine if v.state == "active"), key=lambda v: v.number)
        keep = self.spec.active_versions - 1
        retire = {
            v.bot_id: f"retired: v{row.number} replaced it (the season keeps "
            f"{self.spec.active_versions} active version(s) per author)"
            for v in (active[:-keep] if keep else active)
        }
        if not store.activate(row.bot_id, starts, retire):
            return
        for key, (mu, sigma) in starts.items():
            self.starts[key] = {**self.starts.get(key, {}), row.bot_id: Rating(mu, sigma)}
        gone = ", ".join(f"v{v.number}" for v in active if v.bot_id in retire)
        self.log(
            f"ttr server: {row.author} v{row.number} is on the ladder"
            + (f" ({gone} retired)" if gone else "")
        )

    # matchmaking and games --------------------------------------------------------------------

    def _rated(self, key: tuple[str, int], bot_id: int) -> bool:
        return bot_id in self.ratings.get(key, {}) or bot_id in self.starts.get(key, {})

    def rating(self, key: tuple[str, int], bot_id: int) -> Rating:
        rated = self.ratings.get(key, {}).get(bot_id) or self.starts.get(key, {}).get(bot_id)
        if rated is not None:
            return rated
        m = self.spec.matchmaking
        return Rating(m.mu, m.sigma)

    def _candidate(self, key: tuple[str, int], row: VersionRow, games: int = 0) -> Candidate:
        rating = self.rating(key, row.bot_id)
        return Candidate(row.bot_id, row.author, rating.mu, rating.sigma, games)

    def _next_game(self, store: LadderStore) -> Play | None:
        """Matchmaking (leaderboard/matchmaking.py) in a pool drawn by the season's weights;
        None when no pool has a legal game."""
        active = store.version_rows(states=frozenset({"active"}))
        if not active:
            return None
        pools = list(self.spec.pools)
        while pools:
            pool = self.rng.choices(pools, weights=[p.weight for p in pools])[0]
            pools.remove(pool)
            key = (pool.variant, pool.players)
            counts = collections.Counter(b for seats in self.recent.get(key, ()) for b in seats)
            candidates = [self._candidate(key, row, counts[row.bot_id]) for row in active]
            match = draw_match(candidates, pool.players, self.rng, self.spec.matchmaking)
            if isinstance(match, Match):
                return self._play_task(pool, match, {r.bot_id: r for r in active})
        return None

    def _play_task(self, pool: Pool, match: Match, rows: dict[int, VersionRow]) -> Play:
        game_id = f"g{self.tournament_id}-{secrets.token_hex(6)}"
        game = schedule_mod.ScheduledGame(
            index=-1,  # set when it is recorded (the module's docstring says why)
            game_id=game_id,
            round=0,
            combination=0,
            rotation=0,
            seed=schedule_mod.secret_seed(),
            seats=tuple(range(pool.players)),
        )
        seats = tuple(self._entrant(rows[bot_id]) for bot_id in match.seats)
        return Play(game_id, self.tournament_id, game, seats, variant=pool.variant)

    def _answer(self, store: LadderStore, answer: Any, in_flight: dict[str, Task]) -> None:
        if isinstance(answer, Failed):
            task = in_flight.pop(answer.key, None)
            said = [ln.strip() for ln in answer.error.splitlines() if _says_disk_full(ln)]
            if said or self._disk_full_now():
                # the machine's fault: a validation is played again once the ladder goes on
                raise DiskFull(f"{answer.key} could not be played: " + (said or ["no room"])[-1])
            self.log(f"ttr server: task {answer.key} failed (internal error):\n{answer.error}")
            if isinstance(task, Validate):
                store.set_state(
                    task.entrant.bot_id,
                    "failed",
                    "validation could not be played (an internal error, reported to the organiser)",
                    only_from=frozenset({"validating"}),
                )
            return
        if isinstance(answer, Validation):
            task = in_flight.pop(answer.key, None)
            if not answer.ok and self._disk_full_now():
                raise DiskFull(f"validation {answer.key} failed on a full disk")
            if isinstance(task, Validate):
                self._validated(store, task, answer)
            return
        assert isinstance(answer, GameResult)
        in_flight.pop(answer.game_id, None)
        self._record(store, answer)

    def _record(self, store: LadderStore, played: GameResult) -> None:
        game = dataclasses.replace(played, schedule_index=self.next_index, round=0)
        if not store.record_game(game):
            return
        self.next_index += 1
        self.games_played += 1
        key = (game.variant, game.num_seats)
        self.ratings[key] = rate_game(self.ratings.get(key, {}), game, start=self.starts.get(key))
        self.recent.setdefault(key, collections.deque(maxlen=self.spec.recent_games)).append(
            tuple(s.bot_id for s in game.seats)
        )
        for seat in game.seats:
            verdict = self.watch.add(seat.bot_id, _game_faults(game, seat.seat))
            if verdict is not None and store.disable_version(
                self.tournament_id, seat.bot_id, game.game_id, verdict.reason
            ):
                row = store.version_row(seat.bot_id)
                who = f"{row.author} v{row.number}" if row else f"bot {seat.bot_id}"
                self.log(f"ttr server: {who} {verdict.reason}")

    # ------------------------------------------------------------------------------------------
    # the Backend (leaderboard/ladder/model.py): any thread

    def season(self) -> SeasonInfo:
        state, reason, since = RUNNING, "", None
        paused = self._paused
        if self.error is not None:
            state, reason = (
                STOPPED,
                f"the ladder stopped: {type(self.error).__name__}: {self.error}",
            )
        elif paused is not None:
            state, reason, since = PAUSED, f"the disk is full ({paused[0]})", paused[1]
        return SeasonInfo(
            name=self.spec.name,
            pools=tuple((p.variant, p.players) for p in self.spec.pools),
            frozen=self.store().frozen(),
            submissions_per_day=self.spec.per_day,
            active_versions=self.spec.active_versions,
            upload_bytes=self.spec.upload.upload_bytes,
            state=state,
            reason=reason,
            since=since,
            build_timeout_s=self.spec.build_timeout_s,
        )

    def store_path(self) -> Path:
        return self.db_path

    def authenticate(self, token: str) -> Author | None:
        if not token or len(token) > 200:
            return None
        return self.store().author_for_token(token)

    def submit(self, author: Author, data: bytes | IO[bytes]) -> Submitted:
        if self.error is not None:  # the server is exiting on it (``on_death``)
            raise SubmissionError(
                "the ladder has stopped and the server is restarting: send it again later", 503
            )
        if self._paused is not None:
            raise DiskFull(
                "the server's disk is full: uploads are refused until it has room again "
                "(the organiser is told); send it again later"
            )
        try:
            return self._submit(author, data)
        except (OSError, sqlite3.Error) as e:
            why = disk_fault(e)
            if why is None:
                raise
            self._drop_store()
            self._disk_report = why
            self._wake.set()
            raise DiskFull(
                f"the server's disk is full ({why}): nothing of this upload was stored; "
                "send it again later"
            ) from None

    def _submit(self, author: Author, data: bytes | IO[bytes]) -> Submitted:
        store = self.store()
        if store.frozen():
            raise SubmissionError(
                f"submissions to {self.spec.name!r} are closed (the season is frozen for "
                "its finals)",
                403,
            )
        with self._submit_guard:
            lock = self._submit_locks[author.author_id]
        with lock:  # one upload of an author at a time: the same content twice is one version
            staging = self.data / "uploads" / secrets.token_hex(8)
            try:
                bot = unpack(data, staging, self.spec.upload)
                existing = store.find_version(author.author_id, bot.content_hash)
                if existing is not None:
                    return Submitted(self._info(store, existing), False, bot.skipped)
                folder = f"versions/{author.author_id}-{bot.content_hash[:32]}"
                target = self.data / folder
                _remove(target)  # a kill between this rename and the commit left it
                os.rename(staging, target)
                try:
                    row, new = store.add_version(
                        self.tournament_id,
                        author,
                        bot.config.name,
                        bot.content_hash,
                        folder,
                        bot.files,
                        bot.size,
                        self.spec.per_day,
                    )
                except BaseException:
                    _remove(target)
                    raise
            finally:
                _remove(staging)
        self.log(f"ttr server: {author.name} submitted v{row.number} ({bot.files} files)")
        self._wake.set()
        return Submitted(self._info(store, row), new, bot.skipped)

    def versions(self, author: Author) -> list[VersionInfo]:
        store = self.store()
        rows = store.version_rows(author_id=author.author_id)
        return [self._info(store, row) for row in reversed(rows)]

    def version(self, author: Author, number: int) -> VersionInfo | None:
        store = self.store()
        row = store.author_version(author.author_id, number)
        return None if row is None else self._info(store, row)

    def build_log(self, author: Author, number: int) -> str | None:
        row = self.store().author_version(author.author_id, number)
        if row is None:
            return None
        log = self.build_folder(row.bot_id) / BUILD_LOG
        try:
            with open(log, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                f.seek(max(0, size - BUILD_LOG_BYTES))
                text = f.read(BUILD_LOG_BYTES).decode("utf-8", "replace")
        except OSError:
            return ""
        return text if size <= BUILD_LOG_BYTES else "[... earlier output left out ...]\n" + text

    def validations(self, author: Author, number: int) -> list[ValidationGame] | None:
        store = self.store()
        row = store.author_version(author.author_id, number)
        if row is None:
            return None
        return [
            ValidationGame(
                v.variant, v.players, v.ok, v.reason, v.finished_at, v.log_path is not None
            )
            for v in store.validation_rows(row.bot_id)
        ]

    def validation_log(self, author: Author, number: int, index: int) -> Path | None:
        store = self.store()
        row = store.author_version(author.author_id, number)
        if row is None:
            return None
        rows = store.validation_rows(row.bot_id)
        if not 0 <= index < len(rows):
            return None
        return self._servable(rows[index].log_path)

    def games(
        self, author: Author, number: int | None = None, limit: int = 100
    ) -> list[AuthorGame]:
        store = self.store()
        mine = {
            r.bot_id: r
            for r in store.version_rows(author_id=author.author_id)
            if number is None or r.number == number
        }
        seats = store.seat_rows(list(mine), max(1, min(limit, 1000)))
        bots = store.bots()
        everyone = store.game_seats([s[0] for s in seats])
        out = []
        for game_id, finished, variant, players, bot_id, seat, rank, score, faults, log in seats:
            others = tuple(
                f"{bots[b].name} {bots[b].version}"
                for b in everyone.get(game_id, [])
                if b != bot_id
            )
            out.append(
                AuthorGame(
                    game_id,
                    finished,
                    variant,
                    players,
                    mine[bot_id].number,
                    seat,
                    rank,
                    score,
                    faults,
                    others,
                    log is not None,
                )
            )
        return out

    def game_log(self, author: Author, game_id: str, seat: int) -> Path | None:
        store = self.store()
        game = store.game(game_id)
        if game is None or game.tournament_id != self.tournament_id:
            return None
        sat = next((s for s in game.seats if s.seat == seat), None)
        if sat is None:
            return None
        row = store.version_row(sat.bot_id)
        if row is None or row.author_id != author.author_id:
            return None
        return self._servable(sat.log_path)

    def _servable(self, path: str | None) -> Path | None:
        if path is None:
            return None
        try:
            real = Path(path).resolve(strict=True)
        except (OSError, RuntimeError):
            return None
        root = self.records.resolve()
        return real if real.is_relative_to(root) and real.is_file() else None

    def _info(self, store: LadderStore, row: VersionRow) -> VersionInfo:
        pools = []
        active = store.version_rows(states=frozenset({"active"}))
        for pool in self.spec.pools:
            key = (pool.variant, pool.players)
            rating = self.rating(key, row.bot_id)
            games, wins, faulty = store.pool_counts(row.bot_id, pool.variant, pool.players)
            rank = None
            if row.state == "active":
                order = sorted(
                    active, key=lambda r: (-self.rating(key, r.bot_id).conservative, r.bot_id)
                )
                rank = 1 + [r.bot_id for r in order].index(row.bot_id)
            pools.append(
                PoolStanding(
                    pool.variant, pool.players, rating.mu, rating.sigma, games, wins, faulty, rank
                )
            )
        return VersionInfo(
            bot_id=row.bot_id,
            author=row.author,
            number=row.number,
            bot_name=row.bot_name,
            content_hash=row.content_hash,
            state=row.state,
            reason=row.reason,
            uploaded_at=row.uploaded_at,
            updated_at=row.updated_at,
            files=row.files,
            size=row.size,
            pools=tuple(pools),
        )


def stored_season(data: str | Path) -> Season | None:
    """The season the store in the data folder ``data`` last ran (None: no store, or no
    season in it yet): what ``ttr server run`` runs without a season file, so that a restart
    without one never changes the season. :class:`LadderError` if it cannot be read."""
    db = Path(data) / "season.db"
    if not db.is_file():
        return None
    try:
        with LadderStore(db) as store:
            return store.stored_season()
    except StoreError as e:
        raise LadderError(str(e)) from None


def disk_fault(error: BaseException) -> str | None:
    """A few words naming a full disk if that is what ``error`` is, or was raised from or
    while handling (an ``OSError`` of ``ENOSPC`` or ``EDQUOT``, SQLite's ``SQLITE_FULL``);
    None for anything else."""
    seen: set[int] = set()
    e: BaseException | None = error
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT):
            return e.strerror or os.strerror(e.errno)
        if isinstance(e, DiskFull):
            return str(e)
        if isinstance(e, sqlite3.Error) and (
            getattr(e, "sqlite_errorcode", 0) & 0xFF == sqlite3.SQLITE_FULL
            or "database or disk is full" in str(e)
        ):
            return "database or disk is full"
        e = e.__cause__ or e.__context__
    return None


def _says_disk_full(line: str) -> bool:
    return any(words in line for words in _DISK_WORDS)


def _game_faults(game: GameResult, seat: int) -> GameFaults:
    mine = [f for f in game.faults if f.seat == seat]
    counted = next((s.faults for s in game.seats if s.seat == seat), 0)
    first = fault_words(mine[0].kind, mine[0].rule, mine[0].message) if mine else ""
    return GameFaults(game.game_id, counted, first)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
