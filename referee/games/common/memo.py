"""Memos for pure functions on hot paths: the one place their bounds and keys are decided.

Both keep results of functions whose answer depends on the argument alone, so keeping them
changes no result, only the time (the engine stays deterministic and pure in effect).

The keyed ones are bounded by bytes, least recently used first out: a worker that plays a
whole night of games meets new values (hands, views, events) all the time, and a bound by
entries let each memo grow to tens of MiB of bytes and tuples before it was cleared.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, fields, is_dataclass
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")
V = TypeVar("V")

#: Default bound of one memo, in the bytes :func:`approx_bytes` counts. A game's working set
#: is far smaller (tens of KiB to a few hundred KiB per memo, docs/architecture.md), so a
#: memo keeps every value a game reuses while about 20 memos in a process stay under 25 MiB.
MEMO_BYTES = 1 << 20

#: What a kept entry costs beyond its key and value: its link in the LRU order and the
#: dictionary slot, and the size recorded for it (measured with tracemalloc on CPython 3.11:
#: about 100 bytes).
ENTRY_BYTES = 100


#: field names per dataclass type, read once (``dataclasses.fields`` is slow for a hot miss)
_FIELDS: dict[type, tuple[str, ...]] = {}
_FLAT = (float, str, bytes)
#: what ``sys.getsizeof`` adds to ``__sizeof__`` for an object the collector tracks (the
#: engine imports no ``sys``: tests/games/test_purity.py)
_GC_HEADER = 16
#: The size of every object of a type, where it is fixed: ints (those below 2**30, all that
#: memos see), and dataclasses declared with int fields only (actions such as PlaceSuit),
#: learnt at the first one met. Sizing a tuple of a hundred actions is then a hundred lookups,
#: not a walk through their fields (a miss of the card game's placements memo spent more on
#: sizing than on building).
_FIXED: dict[type, int] = {int: 28, bool: 28, type(None): 16}
_INT_TYPES = ("int", "bool", int, bool)


def approx_bytes(obj: object) -> int:
    """The memory ``obj`` holds, roughly: its ``__sizeof__`` and that of what it holds, for
    tuples and dataclasses (the keys and values the memos see: tuples of counts, actions,
    events, views' parts), nested ones included. Objects shared with others (small ints,
    interned actions) are counted wherever they appear, so the figure errs high, the safe
    side of a bound."""
    kind = type(obj)
    size = _FIXED.get(kind)
    if size is not None:
        return size
    size = obj.__sizeof__() + _GC_HEADER
    if kind is tuple:
        kinds = set(map(type, obj))  # type: ignore[call-overload]
        if len(kinds) == 1:
            # one kind (counts, a row of actions): one lookup for the lot, at C speed
            known = _FIXED.get(kinds.pop())
            if known is not None:
                return size + known * len(obj)  # type: ignore[arg-type]
        fixed = _FIXED.get
        for item in obj:  # type: ignore[attr-defined]
            known = fixed(type(item))
            size += known if known is not None else approx_bytes(item)
    elif kind not in _FLAT:
        names = _FIELDS.get(kind)
        if names is None:
            names = ()
            if is_dataclass(kind):
                declared = fields(kind)
                names = tuple(f.name for f in declared)
                if all(f.type in _INT_TYPES for f in declared):
                    _FIXED[kind] = size + 28 * len(names)
            _FIELDS[kind] = names
        for name in names:
            size += approx_bytes(getattr(obj, name))
    return size


def _approx_pair(key: object, value: object) -> int:
    return approx_bytes(key) + approx_bytes(value)


class ByteLRU(Generic[K, V]):
    """A map bounded by the bytes of its keys and values (:func:`approx_bytes` plus
    ``ENTRY_BYTES`` each): a hit makes an entry the most recently used, and an insert drops
    the least recently used entries until the total fits again. A value whose entry alone
    exceeds the bound is returned but never kept."""

    __slots__ = ("_sizes", "data", "limit", "name", "size", "total")

    def __init__(
        self,
        limit: int = MEMO_BYTES,
        name: str = "",
        size: Callable[[K, V], int] | None = None,
    ) -> None:
        self.data: OrderedDict[K, V] = OrderedDict()
        self._sizes: dict[K, int] = {}
        self.limit = limit
        self.name = name
        #: the bytes of a key and its value; by default :func:`approx_bytes` of both, or a
        #: formula where a memo's values have a known shape and misses are frequent (walking
        #: a value costs more than building it there)
        self.size = size or _approx_pair
        self.total = 0  #: bytes held, as counted above

    def __len__(self) -> int:
        return len(self.data)

    def get(self, key: K) -> V | None:
        found = self.data.get(key)
        if found is not None:
            self.data.move_to_end(key)
        return found

    def put(self, key: K, value: V) -> None:
        size = self.size(key, value) + ENTRY_BYTES
        if size > self.limit:
            return
        data = self.data
        if key in data:
            self.total -= self._sizes[key]
        data[key] = value
        data.move_to_end(key)
        self._sizes[key] = size
        self.total += size
        while self.total > self.limit:
            old, _ = data.popitem(last=False)
            self.total -= self._sizes.pop(old)


#: Every memo made by :func:`memoized`, for reports (bench/memory.py); they live as long as
#: the process, as the module-level functions they serve do.
MEMOS: list[ByteLRU[object, object]] = []


@dataclass(frozen=True, slots=True)
class MemoStats:
    name: str
    entries: int
    bytes: int
    limit: int


def memo_stats() -> tuple[MemoStats, ...]:
    """Entries and bytes of every memo of the process, largest first."""
    stats = (MemoStats(m.name, len(m), m.total, m.limit) for m in MEMOS)
    return tuple(sorted(stats, key=lambda s: -s.bytes))


def memoized(
    build: Callable[[K], V],
    limit: int = MEMO_BYTES,
    size: Callable[[K, V], int] | None = None,
) -> Callable[[K], V]:
    """``build`` with its results kept, keyed by its (hashable, immutable) argument, in a
    :class:`ByteLRU` of ``limit`` bytes (``size``: see there). ``build`` must not return
    None (None reads as a miss)."""
    code = getattr(build, "__code__", None)
    where = f":{code.co_firstlineno}" if code is not None else ""
    cache: ByteLRU[K, V] = ByteLRU(limit, f"{build.__module__}.{build.__qualname__}{where}", size)
    MEMOS.append(cache)  # type: ignore[arg-type]  # kept for its sizes only
    # A hit is the hot path (every wire call): the ordered map's own methods, no method of
    # ours in between.
    get, to_end, put = cache.data.get, cache.data.move_to_end, cache.put

    def memo(key: K) -> V:
        found = get(key)
        if found is None:
            found = build(key)
            put(key, found)
        else:
            to_end(key)
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
