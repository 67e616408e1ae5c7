"""The results store: one SQLite file per league, written by the tournament parent only.

A run may be killed at any moment (SIGKILL, power cut) and resumed with ``--resume``; no game
may be lost or counted twice. Three choices carry that promise:

* A game is written only once it is finished, together with its seats and faults, in one
  transaction (:meth:`Store.record_game`). There is never a half-written game to clean up:
  after a crash a game is either wholly there or wholly absent, and an absent game is replayed.
* Games are keyed by a deterministic ``game_id`` (the PRIMARY KEY), and a tournament's schedule
  position is unique too; writing a game that is already stored is a no-op that returns
  False, so a resumed run that replays a game it had in fact finished cannot count it twice.
* ``journal_mode=WAL`` with ``synchronous=FULL``. WAL lets ``ttr leaderboard show`` read while
  a tournament writes, without either blocking the other. NORMAL would survive SIGKILL but
  could drop the last commits on a power cut (the WAL is not synced at each commit); FULL syncs
  at each commit, so a committed game is on disk. That costs one fsync per game, and a game
  lasts seconds, so it is free; a lost game would only be replayed, but "committed means kept"
  is the simpler thing to reason about.

The store keeps one secret: the key its tournaments' game seeds are derived under
(:meth:`Store.seed_key`, ``leaderboard.schedule``). It is what makes an organiser's
``--seed 42`` safe to use against untrusted bots, and it is why a store file (or a copy of it)
must stay as private as the seeds themselves: with the store, a base seed gives every deal.

Ratings are not stored: they are recomputed from the games (``leaderboard.ratings``), so the
store holds facts only. The file is recognised by ``PRAGMA application_id`` and versioned by
``PRAGMA user_version``; anything else (another program's database, a newer schema, a file
that is not SQLite) is refused with :class:`StoreError` before the file is changed. A store of
an older schema is upgraded in place when opened, by the additive steps in ``_MIGRATIONS``
(one transaction): old stores stay readable, and nothing they hold is rewritten.

A tournament is in one of three states: unfinished (running, or killed: ``--resume`` goes on
with it), finished, or abandoned. Which of running and killed an unfinished one is, the store
knows by its heartbeat (:meth:`Store.beat`): the run writes the time every
:data:`HEARTBEAT_S` and with each game it stores, and a heartbeat older than :data:`STALE_S`
by the reader's clock is a run that stopped (:meth:`Tournament.running`). Abandoning
(``ttr tournament abandon``) is for a run that can never be resumed (a bot folder gone or
changed): it only sets ``abandoned_at``, so ``--resume`` and new runs stop waiting for it.
Its finished games stay, and since ratings are recomputed from every stored game of a pool,
they keep counting: each of them was a complete, fairly dealt game.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import sqlite3
import time
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

APPLICATION_ID = 0x54545241  #: "TTRA": marks the file as a TTR Arena results store
SCHEMA_VERSION = 7  #: PRAGMA user_version; bump with a step in _MIGRATIONS when the schema changes

#: The store's secret: the key its tournaments' game seeds are derived under
#: (``leaderboard.schedule.game_seed``). One row, made on first use (:meth:`Store.seed_key`).
#: It never leaves this file: no command, page, export or record shows it.
_SEED_KEY_TABLE = """
CREATE TABLE seed_key (
    only INTEGER PRIMARY KEY CHECK (only = 1),   -- one key per store
    key BLOB NOT NULL CHECK (length(key) = 32),  -- 32 bytes from the OS (secrets)
    created_at REAL NOT NULL
)
"""

_SCHEMA: tuple[str, ...] = (
    """
CREATE TABLE tournaments (
    tournament_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    variant TEXT NOT NULL,          -- ruleset ident, e.g. 'usa@1'
    players INTEGER NOT NULL,       -- seats per game
    rounds INTEGER NOT NULL,
    base_seed INTEGER NOT NULL,
    config TEXT NOT NULL,           -- JSON object: the rest of the runner's settings
    created_at REAL NOT NULL,       -- Unix time, seconds
    finished_at REAL,               -- NULL while the tournament is running or was killed
    abandoned_at REAL               -- set by `ttr tournament abandon`: never to be resumed
)
""",
    """
CREATE TABLE bots (
    bot_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    version TEXT NOT NULL,
    author TEXT NOT NULL,
    content_hash TEXT NOT NULL,     -- hash of the bot's files: a changed bot is a new bot
    UNIQUE (name, version, content_hash)
)
""",
    """
CREATE TABLE entries (
    tournament_id INTEGER NOT NULL REFERENCES tournaments,
    bot_id INTEGER NOT NULL REFERENCES bots,
    path TEXT NOT NULL,
    accepted INTEGER NOT NULL CHECK (accepted IN (0, 1)),  -- 0: failed its validation game
    reason TEXT NOT NULL,                                   -- why not accepted ('' if accepted)
    PRIMARY KEY (tournament_id, bot_id)
)
""",
    """
CREATE TABLE games (
    game_id TEXT PRIMARY KEY,
    tournament_id INTEGER NOT NULL REFERENCES tournaments,
    schedule_index INTEGER NOT NULL,  -- position in the schedule: the order ratings use
    round INTEGER NOT NULL,
    variant TEXT NOT NULL,
    num_seats INTEGER NOT NULL CHECK (num_seats >= 1),
    seed INTEGER NOT NULL,
    end_reason TEXT NOT NULL,
    decisions INTEGER NOT NULL,
    record_path TEXT,
    started_at REAL NOT NULL,
    finished_at REAL NOT NULL,
    UNIQUE (tournament_id, schedule_index)  -- one game per slot, whatever its id
)
""",
    """
