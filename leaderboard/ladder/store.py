"""The ladder's half of the results store: authors, versions, validations, the season.

Why in the results store. A season is one tournament of an ordinary store (its games, seats,
faults and disabled bots in the tables tournaments use), so ``ttr leaderboard show``, the
league page and its exports read a ladder exactly as they read a league night; what only a
ladder has (authors, each version's life, its validation games, where its rating starts) is
in the tables of schema 6 (leaderboard/store.py, ``_LADDER_TABLES``). Every change a restart
must find whole is one transaction here: a version and its bot row, an activation with its
starting ratings and the versions it retires, a disabling with its reason.

Tokens. ``add_author`` makes a token of 256 random bits and keeps only its SHA-256: a stolen
store gives no token, and since the token is random a plain hash is as strong as a slow one.
:meth:`LadderStore.author_for_token` finds the row by that hash and compares in constant time.
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import hmac
import json
import re
import secrets
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from leaderboard.ladder.model import PENDING, STATES, Author, SubmissionError
from leaderboard.ladder.season import Season, SeasonError, season_data, season_from
from leaderboard.store import Store, StoreError, Tournament, TournamentSpec

#: an author's name: what the tables and pages show, so plain and short
AUTHOR_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")
DAY_S = 24 * 3600.0


@dataclass(frozen=True, slots=True)
class VersionRow:
    bot_id: int
    author_id: int
    author: str
    number: int
    bot_name: str
    content_hash: str
    state: str
    reason: str
    folder: str  #: relative to the server's data folder
    files: int
    size: int
    uploaded_at: float
    updated_at: float


@dataclass(frozen=True, slots=True)
class ValidationRow:
    bot_id: int
    variant: str
    players: int
    ok: bool
    reason: str
    log_path: str | None
    finished_at: float


def token_hash(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()


_VERSION_COLUMNS = (
    "v.bot_id, v.author_id, a.name, v.number, v.bot_name, b.content_hash, v.state, v.reason,"
    " v.folder, v.files, v.size, v.uploaded_at, v.updated_at"
)
_VERSION_FROM = " FROM versions v JOIN authors a USING (author_id) JOIN bots b USING (bot_id)"


class LadderStore(Store):
    """A results store with the ladder's methods (one connection: one per thread)."""

    def __enter__(self) -> LadderStore:
        return self

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """The results store's write transaction, never left open: a COMMIT that fails (the
        disk full) leaves SQLite's transaction open, holding the write lock every other
        connection waits on, and this connection refusing every later BEGIN; it is rolled
        back here, so that the ladder pauses and resumes rather than locks up."""
        try:
            with super()._write() as db:
                yield db
        except BaseException:
            if self._db.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    self._db.execute("ROLLBACK")
            raise

    def probe_write(self) -> None:
        """One write transaction that changes nothing: raises what a write would (the disk
        full) while the ladder is paused, and nothing once it can write again."""
        with self._write() as db:
            db.execute("UPDATE ladder SET frozen_at = frozen_at WHERE only = 1")

    # the season ----------------------------------------------------------------------------

    def season_tournament(self) -> Tournament | None:
        row = self._db.execute("SELECT tournament_id FROM ladder WHERE only = 1").fetchone()
        return None if row is None else self.tournament(str(row[0]))

    def open_season(self, name: str, variant: str, players: int, config: dict[str, Any]) -> int:
        """The season's tournament id, begun on first use. A store holds one season: a ladder
        started on a league night's store would mix its games into that night's."""
        season = self.season_tournament()
        if season is not None:
            return season.tournament_id
        if self.tournaments():
            raise StoreError(
                f"{self.path}: this store holds tournaments; a season needs a store of its own"
            )
        spec = TournamentSpec(name, variant, players, 0, 0, {**config, "ladder": True})
        tournament = self.begin_tournament(spec)
        with self._write() as db:
            db.execute(
                "INSERT INTO ladder (only, tournament_id, frozen_at) VALUES (1, ?, NULL)",
                (tournament.tournament_id,),
            )
        return tournament.tournament_id

    def save_season(self, season: Season, config: dict[str, Any]) -> None:
        """Keep the season this start runs: its settings whole (``config["season"]``, the
        season file's shape: :meth:`stored_season` reads it back at a start without a file),
        its name, and its first pool as the tournament's (``ttr tournament list`` and the
        league page read these)."""
        tournament = self.season_tournament()
        if tournament is None:
            return
        config = {**config, "season": season_data(season), "ladder": True}
        first = season.pools[0]
        with self._write() as db:
            db.execute(
                "UPDATE tournaments SET config = ?, name = ?, variant = ?, players = ?"
                " WHERE tournament_id = ?",
                (
                    json.dumps(config, sort_keys=True),
                    season.name,
                    first.variant,
                    first.players,
                    tournament.tournament_id,
                ),
            )

    def stored_season(self) -> Season | None:
        """The season this store last ran (None: it holds none yet). A store of a server older
        than ``config["season"]`` kept the pools, clocks, daily count, active versions and
        fault rule: those are read, the rest is the defaults. :class:`StoreError` if it cannot
        be read as a season (a variant this program no longer has)."""
        tournament = self.season_tournament()
        if tournament is None:
            return None
        config = tournament.spec.config
        data = config.get("season")
        if not isinstance(data, dict):
            data = {"name": tournament.spec.name}
            pools = config.get("pools") or [[tournament.spec.variant, tournament.spec.players, 1]]
            data["pools"] = [{"variant": v, "players": p, "weight": w} for v, p, w in pools]
            data["clock"] = {k: config[k] for k in ("move_ms", "bank_ms") if k in config}
            data["submissions"] = {
                k: config[k] for k in ("per_day", "active_versions") if k in config
            }
            if isinstance(config.get("fault_rule"), dict):
                data["faults"] = config["fault_rule"]
        try:
            return season_from(data)
        except SeasonError as e:
            raise StoreError(f"{self.path}: the stored season cannot be read: {e}") from None

    def frozen(self) -> bool:
        row = self._db.execute("SELECT frozen_at FROM ladder WHERE only = 1").fetchone()
        return row is not None and row[0] is not None

    def set_frozen(self, frozen: bool) -> bool:
        """Freeze (or reopen) submissions; False if there is no season in this store."""
        with self._write() as db:
            cursor = db.execute(
                "UPDATE ladder SET frozen_at = ? WHERE only = 1", (time.time() if frozen else None,)
            )
        return cursor.rowcount > 0

    def next_index(self, tournament_id: int) -> int:
        row = self._db.execute(
            "SELECT COALESCE(MAX(schedule_index), -1) + 1 FROM games WHERE tournament_id = ?",
            (tournament_id,),
        ).fetchone()
        return int(row[0])

    # authors -------------------------------------------------------------------------------

    def add_author(self, name: str) -> str:
        """A new author and their token, returned once (only its hash is kept)."""
        if not AUTHOR_NAME.fullmatch(name):
            raise StoreError(
                f"author name {name!r}: 1 to 40 letters, digits, '_', '.', '-' "
                "(starting with a letter or digit)"
            )
        token = secrets.token_urlsafe(32)
        with self._write() as db:
            if db.execute("SELECT 1 FROM authors WHERE name = ?", (name,)).fetchone():
                raise StoreError(f"author {name!r} exists already")
            db.execute(
                "INSERT INTO authors (name, token_hash, created_at) VALUES (?, ?, ?)",
                (name, token_hash(token), time.time()),
            )
        return token

    def new_token(self, name: str) -> str:
        """A fresh token for an author (the old one stops working at once)."""
        token = secrets.token_urlsafe(32)
        with self._write() as db:
            cursor = db.execute(
                "UPDATE authors SET token_hash = ? WHERE name = ?", (token_hash(token), name)
            )
        if cursor.rowcount == 0:
            raise StoreError(f"no author {name!r}")
        return token

    def author_for_token(self, token: str) -> Author | None:
        wanted = token_hash(token)
        row = self._db.execute(
            "SELECT author_id, name, created_at, token_hash FROM authors WHERE token_hash = ?",
            (wanted,),
        ).fetchone()
        if row is None or not hmac.compare_digest(bytes(row[3]), wanted):
            return None
        return Author(row[0], row[1], row[2])

    def authors(self) -> list[Author]:
        rows = self._db.execute(
            "SELECT author_id, name, created_at FROM authors ORDER BY name"
        ).fetchall()
        return [Author(*row) for row in rows]

    # versions ------------------------------------------------------------------------------

    def find_version(self, author_id: int, content_hash: str) -> VersionRow | None:
        rows = self._versions(
            " WHERE v.author_id = ? AND b.content_hash = ?", (author_id, content_hash)
        )
        return rows[0] if rows else None

    def add_version(
        self,
        tournament_id: int,
        author: Author,
        bot_name: str,
        content_hash: str,
        folder: str,
        files: int,
        size: int,
        per_day: int,
    ) -> tuple[VersionRow, bool]:
        """Store a submitted version (queued for its build), or find the author's version
        with this content; (the row, whether it is new). Refuses a submission over the
        author's daily count, counted in the same transaction (two uploads at once cannot
        both take the last one)."""
        now = time.time()
        with self._write() as db:
            existing = db.execute(
                f"SELECT v.bot_id{_VERSION_FROM} WHERE v.author_id = ? AND b.content_hash = ?",
                (author.author_id, content_hash),
            ).fetchone()
            if existing is None:
                used = db.execute(
                    "SELECT COUNT(*), MIN(uploaded_at) FROM versions"
                    " WHERE author_id = ? AND uploaded_at > ?",
                    (author.author_id, now - DAY_S),
                ).fetchone()
                if used[0] >= per_day:
                    wait = max(0.0, used[1] + DAY_S - now)
                    raise SubmissionError(
                        f"{author.name} has made {used[0]} submissions in the last 24 hours, "
                        f"the season's limit; the next is possible in {_duration(wait)}",
                        429,
                    )
                number = db.execute(
                    "SELECT COALESCE(MAX(number), 0) + 1 FROM versions WHERE author_id = ?",
                    (author.author_id,),
                ).fetchone()[0]
                cursor = db.execute(
                    "INSERT INTO bots (name, version, author, content_hash) VALUES (?, ?, ?, ?)",
                    (author.name, f"v{number}", author.name, content_hash),
                )
                db.execute(
                    "INSERT INTO versions (bot_id, tournament_id, author_id, number, bot_name,"
                    " state, reason, folder, files, size, uploaded_at, updated_at)"
                    " VALUES (?, ?, ?, ?, ?, 'queued', '', ?, ?, ?, ?, ?)",
                    (
                        cursor.lastrowid,
                        tournament_id,
                        author.author_id,
                        number,
                        bot_name,
                        folder,
                        files,
                        size,
                        now,
                        now,
                    ),
                )
                bot_id = int(cursor.lastrowid or 0)
            else:
                bot_id = existing[0]
        row = self.version_row(bot_id)
        assert row is not None
        return row, existing is None

    def version_row(self, bot_id: int) -> VersionRow | None:
        rows = self._versions(" WHERE v.bot_id = ?", (bot_id,))
        return rows[0] if rows else None

    def author_version(self, author_id: int, number: int) -> VersionRow | None:
        rows = self._versions(" WHERE v.author_id = ? AND v.number = ?", (author_id, number))
        return rows[0] if rows else None

    def version_rows(
        self, author_id: int | None = None, states: frozenset[str] | None = None
    ) -> list[VersionRow]:
        """Versions (of one author, in some states), oldest first."""
        clauses: list[str] = []
        params: list[Any] = []
        if author_id is not None:
            clauses.append("v.author_id = ?")
            params.append(author_id)
        if states is not None:
            clauses.append(f"v.state IN ({', '.join('?' * len(states))})")
            params.extend(sorted(states))
        where = " WHERE " + " AND ".join(clauses) if clauses else ""
        return self._versions(where, tuple(params))

    def build_queue(self, since: float) -> list[VersionRow]:
        """The queued versions in the order their builds start: fair between authors. Each
        author's versions wait behind those of every author who has had fewer builds since
        ``since`` (a day ago: the window ``per_day`` counts in), the author's own in upload
        order; so ten uploads of one author take turns with the others' instead of holding
        the build slots for hours. A version counts as built once it has left ``queued``."""
        rows = self._versions("", ())
        had = collections.Counter(
            r.author_id for r in rows if r.state != "queued" and r.uploaded_at > since
        )
        queued = [r for r in rows if r.state == "queued"]
        turn: dict[int, int] = {}
        for row in queued:  # oldest first: the author's n-th queued version waits n turns more
            turn[row.bot_id] = had[row.author_id]
            had[row.author_id] += 1
        return sorted(queued, key=lambda r: (turn[r.bot_id], r.uploaded_at, r.bot_id))

    def version_folders(self) -> set[str]:
        return {row[0] for row in self._db.execute("SELECT folder FROM versions")}

    def _versions(self, where: str, params: tuple[Any, ...]) -> list[VersionRow]:
        rows = self._db.execute(
            f"SELECT {_VERSION_COLUMNS}{_VERSION_FROM}{where} ORDER BY v.bot_id", params
        ).fetchall()
        return [VersionRow(*row) for row in rows]

    def set_state(
        self, bot_id: int, state: str, reason: str = "", *, only_from: frozenset[str] | None = None
    ) -> bool:
        """Move a version to ``state``; with ``only_from``, only if it is in one of those (a
        version disabled meanwhile is not brought back by a late answer)."""
        if state not in STATES:
            raise ValueError(f"unknown version state {state!r}")
        with self._write() as db:
            return self._set_state(db, bot_id, state, reason, only_from)

    @staticmethod
    def _set_state(
        db: Any, bot_id: int, state: str, reason: str, only_from: frozenset[str] | None
    ) -> bool:
        guard, params = "", tuple[str, ...]()
        if only_from is not None:
            guard = f" AND state IN ({', '.join('?' * len(only_from))})"
            params = tuple(sorted(only_from))
        cursor = db.execute(
            f"UPDATE versions SET state = ?, reason = ?, updated_at = ? WHERE bot_id = ?{guard}",
            (state, reason, time.time(), bot_id, *params),
        )
        return bool(cursor.rowcount)

    def restart_pending(self) -> tuple[int, int]:
        """After a stop or a kill: builds cut short are queued again, validations cut short
        are played again from the start. (queued again, validating again)."""
        with self._write() as db:
            builds = db.execute(
                "UPDATE versions SET state = 'queued', updated_at = ? WHERE state = 'building'",
                (time.time(),),
            ).rowcount
            validating = db.execute(
                "SELECT COUNT(*) FROM versions WHERE state = 'validating'"
            ).fetchone()[0]
            db.execute(
                "DELETE FROM validations WHERE bot_id IN"
                " (SELECT bot_id FROM versions WHERE state = 'validating')"
            )
        return builds, validating

    def activate(
        self,
        bot_id: int,
        starts: dict[tuple[str, int], tuple[float, float]],
        retire: dict[int, str],
    ) -> bool:
        """A validated version joins the ladder, with where its rating starts in each pool,
        retiring ``retire`` (bot id -> why) in the same transaction. False if it was no
        longer validating."""
        with self._write() as db:
            if not self._set_state(db, bot_id, "active", "", frozenset({"validating"})):
                return False
            for (variant, players), (mu, sigma) in starts.items():
                db.execute(
                    "INSERT INTO starts (bot_id, variant, players, mu, sigma)"
                    " VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    (bot_id, variant, players, mu, sigma),
                )
            for old, why in retire.items():
                self._set_state(db, old, "retired", why, frozenset({"active"}))
        return True

    def disable_version(self, tournament_id: int, bot_id: int, game_id: str, reason: str) -> bool:
        """Disable a version for its faults: the tournament's ``disabled`` row (the league page
        lists it) and the version's state, together."""
        with self._write() as db:
            db.execute(
                "INSERT INTO disabled (tournament_id, bot_id, game_id, reason, disabled_at)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT (tournament_id, bot_id) DO NOTHING",
                (tournament_id, bot_id, game_id, reason, time.time()),
            )
            return self._set_state(db, bot_id, "disabled", reason, frozenset({"active"}))

    def retire(self, bot_id: int, reason: str) -> bool:
        return self.set_state(bot_id, "retired", reason, only_from=frozenset({"active"}) | PENDING)

    # validations ---------------------------------------------------------------------------

    def record_validation(
        self, bot_id: int, variant: str, players: int, ok: bool, reason: str, log_path: str | None
    ) -> None:
        with self._write() as db:
            db.execute(
                "INSERT INTO validations (bot_id, variant, players, ok, reason, log_path,"
                " finished_at) VALUES (?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (bot_id, variant, players) DO UPDATE SET ok = excluded.ok,"
                " reason = excluded.reason, log_path = excluded.log_path,"
                " finished_at = excluded.finished_at",
                (bot_id, variant, players, int(ok), reason, log_path, time.time()),
            )

    def validation_rows(self, bot_id: int) -> list[ValidationRow]:
        rows = self._db.execute(
            "SELECT bot_id, variant, players, ok, reason, log_path, finished_at FROM validations"
            " WHERE bot_id = ? ORDER BY finished_at",
            (bot_id,),
        ).fetchall()
        return [ValidationRow(r[0], r[1], r[2], bool(r[3]), r[4], r[5], r[6]) for r in rows]

    # games ---------------------------------------------------------------------------------

    def seat_rows(
        self, bot_ids: list[int], limit: int
    ) -> list[tuple[str, float, str, int, int, int, int, int, int, str | None]]:
        """(game id, finished, variant, seats, bot id, seat, rank, score, faults, log) of the
        given bots' seats, newest first."""
        if not bot_ids:
            return []
        marks = ", ".join("?" * len(bot_ids))
        return self._db.execute(
            "SELECT g.game_id, g.finished_at, g.variant, g.num_seats, s.bot_id, s.seat, s.rank,"
            " s.score, s.faults, s.log_path FROM seats s JOIN games g USING (game_id)"
            f" WHERE s.bot_id IN ({marks}) ORDER BY g.schedule_index DESC LIMIT ?",
            (*bot_ids, limit),
        ).fetchall()

    def game_seats(self, game_ids: list[str]) -> dict[str, list[int]]:
        """Each game's bot ids in seat order."""
        if not game_ids:
            return {}
        marks = ", ".join("?" * len(game_ids))
        out: dict[str, list[int]] = {}
        for game_id, bot_id in self._db.execute(
            f"SELECT game_id, bot_id FROM seats WHERE game_id IN ({marks}) ORDER BY game_id, seat",
            tuple(game_ids),
        ):
            out.setdefault(game_id, []).append(bot_id)
        return out

    def pool_counts(self, bot_id: int, variant: str, players: int) -> tuple[int, int, int]:
        """(games, wins, games with a fault) of a bot in a pool."""
        row = self._db.execute(
            "SELECT COUNT(*), TOTAL(s.rank = 1), TOTAL(s.faults > 0) FROM seats s"
            " JOIN games g USING (game_id)"
            " WHERE s.bot_id = ? AND g.variant = ? AND g.num_seats = ?",
            (bot_id, variant, players),
        ).fetchone()
        return int(row[0]), int(row[1]), int(row[2])

    def game_ids(self, tournament_id: int) -> set[str]:
        return self.finished_game_ids(tournament_id)


def _duration(seconds: float) -> str:
    minutes = int(seconds // 60) + 1
    return f"{minutes // 60} h {minutes % 60} min" if minutes >= 60 else f"{minutes} min"
