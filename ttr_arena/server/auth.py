"""Who is asking: the bearer token of the API, the session cookie of the author pages, the CSRF
token of their forms, and the rate limits that keep guessing and flooding slow.

All of it in memory, in this process: a restarted server forgets its sessions (authors log in
again) and its rate-limit windows. Secrets are compared with :func:`hmac.compare_digest`;
a session id is kept only as its SHA-256, so a dump of the process's memory, or a timing of
the dictionary lookup (keyed by that hash), tells nothing about a live cookie.

A session lasts only as long as the token it was opened with (issue 35, item 5: a replaced
token's browser sessions lived on for 12 h, and could upload). The token is kept with the
session, sealed with a pad drawn from the session id, which only the cookie holds: each
request unseals it and asks the backend whether it is still the author's, so
``ttr server author token`` ends the pages as at once as the API, and a dump of the
process's memory holds neither the ids nor the tokens.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from leaderboard.ladder.model import Author

SESSION_BYTES = 32  #: random bytes of a session id (and of a CSRF token)
PURGE_S = 600.0  #: expired sessions of every author are forgotten at most this often


def bearer(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, or None."""
    if not header:
        return None
    scheme, _, token = header.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or len(token) > 512:
        return None
    return token


def same(a: str, b: str) -> bool:
    """``a == b`` for secrets: constant time, whatever they hold."""
    return hmac.compare_digest(
        a.encode("utf-8", "surrogateescape"), b.encode("utf-8", "surrogateescape")
    )


def _digest(session_id: str) -> str:
    return hashlib.sha256(session_id.encode("utf-8", "surrogateescape")).hexdigest()


def _pad(session_id: str, n: int) -> bytes:
    """``n`` bytes drawn from the session id (apart from its digest, the key it is kept
    under: another domain of another hash)."""
    return hashlib.shake_256(b"ttr session token\0" + session_id.encode()).digest(n)


def _xor(a: bytes, b: bytes) -> bytes:
    return bytes(x ^ y for x, y in zip(a, b, strict=True))


@dataclass(frozen=True, slots=True)
class Session:
    author: Author
    csrf: str  #: the token every form of this session carries
    expires_at: float  #: monotonic clock
    sealed: bytes  #: the author's token, sealed with the session id's pad


class Sessions:
    """Server-side sessions: the cookie holds a random id, this holds its hash. An author
    holds at most ``per_author`` at once: a new one ends the author's own oldest, never
    another author's (issue 35, item 4: one author logging in 10,050 times ended every other
    author's session). So they take at most ``per_author`` times the number of authors, whom
    the organiser adds."""

    def __init__(
        self, hours: float, per_author: int = 10, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.lifetime_s = hours * 3600.0
        self.per_author = per_author
        self.clock = clock
        self._lock = threading.Lock()
        self._by_digest: dict[str, tuple[str, Session]] = {}
        self._by_author: dict[int, list[str]] = {}  #: digests, oldest first
        self._purged_at = clock()

    def create(self, author: Author, token: str) -> tuple[str, Session]:
        """A new session for ``author``, opened with ``token``: (the id for the cookie, the
        session)."""
        session_id = secrets.token_urlsafe(SESSION_BYTES)
        digest = _digest(session_id)
        sealed = token.encode("utf-8", "surrogateescape")
        session = Session(
            author,
            secrets.token_urlsafe(SESSION_BYTES),
            self.clock() + self.lifetime_s,
            _xor(sealed, _pad(session_id, len(sealed))),
        )
        with self._lock:
            if self.clock() - self._purged_at >= PURGE_S:
                self._purge()
            mine = self._by_author.setdefault(author.author_id, [])
            mine[:] = [d for d in mine if d in self._by_digest]
            while len(mine) >= self.per_author:
                self._by_digest.pop(mine.pop(0), None)
            mine.append(digest)
            self._by_digest[digest] = (digest, session)
        return session_id, session

    @staticmethod
    def token(session_id: str, session: Session) -> str:
        """The token ``session`` was opened with (``session_id``: the cookie's)."""
        pad = _pad(session_id, len(session.sealed))
        return _xor(session.sealed, pad).decode("utf-8", "surrogateescape")

    def count(self, author: Author) -> int:
        """The author's live sessions."""
        with self._lock:
            now = self.clock()
            return sum(
                1
                for d in self._by_author.get(author.author_id, ())
                if d in self._by_digest and self._by_digest[d][1].expires_at > now
            )

    def get(self, session_id: str | None) -> Session | None:
        """The live session of a cookie's id, or None (unknown, ended or expired)."""
        if not session_id or len(session_id) > 256:
            return None
        digest = _digest(session_id)
        with self._lock:
            found = self._by_digest.get(digest)
            if found is None or not same(found[0], digest):
                return None
            if found[1].expires_at <= self.clock():
                del self._by_digest[digest]
                return None
            return found[1]

    def end(self, session_id: str | None) -> None:
        if session_id:
            with self._lock:
                self._by_digest.pop(_digest(session_id), None)

    def _purge(self) -> None:
        """Forget the expired sessions of every author (one that never comes back too)."""
        now = self._purged_at = self.clock()
        for digest in [d for d, (_, s) in self._by_digest.items() if s.expires_at <= now]:
            del self._by_digest[digest]
        for author_id, mine in list(self._by_author.items()):
            mine[:] = [d for d in mine if d in self._by_digest]
            if not mine:
                del self._by_author[author_id]


class RateLimit:
    """At most ``per_minute`` events per key in any 60 s (a sliding window). In memory; an
    event refused is not counted, so a key holds at most ``per_minute`` of them."""

    WINDOW_S = 60.0
    MAX_KEYS = 100_000  #: keys tracked; past that the oldest are forgotten

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_minute = per_minute
        self.clock = clock
        self._lock = threading.Lock()
        self._events: dict[object, deque[float]] = {}

    def take(self, key: object) -> int:
        """Count one event if allowed (0), else the seconds to wait (nothing counted)."""
        with self._lock:
            events = self._window(key)
            if events is not None and len(events) >= self.per_minute:
                return max(1, math.ceil(events[0] + self.WINDOW_S - self.clock()))
            if events is None:
                if len(self._events) >= self.MAX_KEYS:
                    self._events.pop(next(iter(self._events)))
                events = self._events[key] = deque()
            events.append(self.clock())
            return 0

    def _window(self, key: object) -> deque[float] | None:
        events = self._events.get(key)
        if events is None:
            return None
        cutoff = self.clock() - self.WINDOW_S
        while events and events[0] <= cutoff:
            events.popleft()
        if not events:
            del self._events[key]
            return None
        return events
