"""Memos for pure functions on hot paths: the one place their bounds and keys are decided.

Both keep results of functions whose answer depends on the argument alone, so keeping them
changes no result, only the time (the engine stays deterministic and pure in effect).

The keyed ones are bounded by bytes, least recently used first out (:func:`memoized` a
generation at a time, :class:`ByteLRU` exactly): a worker that plays a whole night of games
meets new values (hands, views, events) all the time, and a bound of 65,536 entries let
each memo grow to tens of MiB of bytes and tuples before it was cleared.
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
#: is smaller (at most about 360 KiB in one memo: a 5-player mega game's players, bench/
#: README.md), so a generation of half the bound holds what a game reuses, while the 18
#: memos of a process that plays every variant stay under 18 MiB as counted.
MEMO_BYTES = 1 << 20

#: What a kept entry costs beyond its key and value, as estimated: its dict slots (the
#: hashes and pointers, with the tables' spare room) and the tuple or link that records its
#: size.
ENTRY_BYTES = 100


#: field names per dataclass type, read once (``dataclasses.fields`` is slow for a hot miss)
_FIELDS: dict[type, tuple[str, ...]] = {}
_FLAT = (float, str, bytes)
#: what ``sys.getsizeof`` adds to ``__sizeof__`` for an object the collector tracks (the
#: engine imports no ``sys``: tests/games/test_purity.py)
_GC_HEADER = 16
#: The size of every object of a type, where it is fixed: ints (those below 2**30, all that
#: memos see), and dataclasses declared with int fields only (actions such as PlaceSuit),
#: learnt at the first one met. Sizing a tuple of a hundred actions is then one lookup, not a
#: walk through their fields (a walk can cost more than building the value it sizes).
_FIXED: dict[type, int] = {int: 28, bool: 28, type(None): 16}
_INT_TYPES = ("int", "bool", int, bool)
_INT_TUPLE_TYPES = ("tuple[int, ...]", tuple[int, ...])
#: Dataclasses declared with ints and tuples of ints only (a player's public part, with the
#: routes it claimed), learnt at the first one met: their fixed part, and the fields whose
#: tuples add their own size and 28 bytes an int. Sizing one is then a sum over its tuples,
#: not a walk through every field (half the cost of a miss on the wire's hot path).
_INT_SHAPES: dict[type, tuple[int, tuple[str, ...]]] = {}


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
        shape = _INT_SHAPES.get(kind)
        if shape is not None:
            size = shape[0]
            for name in shape[1]:
                items = getattr(obj, name)
                size += items.__sizeof__() + _GC_HEADER + 28 * len(items)
            return size
        names = _FIELDS.get(kind)
        if names is None:
            names = ()
            if is_dataclass(kind):
                declared = fields(kind)
                names = tuple(f.name for f in declared)
                ints = sum(f.type in _INT_TYPES for f in declared)
                tuples = tuple(f.name for f in declared if f.type in _INT_TUPLE_TYPES)
                if ints == len(names):
                    _FIXED[kind] = size + 28 * len(names)
                elif ints + len(tuples) == len(names):
                    _INT_SHAPES[kind] = (size + 28 * ints, tuples)
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


class Generations(Generic[K, V]):
    """The store of a :func:`memoized` function: two plain dicts, young and old, together
    at most ``limit`` bytes (as :class:`ByteLRU` counts). A lookup tries the young one, then
    the old one, whose entry it moves to the young one; a new entry goes to the young one,
    and when that one would pass half the bound it becomes the old one and the old one is
    dropped. So an entry used since the last turnover stays, and the ones dropped are those
    least recently used, a generation at a time: an LRU whose hit in the young dict is the
    one dict lookup the unbounded memo cost (an exact LRU's reordering doubled the hashing of
    every hit, and its bookkeeping made the wire path a third slower)."""

    __slots__ = (
        "build",
        "half",
        "limit",
        "name",
        "old",
        "old_bytes",
        "old_values",
        "size",
        "young",
        "young_bytes",
    )

    def __init__(
        self,
        build: Callable[[K], V],
        limit: int,
        name: str,
        size: Callable[[K, V], int] | None,
    ) -> None:
        self.build = build
        self.limit = limit
        self.half = limit // 2  #: the bound of one generation
        self.name = name
        self.size = size or _approx_pair
        #: key -> its entry's bytes, per generation; the young values are the hot path's
        #: own dict (``hits`` below), the old ones ``old_values``
        self.young: dict[K, int] = {}
        self.old: dict[K, int] = {}
        self.old_values: dict[K, V] = {}
        self.young_bytes = 0
        self.old_bytes = 0

    @property
    def total(self) -> int:
        return self.young_bytes + self.old_bytes

    def __len__(self) -> int:
        return len(self.young) + len(self.old)

    def miss(self, key: K, hits: dict[K, V]) -> V:
        """The value of a key not in the young generation (``hits`` is its values, the dict
        the hot path reads). Every miss of every memo comes here, so it allocates nothing
        beyond the entries themselves."""
        value = self.old_values.pop(key, None)
        if value is None:
            value = self.build(key)
            size = self.size(key, value) + ENTRY_BYTES
            if size > self.half:
                return value
        else:
            size = self.old.pop(key)
            self.old_bytes -= size
        if self.young_bytes + size > self.half:
            self.old_values = hits.copy()
            hits.clear()
            self.old, self.old_bytes = self.young, self.young_bytes
            self.young, self.young_bytes = {}, 0
        hits[key] = value
        self.young[key] = size
        self.young_bytes += size
        return value


#: Every memo made by :func:`memoized`, for reports (bench/memory.py); they live as long as
#: the process, as the module-level functions they serve do.
MEMOS: list[Generations[object, object]] = []


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
    """``build`` with its results kept, keyed by its (hashable, immutable) argument, in
    :class:`Generations` of at most ``limit`` bytes (``size``: see :class:`ByteLRU`); an
    entry over half the bound is returned but not kept. ``build`` must not return None
    (None reads as a miss)."""
    code = getattr(build, "__code__", None)
    where = f":{code.co_firstlineno}" if code is not None else ""
    store: Generations[K, V] = Generations(
        build, limit, f"{build.__module__}.{build.__qualname__}{where}", size
    )
    MEMOS.append(store)  # type: ignore[arg-type]  # kept for its sizes only
    # The hot path is one lookup in a dict of the young generation's values: cleared, never
    # replaced, when the generation turns over, so this bound method stays valid.
    hits: dict[K, V] = {}
    get, miss = hits.get, store.miss

    def memo(key: K) -> V:
        found = get(key)
        if found is None:
            found = miss(key, hits)
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
