"""A :class:`~leaderboard.ladder.model.Backend` in memory, for the web layer's tests.

Uploads are really unpacked (``referee.hosting.upload.unpack`` into a temporary folder), so a
hostile archive is refused exactly as the ladder refuses it; every call to :meth:`submit` is
recorded (``submits``), with what it stored, so a test can prove that nothing was. A version's
state moves on only when a test says so (:meth:`advance`), or, with ``advance_on_poll``, one
step each time :meth:`version` is asked for it (what ``ttr submit --wait`` polls).
"""

from __future__ import annotations

import dataclasses
import hmac
import itertools
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

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
from referee.hosting.upload import UploadError, UploadLimits, unpack

POOLS = (("usa@1", 2), ("usa@1", 4))


@dataclass
class Call:
    author: str
    status: int | None = None  #: the refusal's status; None: accepted
    stored: bool = False


@dataclass
class _Version:
    info: VersionInfo
    folder: Path
    #: the states still to come, and the reason given with the last one
    script: list[str] = field(default_factory=list)
    final_reason: str = ""
    validations: list[ValidationGame] = field(default_factory=list)
    build_log: str = ""


class FakeBackend:
    def __init__(self, root: Path, store: Path, upload_bytes: int = 1 << 20) -> None:
        self.root = root
        self.store = store
        self.upload_bytes = upload_bytes
        self.frozen = False
        self.advance_on_poll = False
        #: the next upload's story: its states after "queued" and the reason of the last
        self.outcome: tuple[list[str], str] = (["building", "validating", "active"], "")
        self.per_day = 20
        self.submits: list[Call] = []
        self._lock = threading.Lock()
        self._tokens: dict[str, Author] = {}
        self._versions: dict[int, list[_Version]] = {}
        self._games: list[tuple[AuthorGame, int, Path | None]] = []  # (game, author id, log)
        self._ids = itertools.count(1)
        self._bot_ids = itertools.count(100)
        (root / "uploads").mkdir(parents=True, exist_ok=True)
        (root / "logs").mkdir(parents=True, exist_ok=True)

    # set-up by tests ------------------------------------------------------------------------

    def add_author(self, name: str, token: str) -> Author:
        author = Author(next(self._ids), name, time.time())
        self._tokens[token] = author
        self._versions[author.author_id] = []
        return author

    def add_game(
        self, author: Author, number: int, game_id: str, seat: int, log_text: str | None
    ) -> None:
        """A ladder game in which the author's version ``number`` sat at ``seat``."""
        log = None
        if log_text is not None:
            log = self.root / "logs" / f"{game_id}-seat{seat}.log"
            log.write_text(log_text)
        game = AuthorGame(
            game_id=game_id,
            finished_at=time.time(),
            variant="usa@1",
            players=2,
            number=number,
            seat=seat,
            rank=1,
            score=99,
            faults=0,
            opponents=("someone v1",),
            log=log is not None,
        )
        self._games.append((game, author.author_id, log))

    def advance(self, author: Author, number: int) -> VersionInfo:
        with self._lock:
            v = self._find(author, number)
            assert v is not None
            self._step(v)
            return v.info

    def stored(self) -> int:
        """Versions stored, all authors."""
        return sum(len(vs) for vs in self._versions.values())

    # Backend ---------------------------------------------------------------------------------

    def season(self) -> SeasonInfo:
        return SeasonInfo(
            name="test season",
            pools=POOLS,
            frozen=self.frozen,
            submissions_per_day=self.per_day,
            active_versions=2,
            upload_bytes=self.upload_bytes,
        )

    def store_path(self) -> Path:
        return self.store

    def authenticate(self, token: str) -> Author | None:
        found = None
        for known, author in self._tokens.items():
            if hmac.compare_digest(known.encode(), token.encode("utf-8", "surrogateescape")):
                found = author
        return found

    def submit(self, author: Author, data: bytes | IO[bytes]) -> Submitted:
        call = Call(author.name)
        self.submits.append(call)
        if self.frozen:
            call.status = 403
            raise SubmissionError("the season is frozen: no new submissions", 403)
        with self._lock:
            versions = self._versions[author.author_id]
            if len(versions) >= self.per_day:
                call.status = 429
                raise SubmissionError(f"at most {self.per_day} submissions a day", 429)
            dest = self.root / "uploads" / f"a{author.author_id}-{len(versions) + 1}"
            try:
                bot = unpack(data, dest, UploadLimits(upload_bytes=self.upload_bytes))
            except UploadError as e:
                call.status = e.status
                raise
            for v in versions:
                if v.info.content_hash == bot.content_hash:
                    import shutil

                    shutil.rmtree(dest)
                    return Submitted(v.info, False, bot.skipped)
            now = time.time()
            info = VersionInfo(
                bot_id=next(self._bot_ids),
                author=author.name,
                number=len(versions) + 1,
                bot_name=bot.config.name,
                content_hash=bot.content_hash,
                state="queued",
                reason="",
                uploaded_at=now,
                updated_at=now,
                files=bot.files,
                size=bot.size,
                pools=tuple(
                    PoolStanding(variant, players, 25.0, 8.333, 0, 0, 0, None)
                    for variant, players in POOLS
                ),
            )
            script, reason = self.outcome
            versions.insert(0, _Version(info, dest, list(script), reason))
            call.stored = True
            return Submitted(info, True, bot.skipped)

    def versions(self, author: Author) -> list[VersionInfo]:
        return [v.info for v in self._versions.get(author.author_id, [])]

    def version(self, author: Author, number: int) -> VersionInfo | None:
        with self._lock:
            v = self._find(author, number)
            if v is None:
                return None
            if self.advance_on_poll:
                self._step(v)
            return v.info

    def build_log(self, author: Author, number: int) -> str | None:
        v = self._find(author, number)
        return None if v is None else v.build_log

    def validations(self, author: Author, number: int) -> list[ValidationGame] | None:
        v = self._find(author, number)
        return None if v is None else list(v.validations)

    def validation_log(self, author: Author, number: int, index: int) -> Path | None:
        v = self._find(author, number)
        if v is None or not 0 <= index < len(v.validations) or not v.validations[index].log:
            return None
        return self.root / "logs" / f"a{author.author_id}-v{number}-val{index}.log"

    def games(
        self, author: Author, number: int | None = None, limit: int = 100
    ) -> list[AuthorGame]:
        found = [
            g
            for g, owner, _ in self._games
            if owner == author.author_id and (number is None or g.number == number)
        ]
        return found[::-1][:limit]

    def game_log(self, author: Author, game_id: str, seat: int) -> Path | None:
        for g, owner, log in self._games:
            if g.game_id == game_id and g.seat == seat and owner == author.author_id:
                return log
        return None

    # inside -----------------------------------------------------------------------------------

    def _find(self, author: Author, number: int) -> _Version | None:
        for v in self._versions.get(author.author_id, []):
            if v.info.number == number:
                return v
        return None

    def _step(self, v: _Version) -> None:
        if not v.script:
            return
        state = v.script.pop(0)
        reason = v.final_reason if not v.script else ""
        pools = v.info.pools
        if state == "building":
            v.build_log = "$ pip install -r requirements.txt\n<b>built</b> & done\n"
        if state == "active":
            pools = tuple(
                dataclasses.replace(p, rank=i + 1, games=3, wins=2) for i, p in enumerate(pools)
            )
        if state in ("active", "failed"):
            ok = state == "active"
            v.validations = [
                ValidationGame("usa@1", 2, ok, "" if ok else reason, time.time(), True)
            ]
            path = self.root / "logs" / f"a{self._owner(v)}-v{v.info.number}-val0.log"
            path.write_text("validation output <script>alert(1)</script>\n")
        v.info = dataclasses.replace(
            v.info, state=state, reason=reason, updated_at=time.time(), pools=pools
        )

    def _owner(self, v: _Version) -> int:
        for author_id, versions in self._versions.items():
            if v in versions:
                return author_id
        raise KeyError(v)
