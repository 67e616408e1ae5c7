"""Memos for pure functions on hot paths: the one place their bounds and keys are decided.

Both keep results of functions whose answer depends on the argument alone, so keeping them
changes no result, only the time (the engine stays deterministic and pure in effect).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")
V = TypeVar("V")

#: Entries a memo holds before it starts afresh (a bound on memory, far above what a game uses).
MEMO_LIMIT = 1 << 16


def memoized(build: Callable[[K], V], limit: int = MEMO_LIMIT) -> Callable[[K], V]:
    """``build`` with its results kept, keyed by its (hashable, immutable) argument. When
    full, the memo is cleared: simpler than LRU and as good for a working set that changes
    slowly, as a game's values do."""
    cache: dict[K, V] = {}

    def memo(key: K) -> V:
        found = cache.get(key)
        if found is None:
            if len(cache) >= limit:
                cache.clear()
            found = cache[key] = build(key)
        return found

    return memo


def per_object(build: Callable[[T], V]) -> Callable[[T], V]:
    """``build`` kept per argument object, for arguments that are not hashable (a Ruleset
    holds dicts) but live as long as the process (rulesets are loaded once). The object is
    kept with its result, so an id reused after it was freed is never mistaken for it."""
    cache: dict[int, tuple[T, V]] = {}

    def memo(obj: T) -> V:
        found = cache.get(id(obj))
        if found is None or found[0] is not obj:
            found = cache[id(obj)] = (obj, build(obj))
        return found[1]

    return memo
