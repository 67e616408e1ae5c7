"""What the ladder shows the world: the values and the one interface the web layer uses.

Why a module of its own. The HTTP app (``ttr_arena.server``) and the command line sit above
the ladder and must not reach into its store or its loop; they see an author, their versions
and their games through :class:`Backend`, which :class:`leaderboard.ladder.service.Ladder`
implements (and tests may fake). Every method that takes an :class:`Author` answers for that
author alone: another author's version is ``None`` here, exactly as one that does not exist,
so that a stolen id tells nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

#: A version's life. ``queued``: stored, waiting for a build slot (builds start in a fair
#: order: leaderboard/ladder/store.py, ``build_queue``); ``building``: its build has started;
#: ``validating``: playing its validation games; ``active``: on the ladder; ``retired``: left
#: the ladder for a newer version of its author (``active_versions`` in the season) or by the
#: organiser; ``disabled``: faulted too often (leaderboard/faults.py); ``failed``: its build or
#: a validation game failed (``reason`` holds the first error).
STATES = ("queued", "building", "validating", "active", "retired", "disabled", "failed")
#: the states a version is still on its way in
PENDING = frozenset({"queued", "building", "validating"})
#: the states that end a version's story (``--wait`` stops at these or at ``active``)
SETTLED = frozenset({"active", "retired", "disabled", "failed"})


class SubmissionError(Exception):
    """A submission refused for a reason other than its content (which is an
    ``referee.hosting.upload.UploadError``): the season is frozen (403), the author has used
    their submissions for the day (429). ``status`` is the HTTP status to answer with."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class DiskFull(SubmissionError):
    """The server's disk is full: the ladder is paused (it tries again every few seconds and
    goes on by itself once the disk has room) and an upload is refused with 507 Insufficient
    Storage, nothing of it stored. The author sends it again later; the organiser frees
    space (the server's log and ``/api/season`` say why it paused)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, 507)


#: the ladder's states (:attr:`SeasonInfo.state`)
RUNNING, PAUSED, STOPPED = "running", "paused", "stopped"


@dataclass(frozen=True, slots=True)
class Author:
    author_id: int
    name: str
    created_at: float  #: Unix time, seconds


@dataclass(frozen=True, slots=True)
class PoolStanding:
    """A version in one rating pool (one variant and seat count)."""

    variant: str  #: ruleset ident, e.g. ``usa@1``
    players: int
    mu: float
    sigma: float
    games: int  #: ladder games played in this pool
    wins: int
    faulty_games: int  #: games with a fault in its seat
    rank: int | None  #: its place among the pool's active versions (1 = first); None if not active


@dataclass(frozen=True, slots=True)
class VersionInfo:
    bot_id: int  #: the results store's bot id (its games and ratings are keyed by it)
    author: str
    number: int  #: 1, 2, 3... per author, in submission order
    bot_name: str  #: the ``name`` in its bot.toml
    content_hash: str
    state: str  #: one of :data:`STATES`
    reason: str  #: why it failed, was disabled or retired ("" otherwise)
    uploaded_at: float
    updated_at: float  #: when its state last changed
    files: int
    size: int  #: bytes of its files
    pools: tuple[PoolStanding, ...]  #: one per pool of the season, in the season's order

    @property
    def label(self) -> str:
        return f"v{self.number}"


@dataclass(frozen=True, slots=True)
class ValidationGame:
    """One validation game of a version (one per pool of the season)."""

    variant: str
    players: int
    ok: bool
    reason: str  #: the first error when not ok, whole ("" when ok)
    finished_at: float
    log: bool  #: whether its seat's output was kept (:meth:`Backend.validation_log`)


@dataclass(frozen=True, slots=True)
class AuthorGame:
    """A ladder game one of an author's versions played, from that version's seat."""

    game_id: str
    finished_at: float
    variant: str
    players: int
    number: int  #: which of the author's versions sat
    seat: int
    rank: int
    score: int
    faults: int
    opponents: tuple[str, ...]  #: "author vN" of the other seats, in seat order
    log: bool  #: whether the seat's output was kept (:meth:`Backend.game_log`)


@dataclass(frozen=True, slots=True)
class Submitted:
    version: VersionInfo
    new: bool  #: False: identical content was already a version of this author (that one)
    #: what the archive held that a bot folder leaves out and so was not stored
    skipped: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SeasonInfo:
    """What the pages and ``ttr submissions`` show of the season."""

    name: str
    pools: tuple[tuple[str, int], ...]  #: (variant ident, players)
    frozen: bool
    submissions_per_day: int
    active_versions: int
    upload_bytes: int  #: the largest archive accepted
    #: the ladder: ``running``; ``paused`` (the disk is full: no builds or games, uploads
    #: refused with 507, until a retry finds room); ``stopped`` (its thread died: the server
    #: is exiting with the reason, for its supervisor to start it again)
    state: str = RUNNING
    reason: str = ""  #: why it is paused or stopped ("" while running)
    since: float | None = None  #: when it paused or stopped (Unix time); None while running
    build_timeout_s: float = 900.0  #: a build's time limit (the season's ``build_timeout_s``)


class Backend(Protocol):
    """The ladder as the web layer sees it. Safe to call from any thread."""

    def season(self) -> SeasonInfo: ...

    def store_path(self) -> Path:
        """The results store (for the league page and replays, read-only)."""
        ...

    def authenticate(self, token: str) -> Author | None:
        """The author whose token this is (compared in constant time), or None."""
        ...

    def submit(self, author: Author, data: bytes | IO[bytes]) -> Submitted:
        """Store an uploaded archive as a new version and queue its build. Raises
        ``referee.hosting.upload.UploadError`` (its ``status``: 413, 400 or 422) or
        :class:`SubmissionError` (403, 429; :class:`DiskFull`: 507), having stored nothing."""
        ...

    def versions(self, author: Author) -> list[VersionInfo]:
        """The author's versions, newest first."""
        ...

    def version(self, author: Author, number: int) -> VersionInfo | None: ...

    def build_log(self, author: Author, number: int) -> str | None:
        """The version's build output (capped; "" if it has no build step), or None if there
        is no such version of this author."""
        ...

    def validations(self, author: Author, number: int) -> list[ValidationGame] | None: ...

    def validation_log(self, author: Author, number: int, index: int) -> Path | None:
        """The file of the version's output in its ``index``-th validation game, or None."""
        ...

    def games(
        self, author: Author, number: int | None = None, limit: int = 100
    ) -> list[AuthorGame]:
        """The author's ladder games (of one version, or all), newest first."""
        ...

    def game_log(self, author: Author, game_id: str, seat: int) -> Path | None:
        """The file of one seat's output in a ladder game, only if that seat was one of this
        author's versions (None otherwise: never another author's logs)."""
        ...