CREATE INDEX games_pool ON games (variant, num_seats)
""",
    """
CREATE TABLE seats (
    game_id TEXT NOT NULL REFERENCES games ON DELETE CASCADE,
    seat INTEGER NOT NULL,
    bot_id INTEGER NOT NULL REFERENCES bots,
    score INTEGER NOT NULL,
    rank INTEGER NOT NULL CHECK (rank >= 1),  -- 1 = first, equal ranks are ties
    tickets_completed INTEGER NOT NULL,
    tickets_failed INTEGER NOT NULL,
    faults INTEGER NOT NULL,
    defaults INTEGER NOT NULL,                -- decisions played by the safe default
    log_path TEXT,                            -- the bot's stdout+stderr in this game, or NULL
    PRIMARY KEY (game_id, seat)
)
""",
    """
CREATE INDEX seats_bot ON seats (bot_id)
""",
    _SEED_KEY_TABLE,
    """
CREATE TABLE faults (
    game_id TEXT NOT NULL,
    n INTEGER NOT NULL,             -- position of the fault in the game, to keep their order
    seat INTEGER NOT NULL,
    decision INTEGER NOT NULL,      -- -1: StartGame / EndGame
    turn INTEGER NOT NULL,
    kind TEXT NOT NULL,
    rule TEXT NOT NULL,
    message TEXT NOT NULL,
    PRIMARY KEY (game_id, n),
    FOREIGN KEY (game_id, seat) REFERENCES seats (game_id, seat) ON DELETE CASCADE
)
""",
)
#: A bot disabled in a tournament for faulting too often (leaderboard/faults.py), and the
#: scheduled games left unplayed because of it. Tables of their own, apart from ``games``: that
#: one holds played games only, and everything that counts or rates games reads it alone.
#: IF NOT EXISTS: the upgrade step adds them to any store of an older version, whatever else
#: it holds (a test that makes an "old" store by undoing later steps keeps newer tables).
_DISABLED_TABLES = (
    """
CREATE TABLE IF NOT EXISTS disabled (
    tournament_id INTEGER NOT NULL REFERENCES tournaments,
    bot_id INTEGER NOT NULL REFERENCES bots,
    game_id TEXT NOT NULL,          -- the stored game after which it was disabled
    reason TEXT NOT NULL,
    disabled_at REAL NOT NULL,
    PRIMARY KEY (tournament_id, bot_id)
)
""",
    """
CREATE TABLE IF NOT EXISTS skipped (
    game_id TEXT PRIMARY KEY,       -- the schedule's id: never also in games
    tournament_id INTEGER NOT NULL REFERENCES tournaments,
    schedule_index INTEGER NOT NULL,
    bot_id INTEGER NOT NULL REFERENCES bots,  -- the disabled bot that kept it from being played
    reason TEXT NOT NULL,
    skipped_at REAL NOT NULL,
    UNIQUE (tournament_id, schedule_index)
)
""",
)
_SCHEMA += _DISABLED_TABLES
#: The competition ladder (leaderboard/ladder/, issue 22): its season is a tournament of this
#: store (so ``ttr leaderboard`` and the league page read it as any other), its versions are
#: bots, and these tables hold what a tournament has no need of: the authors (a hash of each
#: token, never the token), each version's life (state, reason, folder), its validation games,
#: and each version's starting rating in a pool (a new version starts from its author's mu:
#: ratings are still recomputed from the games, from these starting points). Empty in a store
#: no ladder has used.
_LADDER_TABLES = (
    """
CREATE TABLE IF NOT EXISTS authors (
    author_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    token_hash BLOB NOT NULL UNIQUE,  -- SHA-256 of the token (256 random bits): never the token
    created_at REAL NOT NULL
)
""",
    """
CREATE TABLE IF NOT EXISTS versions (
    bot_id INTEGER PRIMARY KEY REFERENCES bots,
    tournament_id INTEGER NOT NULL REFERENCES tournaments,  -- the season
    author_id INTEGER NOT NULL REFERENCES authors,
    number INTEGER NOT NULL,        -- 1, 2, 3... per author
    bot_name TEXT NOT NULL,         -- the name in its bot.toml
    state TEXT NOT NULL,            -- leaderboard.ladder.model.STATES
    reason TEXT NOT NULL,           -- why failed / disabled / retired ('' otherwise)
    folder TEXT NOT NULL,           -- its files as uploaded, relative to the server's data
    files INTEGER NOT NULL,
    size INTEGER NOT NULL,
    uploaded_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    UNIQUE (author_id, number)
)
""",
    """
CREATE TABLE IF NOT EXISTS validations (
    bot_id INTEGER NOT NULL REFERENCES bots,
    variant TEXT NOT NULL,
    players INTEGER NOT NULL,
    ok INTEGER NOT NULL CHECK (ok IN (0, 1)),
    reason TEXT NOT NULL,
    log_path TEXT,
    finished_at REAL NOT NULL,
    PRIMARY KEY (bot_id, variant, players)
)
""",
    """
CREATE TABLE IF NOT EXISTS starts (
    bot_id INTEGER NOT NULL REFERENCES bots,
    variant TEXT NOT NULL,
    players INTEGER NOT NULL,
    mu REAL NOT NULL,
    sigma REAL NOT NULL,
    PRIMARY KEY (bot_id, variant, players)
)
""",
    """
