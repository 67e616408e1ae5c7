"""Memos for pure functions on hot paths: the one place their bounds and keys are decided.

They keep results of functions whose answer depends on the argument alone, so keeping them
changes no result, only the time (the engine stays deterministic and pure in effect).

Each memo is bounded by bytes and forgets the least recently used entry first. A worker that
plays a long night (thousands of games, every variant) sees new keys all the time: a bound in
entries let each memo grow to whatever 65,536 of its values weighed (a worker reached about
75 MiB), and clearing a full memo threw away the hot entries with the cold ones.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")
V = TypeVar("V")

#: What one memo may hold, in bytes (as :func:`entry_bytes` counts them). A game adds some
#: 20-50 KB to a memo, mostly values the next games reuse, so a game's working set stays
#: whole; with every variant loaded there are 22 memos, so a worker's memos stay within
#: some 22 MiB however long the night (bench/memory.py prints them).
MEMO_BYTES = 1 << 20

#: A kept entry's own cost beyond its key and value: the dict slot, the order link and the
#: key's hash (CPython 3.11, measured with tracemalloc: 100-120 bytes an entry).
ENTRY_OVERHEAD = 112

#: the garbage collector's header that ``sys.getsizeof`` adds to ``__sizeof__`` (CPython 3.11,
#: 64-bit), counted for every object: an overestimate for ints, bytes and strings
_GC_HEADER = 16


def entry_bytes(key: object, value: object) -> int:
    """What keeping ``key -> value`` costs: both objects' sizes (:func:`size_of`) plus
    :data:`ENTRY_OVERHEAD`. Counted once, on a miss."""
    return size_of(key) + size_of(value) + ENTRY_OVERHEAD


def size_of(obj: object, depth: int = 4) -> int:
    """``obj``'s size in bytes with what it holds, ``depth`` levels down through tuples and
    slotted objects (the engine's actions, events and views are frozen slotted dataclasses
    of tuples and ints): an object's own size alone counts a tuple of actions as pointers.
    Shared objects (small ints, interned names) are counted at each use: an overestimate,
    so the bound holds."""
    size = obj.__sizeof__() + _GC_HEADER  # sys.getsizeof, without the engine importing sys
    if depth <= 0 or isinstance(obj, (bytes, str, int, float)):
        return size
    if isinstance(obj, tuple):
        return size + sum(size_of(item, depth - 1) for item in obj)
    for name in getattr(type(obj), "__slots__", ()):
        size += size_of(getattr(obj, name, None), depth - 1)
    return size


class BoundedCache(Generic[K, V]):
    """A least-recently-used map bounded by bytes (:func:`entry_bytes`): ``get`` marks an
    entry used, ``put`` adds one and forgets the least recently used until the total fits.
    A value larger than the whole bound is not kept (it would empty the cache for nothing)."""

    __slots__ = ("_entries", "_sizes", "hits", "limit", "misses", "total")

    def __init__(self, limit: int = MEMO_BYTES) -> None:
        if limit <= 0:
            raise ValueError(f"a memo's bound must be a positive number of bytes, got {limit}")
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._sizes: dict[K, int] = {}
        self.limit = limit
        self.total = 0  #: bytes held now
        self.hits = 0  #: by ``get`` (a memo's inlined hits are not counted)
        self.misses = 0  #: every build, by ``get`` or a memo

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: K) -> V | None:
        found = self._entries.get(key)
        if found is None:
            self.misses += 1
        else:
            self.hits += 1
            self._entries.move_to_end(key)
        return found

    def put(self, key: K, value: V) -> None:
        size = entry_bytes(key, value)
        if size > self.limit:
            return
        entries, sizes = self._entries, self._sizes
        old = sizes.pop(key, None)
        if old is not None:
            self.total -= old
            del entries[key]
        while self.total + size > self.limit:
            gone, _ = entries.popitem(last=False)
            self.total -= sizes.pop(gone)
        entries[key] = value
        sizes[key] = size
        self.total += size

    def clear(self) -> None:
        self._entries.clear()
        self._sizes.clear()
        self.total = 0


#: every memo made by :func:`memoized`, by the name of the function it keeps (bench/memory.py)
MEMOS: dict[str, BoundedCache[object, object]] = {}


def memoized(build: Callable[[K], V], limit: int = MEMO_BYTES) -> Callable[[K], V]:
    """``build`` with its results kept, keyed by its (hashable, immutable) argument, in a
    :class:`BoundedCache` of ``limit`` bytes. A call that raises keeps nothing."""
    cache: BoundedCache[K, V] = BoundedCache(limit)
    entries = cache._entries  # the hit path, inlined: it runs for every request's every part
    touch = entries.move_to_end
    code = getattr(build, "__code__", None)
    where = "" if code is None else f":{code.co_firstlineno}"
    name = f"{getattr(build, '__module__', '?')}.{getattr(build, '__qualname__', '?')}{where}"
    MEMOS[name] = cache  # type: ignore[assignment]

    def memo(key: K) -> V:
        found = entries.get(key)
        if found is None:
            cache.misses += 1
            found = build(key)
            cache.put(key, found)
        else:
            touch(key)  # hits are not counted here: this path is the hot one
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
