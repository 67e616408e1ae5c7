"""Who is asking: the bearer token of the API, the session cookie of the author pages, the CSRF
token of their forms, and the rate limits that keep guessing and flooding slow.

All of it in memory, in this process: a restarted server forgets its sessions (authors log in
again) and its rate-limit windows. Secrets are compared with :func:`hmac.compare_digest`;
a session id is kept only as its SHA-256, so a dump of the process's memory, or a timing of
the dictionary lookup (keyed by that hash), tells nothing about a live cookie.
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
MAX_SESSIONS = 10_000  #: live sessions kept; past that the oldest is dropped


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


@dataclass(frozen=True, slots=True)
class Session:
    author: Author
    csrf: str  #: the token every form of this session carries
    expires_at: float  #: monotonic clock


class Sessions:
    """Server-side sessions: the cookie holds a random id, this holds its hash."""

    def __init__(self, hours: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.lifetime_s = hours * 3600.0
        self.clock = clock
        self._lock = threading.Lock()
        self._by_digest: dict[str, tuple[str, Session]] = {}

    def create(self, author: Author) -> tuple[str, Session]:
        """A new session for ``author``: (the id for the cookie, the session)."""
        session_id = secrets.token_urlsafe(SESSION_BYTES)
        digest = _digest(session_id)
        session = Session(
            author, secrets.token_urlsafe(SESSION_BYTES), self.clock() + self.lifetime_s
        )
        with self._lock:
            self._purge()
            while len(self._by_digest) >= MAX_SESSIONS:
                self._by_digest.pop(next(iter(self._by_digest)))
            self._by_digest[digest] = (digest, session)
        return session_id, session

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
        now = self.clock()
        for digest in [d for d, (_, s) in self._by_digest.items() if s.expires_at <= now]:
            del self._by_digest[digest]


class RateLimit:
    """At most ``per_minute`` events per key in any 60 s (a sliding window). In memory."""

    WINDOW_S = 60.0
    MAX_KEYS = 100_000  #: keys tracked; past that the oldest are forgotten

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_minute = per_minute
        self.clock = clock
        self._lock = threading.Lock()
        self._events: dict[object, deque[float]] = {}

    def retry_after(self, key: object) -> int:
        """0 if one more event for ``key`` is allowed now, else the whole seconds to wait."""
        with self._lock:
            events = self._window(key)
            if events is None or len(events) < self.per_minute:
                return 0
            return max(1, math.ceil(events[0] + self.WINDOW_S - self.clock()))

    def hit(self, key: object) -> None:
        """Count one event for ``key``."""
        with self._lock:
            events = self._window(key)
            if events is None:
                if len(self._events) >= self.MAX_KEYS:
                    self._events.pop(next(iter(self._events)))
                events = self._events[key] = deque()
            events.append(self.clock())

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