CREATE TABLE IF NOT EXISTS ladder (
    only INTEGER PRIMARY KEY CHECK (only = 1),
    tournament_id INTEGER NOT NULL REFERENCES tournaments,
    frozen_at REAL                  -- `ttr server freeze`: no more submissions
)
""",
)
_SCHEMA += _LADDER_TABLES
#: The last sign of life of each tournament's run: a row while a run goes on (written every
#: HEARTBEAT_S, and with each stored game), removed as the run ends. Volatile, so kept apart
#: from the tournament's facts (and out of :meth:`Store.revision`: a page's cache is not
#: thrown away every few seconds). IF NOT EXISTS: see _DISABLED_TABLES.
_HEARTBEAT_TABLE = """
CREATE TABLE IF NOT EXISTS heartbeats (
    tournament_id INTEGER PRIMARY KEY REFERENCES tournaments,
    beat_at REAL NOT NULL           -- Unix time, seconds, by the running parent's clock
)
"""
_SCHEMA += (_HEARTBEAT_TABLE,)
_TABLES = frozenset({"tournaments", "bots", "entries", "games", "seats", "faults"})
#: tables a store has from a schema version on (besides ``_TABLES``)
_TABLES_SINCE = {
    4: frozenset({"seed_key"}),
    5: frozenset({"disabled", "skipped"}),
    6: frozenset({"authors", "versions", "validations", "starts", "ladder"}),
    7: frozenset({"heartbeats"}),
}
#: From schema version N to N + 1: additive statements only (new columns, tables, indexes),
#: so an old store upgrades in one transaction and every old row keeps its meaning.
_MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: ("ALTER TABLE tournaments ADD COLUMN abandoned_at REAL",),
    2: ("ALTER TABLE seats ADD COLUMN log_path TEXT",),  # NULL for games stored before
    3: (_SEED_KEY_TABLE.strip(),),  # empty: the key is made when a tournament first needs it
    4: _DISABLED_TABLES,  # none disabled, none skipped in a store from before
    5: _LADDER_TABLES,  # no ladder in a store from before
    6: (_HEARTBEAT_TABLE,),  # no heartbeat: an unfinished tournament from before is stopped
}
HEARTBEAT_S = 5.0  #: how often a running tournament's parent writes its heartbeat
#: A heartbeat older than this (by the reader's clock) is a run that stopped: killed, or its
#: machine gone. Three beats missed, so a parent busy storing a game is not taken for dead.
STALE_S = 3 * HEARTBEAT_S


def _expected_tables(version: int) -> frozenset[str]:
    """The tables a store of schema ``version`` must have."""
    since = (names for v, names in _TABLES_SINCE.items() if v <= version)
    return _TABLES.union(*since)


class StoreError(Exception):
    """The file cannot be used as a results store, or a write contradicts what it holds."""


@dataclass(frozen=True, slots=True)
class TournamentSpec:
    name: str
    variant: str  #: ruleset ident, e.g. "usa@1"
    players: int  #: seats per game
    rounds: int
    #: every deal derives from it: no command shows it before the tournament is finished
    base_seed: int
    config: dict[str, Any]  #: the rest of the runner's settings; must be JSON-serialisable


@dataclass(frozen=True, slots=True)
class Tournament:
    tournament_id: int
    spec: TournamentSpec
    created_at: float  #: Unix time, seconds
    finished_at: float | None  #: None while running, or if the run was killed
    abandoned_at: float | None = None  #: set by ``ttr tournament abandon``
    #: its run's last heartbeat (:meth:`Store.beat`); None once the run ended, or never run
    heartbeat_at: float | None = None

    @property
    def state(self) -> str:
        """``finished``, ``abandoned``, or ``unfinished`` (running, or killed: resumable)."""
        if self.finished_at is not None:
            return "finished"
        return "abandoned" if self.abandoned_at is not None else "unfinished"

    def running(self, now: float) -> bool:
        """Whether a run of this unfinished tournament is going on: its heartbeat is at most
        :data:`STALE_S` old at ``now``, a time read by whoever judges (the league page's
        server, ``leaderboard show``), never a browser's. A heartbeat ahead of ``now`` (two
        clocks a little apart) counts as fresh."""
        return (
            self.state == "unfinished"
            and self.heartbeat_at is not None
            and now - self.heartbeat_at <= STALE_S
        )


@dataclass(frozen=True, slots=True)
class SeatResult:
    seat: int
    bot_id: int
    score: int
    rank: int  #: 1 = first; equal ranks are ties
    tickets_completed: int
    tickets_failed: int
    faults: int
    defaults: int  #: decisions played by the safe default
    log_path: str | None = None  #: the bot's stdout+stderr in this game (None: not kept)


@dataclass(frozen=True, slots=True)
class FaultRow:
    seat: int
    decision: int  #: -1: StartGame / EndGame
    turn: int
    kind: str
    rule: str
    message: str


@dataclass(frozen=True, slots=True)
class GameResult:
    game_id: str
    tournament_id: int
    schedule_index: int  #: position in the tournament's schedule
    round: int
    variant: str
    num_seats: int
    seed: int
    end_reason: str
    decisions: int
    record_path: str | None
    started_at: float
    finished_at: float
    seats: tuple[SeatResult, ...]  #: ordered by seat
    faults: tuple[FaultRow, ...]  #: in the order they happened


@dataclass(frozen=True, slots=True)
class Disabled:
    """A bot disabled in a tournament for faulting too often (leaderboard/faults.py)."""

    tournament_id: int
    bot_id: int
    game_id: str  #: the stored game after which it was disabled
    reason: str  #: one line: the rule's figures and its last fault
    disabled_at: float  #: Unix time, seconds


@dataclass(frozen=True, slots=True)
class BotRow:
    bot_id: int
    name: str
    version: str
    author: str
    content_hash: str


def _check_game(game: GameResult) -> None:
    """Refuse a game that could not have been played, before any of it reaches the file."""
    seats = sorted(s.seat for s in game.seats)
    if len(game.seats) != game.num_seats or seats != list(range(game.num_seats)):
        raise ValueError(
            f"game {game.game_id}: seats {seats} do not match num_seats={game.num_seats}"
        )
    for fault in game.faults:
        if not 0 <= fault.seat < game.num_seats:
            raise ValueError(f"game {game.game_id}: a fault names seat {fault.seat}")


class Store:
    """An open results store. Opening creates the file (and its schema) if it is new, unless
    ``create`` is False: a command that only reads (``ttr leaderboard show``) should report a
    mistyped path, not leave an empty store behind.

    ``readonly`` (implies not ``create``) opens the file with SQLite's ``mode=ro``, for the
    league page's server, which must never change a store a tournament may be writing: every
    write fails, and a store that would need creating or upgrading is refused instead. (SQLite
    may still create the empty ``-wal``/``-shm`` side files a WAL reader needs; the database
    file itself is not touched.)"""

    def __init__(self, path: str | Path, *, create: bool = True, readonly: bool = False) -> None:
        self.path = Path(path)
        self.readonly = readonly
        #: the time of heartbeats and of a tournament's beginning; tests set their own
        self.clock: Callable[[], float] = time.time
        if (readonly or not create) and not self.path.exists():
            raise StoreError(f"{self.path}: no such results store")
        try:
            # isolation_level=None: no implicit transactions; every write opens its own
            # (BEGIN IMMEDIATE), so what is one transaction is visible in the code.
            if readonly:
                uri = f"file:{urllib.parse.quote(str(self.path.resolve()))}?mode=ro"
                self._db = sqlite3.connect(uri, timeout=30.0, isolation_level=None, uri=True)
            else:
                self._db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
        except sqlite3.Error as e:
            raise StoreError(f"{self.path}: cannot open ({e})") from None
        try:
            self._open()
        except sqlite3.DatabaseError as e:
            self._db.close()
            raise StoreError(f"{self.path}: not a readable SQLite database ({e})") from None
        except StoreError:
            self._db.close()
            raise

    def _open(self) -> None:
        """Recognise (or create) the store. Nothing is written until the file is known to be
        ours or empty: refusing someone else's database must leave it untouched."""
        app_id = self._db.execute("PRAGMA application_id").fetchone()[0]
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        tables = {
            row[0]
            for row in self._db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        }
        if app_id != APPLICATION_ID:
            if tables or app_id != 0 or version != 0 or self.readonly:
                listed = ", ".join(sorted(tables)) or "none"
                raise StoreError(
                    f"{self.path}: not a TTR Arena results store "
                    f"(application_id {app_id:#x}, tables: {listed})"
                )
        elif version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path}: results store schema version {version} is newer than this "
                f"program's ({SCHEMA_VERSION}); upgrade ttr-arena"
            )
        elif version < 1 or _expected_tables(version) - tables:
            missing = ", ".join(sorted(_expected_tables(version) - tables)) or "none"
            raise StoreError(
                f"{self.path}: damaged results store (schema version {version}, "
                f"missing tables: {missing})"
            )
        if self.readonly:
            if version < SCHEMA_VERSION:
                raise StoreError(
                    f"{self.path}: results store schema version {version} is older than this "
                    f"program's ({SCHEMA_VERSION}) and is opened read-only here; "
                    f"`ttr tournament list --db {self.path}` upgrades it in place"
                )
            self._db.execute("PRAGMA query_only = ON")
            return
        self._db.execute("PRAGMA foreign_keys = ON")
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute("PRAGMA synchronous = FULL")
        if app_id != APPLICATION_ID:
            # Statement by statement, not executescript(), which would COMMIT first and
            # so create the schema outside this transaction.
            with self._write() as db:
                for statement in _SCHEMA:
                    db.execute(statement)
                db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        elif version < SCHEMA_VERSION:
            self._migrate(version)

    def _migrate(self, version: int) -> None:
        """Upgrade an older store in place, in one transaction. The version is read again
        under the write lock: another process may have upgraded the file meanwhile."""
        try:
            with self._write() as db:
                version = db.execute("PRAGMA user_version").fetchone()[0]
                for step in range(version, SCHEMA_VERSION):
                    for statement in _MIGRATIONS[step]:
                        db.execute(statement)
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        except sqlite3.OperationalError as e:
            raise StoreError(
                f"{self.path}: cannot upgrade this results store from schema version "
                f"{version} to {SCHEMA_VERSION} ({e})"
            ) from None

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: all of it commits, or (on any exception) none of it.
        IMMEDIATE takes the write lock at the start, so a transaction never fails half-way
        because another connection wrote first."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """One read transaction: several SELECTs see the same snapshot even while the
        tournament parent commits games in between. Inside :meth:`snapshot`, that one."""
        if self._db.in_transaction:
            yield self._db
            return
        self._db.execute("BEGIN")
        try:
            yield self._db
        finally:
            self._db.execute("COMMIT")

    def snapshot(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        """Every read inside the ``with`` sees one state of the store: the league page
        gathers its tables, charts and progress from many queries, and a game committed
        between two of them must not make them disagree."""
        return self._read()

    def revision(self) -> tuple[int, ...]:
        """A cheap value that changes whenever the stored facts do (a game, an entry, a
        tournament's state, a bot disabled, a game skipped): a reader caches what it
        computes from the store under it."""
        row = self._db.execute(
            "SELECT (SELECT COUNT(*) FROM games), (SELECT COUNT(*) FROM bots),"
            " (SELECT COUNT(*) FROM tournaments),"
            " (SELECT COUNT(finished_at) + COUNT(abandoned_at) FROM tournaments),"
            " (SELECT COUNT(*) FROM entries),"
            " (SELECT TOTAL(accepted) + TOTAL(LENGTH(reason)) FROM entries),"
            " (SELECT COUNT(*) FROM disabled), (SELECT COUNT(*) FROM skipped),"
            " (SELECT COUNT(*) FROM starts)"
        ).fetchone()
        return tuple(int(x) for x in row)

    # the seed key

    def seed_key(self) -> bytes:
        """The store's secret key, made on first use: 32 bytes from ``secrets``, kept in a
        table of its own. Game seeds derive from a tournament's base seed under it
        (``leaderboard.schedule.game_seed``), so the same store and base seed deal the same
        games again (``--resume``, a rerun) while a base seed somebody typed (``--seed 42``)
        tells nobody without this file anything. Stores from before keys get one here, the
        first time a tournament needs it. Never printed, exported or sent anywhere."""
        row = self._db.execute("SELECT key FROM seed_key WHERE only = 1").fetchone()
        if row is None:
            if self.readonly:
                raise StoreError(f"{self.path}: this store has no seed key yet (read-only here)")
            # OR IGNORE: another process may have made the key since the SELECT; then its
            # key is the store's, read back below under the same write lock.
            with self._write() as db:
                db.execute(
                    "INSERT OR IGNORE INTO seed_key (only, key, created_at) VALUES (1, ?, ?)",
                    (secrets.token_bytes(32), time.time()),
                )
                row = db.execute("SELECT key FROM seed_key WHERE only = 1").fetchone()
        return bytes(row[0])

    # tournaments

    def begin_tournament(self, spec: TournamentSpec) -> Tournament:
        """Store a new tournament, its heartbeat begun: the run that begins it is running."""
        created_at = self.clock()
        config = json.dumps(spec.config, sort_keys=True)
        with self._write() as db:
            cursor = db.execute(
                "INSERT INTO tournaments (name, variant, players, rounds, base_seed, config,"
                " created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    spec.name,
                    spec.variant,
                    spec.players,
                    spec.rounds,
                    spec.base_seed,
                    config,
                    created_at,
                ),
            )
            tournament_id = cursor.lastrowid
            assert tournament_id is not None
            _beat(db, tournament_id, created_at)
        return Tournament(tournament_id, spec, created_at, None, heartbeat_at=created_at)

    def beat(self, tournament_id: int) -> None:
        """The run of this tournament is alive now (:data:`HEARTBEAT_S`, :data:`STALE_S`)."""
        with self._write() as db:
            _beat(db, tournament_id, self.clock())

    def end_heartbeat(self, tournament_id: int) -> None:
        """The run of this tournament has ended (finished, failed or interrupted): an
        unfinished tournament reads as stopped at once, not :data:`STALE_S` later."""
        with self._write() as db:
            db.execute("DELETE FROM heartbeats WHERE tournament_id = ?", (tournament_id,))

    def unfinished_tournament(self) -> Tournament | None:
        """The latest tournament neither finished nor abandoned: the one ``--resume`` goes on
        with, and the one that keeps a new run from starting."""
        row = self._db.execute(
            f"SELECT {_TOURNAMENT_COLUMNS} FROM tournaments"
            " WHERE finished_at IS NULL AND abandoned_at IS NULL"
            " ORDER BY tournament_id DESC LIMIT 1"
        ).fetchone()
        return None if row is None else _tournament(row)

    def finish_tournament(self, tournament_id: int) -> None:
        """Mark a tournament finished (idempotent: the first finishing time is kept)."""
        with self._write() as db:
            if (
                db.execute(
                    "SELECT 1 FROM tournaments WHERE tournament_id = ?", (tournament_id,)
                ).fetchone()
                is None
            ):
                raise StoreError(f"{self.path}: no tournament {tournament_id}")
            db.execute(
                "UPDATE tournaments SET finished_at = ?"
                " WHERE tournament_id = ? AND finished_at IS NULL",
                (time.time(), tournament_id),
            )

    def abandon_tournament(self, tournament_id: int) -> Tournament:
        """Mark an unfinished tournament abandoned: never to be resumed, no longer in the way
        of a new run. Its games stay. Idempotent (the first time is kept); a finished
        tournament cannot be abandoned."""
        with self._write() as db:
            row = db.execute(
                f"SELECT {_TOURNAMENT_COLUMNS} FROM tournaments WHERE tournament_id = ?",
                (tournament_id,),
            ).fetchone()
            if row is None:
                raise StoreError(f"{self.path}: no tournament {tournament_id}")
            if _tournament(row).state == "finished":
                raise StoreError(
                    f"{self.path}: tournament #{tournament_id} ({row[1]}) is finished; "
                    "only an unfinished one can be abandoned"
                )
            db.execute(
                "UPDATE tournaments SET abandoned_at = ?"
                " WHERE tournament_id = ? AND abandoned_at IS NULL",
                (time.time(), tournament_id),
            )
            row = db.execute(
                f"SELECT {_TOURNAMENT_COLUMNS} FROM tournaments WHERE tournament_id = ?",
                (tournament_id,),
            ).fetchone()
        return _tournament(row)

    def tournaments(self) -> list[Tournament]:
        rows = self._db.execute(
            f"SELECT {_TOURNAMENT_COLUMNS} FROM tournaments ORDER BY tournament_id"
        ).fetchall()
        return [_tournament(row) for row in rows]

    def tournament(self, ref: str, *, number: bool = True) -> Tournament:
        """The tournament ``ref`` names: its number (``3`` or ``#3``; not with ``number``
        False), else its name. A name several tournaments share is refused, naming their
        numbers, rather than guessed."""
        every = self.tournaments()
        digits = ref.removeprefix("#")
        if number and digits.isdigit():
            for t in every:
                if t.tournament_id == int(digits):
                    return t
        named = [t for t in every if t.spec.name == ref]
        if len(named) == 1:
            return named[0]
        if named:
            ids = ", ".join(f"#{t.tournament_id}" for t in named)
            raise StoreError(
                f"{self.path}: {len(named)} tournaments are named {ref!r} ({ids}); "
                "give the number instead"
            )
        known = ", ".join(f"#{t.tournament_id} {t.spec.name!r}" for t in every[-5:])
        raise StoreError(
            f"{self.path}: no tournament {ref!r} "
            f"({'latest: ' + known if known else 'the store holds none'})"
        )

    def game_counts(self) -> dict[int, int]:
        """Games stored per tournament_id (tournaments without games are absent)."""
        rows = self._db.execute(
            "SELECT tournament_id, COUNT(*) FROM games GROUP BY tournament_id"
        ).fetchall()
        return {row[0]: row[1] for row in rows}

    # bots and entries

    def add_bot(self, name: str, version: str, author: str, content_hash: str) -> int:
        """The bot_id of (name, version, content_hash), creating it if new. The same bot
        entered in several tournaments keeps one id, so its games pool into one rating; a bot
        whose files changed under the same version is a different bot. If the bot exists, the
        stored author is kept."""
        with self._write() as db:
            db.execute(
                "INSERT INTO bots (name, version, author, content_hash) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (name, version, content_hash) DO NOTHING",
                (name, version, author, content_hash),
            )
            row = db.execute(
                "SELECT bot_id FROM bots WHERE name = ? AND version = ? AND content_hash = ?",
                (name, version, content_hash),
            ).fetchone()
        return int(row[0])

    def bots(self) -> dict[int, BotRow]:
        rows = self._db.execute(
            "SELECT bot_id, name, version, author, content_hash FROM bots ORDER BY bot_id"
        ).fetchall()
        return {row[0]: BotRow(*row) for row in rows}

    def enter(
        self, tournament_id: int, bot_id: int, path: str, accepted: bool, reason: str = ""
    ) -> None:
        """Enter a bot in a tournament, or update its entry (a re-validated bot on resume)."""
        with self._write() as db:
            db.execute(
                "INSERT INTO entries (tournament_id, bot_id, path, accepted, reason)"
                " VALUES (?, ?, ?, ?, ?)"
                " ON CONFLICT (tournament_id, bot_id) DO UPDATE SET"
                " path = excluded.path, accepted = excluded.accepted, reason = excluded.reason",
                (tournament_id, bot_id, path, int(accepted), reason),
            )

    def entries(self, tournament_id: int) -> list[tuple[BotRow, str, bool, str]]:
        """(bot, path, accepted, reason) for each entry, ordered by bot name, version, id: a
        stable order, so a schedule built from it is the same on resume."""
        rows = self._db.execute(
            "SELECT b.bot_id, b.name, b.version, b.author, b.content_hash,"
            " e.path, e.accepted, e.reason"
            " FROM entries e JOIN bots b USING (bot_id) WHERE e.tournament_id = ?"
            " ORDER BY b.name, b.version, b.bot_id",
            (tournament_id,),
        ).fetchall()
        return [(BotRow(*row[:5]), row[5], bool(row[6]), row[7]) for row in rows]

    # games

    def finished_game_ids(self, tournament_id: int) -> set[str]:
        """The games of a tournament already stored: ``--resume`` schedules the others."""
        rows = self._db.execute(
            "SELECT game_id FROM games WHERE tournament_id = ?", (tournament_id,)
        ).fetchall()
        return {row[0] for row in rows}

    def record_game(self, game: GameResult) -> bool:
        """Store a finished game with its seats and faults, in one transaction.

        Returns False, writing nothing, if a game with this id is already stored (a resumed
        run replaying a game it had finished). A different game id at a schedule slot that is
        already taken raises :class:`StoreError`: that would count one slot twice.
        """
        _check_game(game)
        with self._write() as db:
            try:
                cursor = db.execute(
                    "INSERT INTO games (game_id, tournament_id, schedule_index, round, variant,"
                    " num_seats, seed, end_reason, decisions, record_path, started_at,"
                    " finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                    " ON CONFLICT (game_id) DO NOTHING",
                    (
                        game.game_id,
                        game.tournament_id,
                        game.schedule_index,
                        game.round,
                        game.variant,
                        game.num_seats,
                        game.seed,
                        game.end_reason,
                        game.decisions,
                        game.record_path,
                        game.started_at,
                        game.finished_at,
                    ),
                )
            except sqlite3.IntegrityError as e:
                raise StoreError(
                    f"{self.path}: cannot store game {game.game_id} "
                    f"(tournament {game.tournament_id}, slot {game.schedule_index}): {e}"
                ) from None
            if cursor.rowcount == 0:
                return False
            try:
                db.executemany(
                    "INSERT INTO seats (game_id, seat, bot_id, score, rank, tickets_completed,"
                    " tickets_failed, faults, defaults, log_path)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        (
                            game.game_id,
                            s.seat,
                            s.bot_id,
                            s.score,
                            s.rank,
                            s.tickets_completed,
                            s.tickets_failed,
                            s.faults,
                            s.defaults,
                            s.log_path,
                        )
                        for s in game.seats
                    ],
                )
                db.executemany(
                    "INSERT INTO faults (game_id, n, seat, decision, turn, kind, rule, message)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        (game.game_id, n, f.seat, f.decision, f.turn, f.kind, f.rule, f.message)
                        for n, f in enumerate(game.faults)
                    ],
                )
            except sqlite3.IntegrityError as e:
                raise StoreError(f"{self.path}: cannot store game {game.game_id}: {e}") from None
            _beat(db, game.tournament_id, self.clock())  # a stored game is a sign of life
        return True

    def games(
        self,
        variant: str | None = None,
        players: int | None = None,
        tournament_id: int | None = None,
    ) -> list[GameResult]:
        """Stored games, optionally of one variant ident, seat count and tournament, in
        (tournament_id, schedule_index) order: the schedule's order, not the order workers
        finished in, so ratings computed from them do not depend on scheduling luck."""
        where, params = _pool_filter(variant, players, tournament_id)
        with self._read() as db:
            game_rows = db.execute(
                f"SELECT {_GAME_COLUMNS} FROM games g{where}"
                " ORDER BY g.tournament_id, g.schedule_index, g.game_id",
                params,
            ).fetchall()
            seats: dict[str, list[SeatResult]] = {}
            for row in db.execute(
                "SELECT s.game_id, s.seat, s.bot_id, s.score, s.rank, s.tickets_completed,"
                " s.tickets_failed, s.faults, s.defaults, s.log_path"
                f" FROM seats s JOIN games g USING (game_id){where} ORDER BY s.game_id, s.seat",
                params,
            ):
                seats.setdefault(row[0], []).append(SeatResult(*row[1:]))
            faults: dict[str, list[FaultRow]] = {}
            for row in db.execute(
                "SELECT f.game_id, f.seat, f.decision, f.turn, f.kind, f.rule, f.message"
                f" FROM faults f JOIN games g USING (game_id){where} ORDER BY f.game_id, f.n",
                params,
            ):
                faults.setdefault(row[0], []).append(FaultRow(*row[1:]))
        return [
            _game(row, tuple(seats.get(row[0], ())), tuple(faults.get(row[0], ())))
            for row in game_rows
        ]

    def game(self, game_id: str) -> GameResult | None:
        """The stored game with exactly this id, or None."""
        with self._read() as db:
            row = db.execute(
                f"SELECT {_GAME_COLUMNS} FROM games g WHERE g.game_id = ?", (game_id,)
            ).fetchone()
            if row is None:
                return None
            seats = db.execute(
                "SELECT seat, bot_id, score, rank, tickets_completed, tickets_failed, faults,"
                " defaults, log_path FROM seats WHERE game_id = ? ORDER BY seat",
                (game_id,),
            ).fetchall()
            faults = db.execute(
                "SELECT seat, decision, turn, kind, rule, message FROM faults"
                " WHERE game_id = ? ORDER BY n",
                (game_id,),
            ).fetchall()
        return _game(
            row,
            tuple(SeatResult(*seat) for seat in seats),
            tuple(FaultRow(*fault) for fault in faults),
        )

    def pools(self, tournament_id: int | None = None) -> list[tuple[str, int]]:
        """The (variant, seat count) pairs that have games (of one tournament, if given): one
        rating pool each."""
        where, params = _pool_filter(None, None, tournament_id)
        rows = self._db.execute(
            f"SELECT DISTINCT g.variant, g.num_seats FROM games g{where}"
            " ORDER BY g.variant, g.num_seats",
            params,
        ).fetchall()
        return [(row[0], row[1]) for row in rows]

    def starting_ratings(self, variant: str, players: int) -> dict[int, tuple[float, float]]:
        """(mu, sigma) a bot starts from in a pool, where it does not start fresh: a ladder
        version starts from its author's mu (leaderboard/ladder/). Empty for tournaments."""
        rows = self._db.execute(
            "SELECT bot_id, mu, sigma FROM starts WHERE variant = ? AND players = ?",
            (variant, players),
        ).fetchall()
        return {row[0]: (row[1], row[2]) for row in rows}

    # disabled bots and the games they kept from being played (leaderboard/faults.py)

    def disable(self, tournament_id: int, bot_id: int, game_id: str, reason: str) -> bool:
        """Mark a bot disabled in a tournament after the stored game ``game_id``, with why.
        Its games already stored stay and count; the runner skips the rest (:meth:`skip`).
        False, changing nothing, if it was disabled already: the first reason is kept, so a
        resumed run that judges again cannot rewrite it."""
        with self._write() as db:
            cursor = db.execute(
                "INSERT INTO disabled (tournament_id, bot_id, game_id, reason, disabled_at)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT (tournament_id, bot_id) DO NOTHING",
                (tournament_id, bot_id, game_id, reason, time.time()),
            )
        return cursor.rowcount > 0

    def disabled(self, tournament_id: int | None = None) -> list[Disabled]:
        """The bots disabled (in one tournament, if given), in the order they were."""
        where, params = (
            ("", ()) if tournament_id is None else (" WHERE tournament_id = ?", (tournament_id,))
        )
        rows = self._db.execute(
            "SELECT tournament_id, bot_id, game_id, reason, disabled_at FROM disabled"
            f"{where} ORDER BY disabled_at, tournament_id, bot_id",
            params,
        ).fetchall()
        return [Disabled(*row) for row in rows]

    def skip(
        self, tournament_id: int, games: Sequence[tuple[str, int]], bot_id: int, reason: str
    ) -> int:
        """Record scheduled games (game id, schedule index) as skipped, never to be played,
        because of the disabled bot ``bot_id``; one transaction. A game already stored or
        skipped is left as it is. Returns how many were newly skipped."""
        now = time.time()
        added = 0
        with self._write() as db:
            for game_id, index in games:
                cursor = db.execute(
                    "INSERT INTO skipped (game_id, tournament_id, schedule_index, bot_id, reason,"
                    " skipped_at) SELECT ?, ?, ?, ?, ?, ?"
                    " WHERE NOT EXISTS (SELECT 1 FROM games WHERE game_id = ?"
                    " OR (tournament_id = ? AND schedule_index = ?))"
                    " ON CONFLICT DO NOTHING",
                    (
                        game_id,
                        tournament_id,
                        index,
                        bot_id,
                        reason,
                        now,
                        game_id,
                        tournament_id,
                        index,
                    ),
                )
                added += cursor.rowcount
        return added

    def skipped_game_ids(self, tournament_id: int) -> set[str]:
        """The games of a tournament skipped for a disabled bot: ``--resume`` plays neither
        these nor the stored ones."""
        rows = self._db.execute(
            "SELECT game_id FROM skipped WHERE tournament_id = ?", (tournament_id,)
        ).fetchall()
        return {row[0] for row in rows}

    def skip_counts(self) -> dict[int, int]:
        """Games skipped per tournament_id (tournaments without any are absent)."""
        rows = self._db.execute(
            "SELECT tournament_id, COUNT(*) FROM skipped GROUP BY tournament_id"
        ).fetchall()
        return {row[0]: row[1] for row in rows}


_TOURNAMENT_COLUMNS = (
    "tournament_id, name, variant, players, rounds, base_seed, config, created_at, finished_at,"
    " abandoned_at, (SELECT beat_at FROM heartbeats h"
    " WHERE h.tournament_id = tournaments.tournament_id)"
)
_GAME_COLUMNS = (
    "g.game_id, g.tournament_id, g.schedule_index, g.round, g.variant, g.num_seats, g.seed,"
    " g.end_reason, g.decisions, g.record_path, g.started_at, g.finished_at"
)


def _tournament(row: tuple[Any, ...]) -> Tournament:
    spec = TournamentSpec(
        name=row[1],
        variant=row[2],
        players=row[3],
        rounds=row[4],
        base_seed=row[5],
        config=json.loads(row[6]),
    )
    return Tournament(
        tournament_id=row[0],
        spec=spec,
        created_at=row[7],
        finished_at=row[8],
        abandoned_at=row[9],
        heartbeat_at=row[10],
    )


def _beat(db: sqlite3.Connection, tournament_id: int, now: float) -> None:
    """Set a tournament's heartbeat, inside the caller's write transaction."""
    db.execute(
        "INSERT INTO heartbeats (tournament_id, beat_at) VALUES (?, ?)"
        " ON CONFLICT (tournament_id) DO UPDATE SET beat_at = excluded.beat_at",
        (tournament_id, now),
    )


def _game(
    row: tuple[Any, ...], seats: tuple[SeatResult, ...], faults: tuple[FaultRow, ...]
) -> GameResult:
    return GameResult(
        game_id=row[0],
        tournament_id=row[1],
        schedule_index=row[2],
        round=row[3],
        variant=row[4],
        num_seats=row[5],
        seed=row[6],
        end_reason=row[7],
        decisions=row[8],
        record_path=row[9],
        started_at=row[10],
        finished_at=row[11],
        seats=seats,
        faults=faults,
    )


def _pool_filter(
    variant: str | None, players: int | None, tournament_id: int | None = None
) -> tuple[str, tuple[Any, ...]]:
    """A WHERE clause on games ``g`` (with its parameters) for an optional pool filter."""
    clauses: list[str] = []
    params: list[Any] = []
    if variant is not None:
        clauses.append("g.variant = ?")
        params.append(variant)
    if players is not None:
        clauses.append("g.num_seats = ?")
        params.append(players)
    if tournament_id is not None:
        clauses.append("g.tournament_id = ?")
        params.append(tournament_id)
    where = " WHERE " + " AND ".join(clauses) if clauses else ""
    return where, tuple(params)
