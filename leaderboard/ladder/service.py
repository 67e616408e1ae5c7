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

Games are ordered as they are recorded: the store's ``schedule_index`` of a ladder game is
its position in the order results came in, so the ratings recomputed from the store (the
league page, ``ttr leaderboard show``) step through the games in the order the ladder rated
them, and agree with it.
"""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import dataclasses
import fcntl
import os
import queue
import random
import re
import secrets
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from leaderboard import schedule as schedule_mod
from leaderboard.faults import FaultWatch, GameFaults
from leaderboard.ladder.model import (
    Author,
    AuthorGame,
    PoolStanding,
    SeasonInfo,
    SubmissionError,
    Submitted,
    ValidationGame,
    VersionInfo,
)
from leaderboard.ladder.season import Pool, Season
from leaderboard.ladder.store import LadderStore, VersionRow
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
    ) -> None:
        self.spec = season
        self.data = Path(data).resolve()
        self.sandbox = sandbox if sandbox is not None else SandboxConfig()
        self.build_sandbox = dataclasses.replace(
            self.sandbox, build_mb=season.build_mb, online_builds=False
        )
        self.make_crew = crew or LocalWorkers
        self.log = log
        self.rng = rng or random.Random(secrets.randbits(64))
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
        self._builds: concurrent.futures.ThreadPoolExecutor | None = None
        self._built: queue.Queue[tuple[int, str]] = queue.Queue()  #: (bot id, error or "")
        self._building: set[int] = set()
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
        store = self.store()
        first = self.spec.pools[0]
        try:
            self.tournament_id = store.open_season(
                self.spec.name, first.variant, first.players, self._config()
            )
        except StoreError as e:
            raise LadderError(str(e)) from None
        store.update_season_config(self._config())
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

    # ------------------------------------------------------------------------------------------
    # running

    def start(self) -> None:
        self._builds = concurrent.futures.ThreadPoolExecutor(
            self.spec.builds, thread_name_prefix="ttr-build"
        )
        self._thread = threading.Thread(target=self._main, name="ttr-ladder", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        """Stop after the games in progress, recorded (cut short after ``timeout``: a game
        cut short is not recorded, and its record, if it wrote one, goes at the next start)."""
        self._stopping.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
        if self._builds is not None:
            self._builds.shutdown(wait=False, cancel_futures=True)
        if self._lock_file is not None:
            self._lock_file.close()
            self._lock_file = None

    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _main(self) -> None:
        try:
            self._run()
        except BaseException as e:  # reported by the server; the store is left consistent
            self.error = e
            self.log(f"ttr server: the ladder stopped: {type(e).__name__}: {e}")
            raise

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
        crew = self.make_crew(self.spec.workers, settings)
        in_flight: dict[str, Task] = {}
        validations: collections.deque[Validate] = collections.deque()
        for row in store.version_rows(states=frozenset({"validating"})):
            validations.extend(self._validation_tasks(row))
        try:
            while True:
                stopping = self._stopping.is_set()
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
        assert self._builds is not None
        for row in store.version_rows(states=frozenset({"queued"})):
            if row.bot_id in self._building:
                continue
            if not store.set_state(row.bot_id, "building", only_from=frozenset({"queued"})):
                continue
            self._building.add(row.bot_id)
            self.log(f"ttr server: building {row.author} v{row.number}")
            self._builds.submit(self._build, row)

    def _build(self, row: VersionRow) -> None:
        """On a build thread: a fresh copy of the uploaded files, built in the jail. The
        answer goes to the ladder thread, which alone changes the version's state."""
        error = ""
        try:
            work = self.build_folder(row.bot_id)
            _remove(work)
            shutil.copytree(self.data / row.folder, work, symlinks=True)
            config = read_bot_config(work)
            ensure_built(config, self.build_sandbox)
            entries(work)  # what the build left must obey the folder's rule for links too
        except BotBuildError as e:
            error = f"build failed: {e.summary}"
        except (LaunchError, BotFolderError, OSError) as e:
            error = f"build failed: {printable(str(e).splitlines()[0] if str(e) else repr(e))}"
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
        return SeasonInfo(
            name=self.spec.name,
            pools=tuple((p.variant, p.players) for p in self.spec.pools),
            frozen=self.store().frozen(),
            submissions_per_day=self.spec.per_day,
            active_versions=self.spec.active_versions,
            upload_bytes=self.spec.upload.upload_bytes,
        )

    def store_path(self) -> Path:
        return self.db_path

    def authenticate(self, token: str) -> Author | None:
        if not token or len(token) > 200:
            return None
        return self.store().author_for_token(token)

    def submit(self, author: Author, data: bytes | IO[bytes]) -> Submitted:
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
