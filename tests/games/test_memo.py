"""The memos' bound by bytes (referee/games/common/memo.py): least recently used out, never
over the bound, and no result changed by what was kept or dropped."""

from __future__ import annotations

import random
from dataclasses import dataclass

from referee.games.common.actions import KeepTickets
from referee.games.common.memo import (
    ENTRY_BYTES,
    MEMOS,
    ByteLRU,
    approx_bytes,
    memo_stats,
    memoized,
)
from referee.games.common.tickets import KeepCache, keep_choices


def entry(key: object, value: object) -> int:
    return approx_bytes(key) + approx_bytes(value) + ENTRY_BYTES


def test_the_total_never_exceeds_the_bound_and_matches_what_is_kept() -> None:
    lru: ByteLRU[int, bytes] = ByteLRU(limit=4000)
    rng = random.Random(5)
    for n in range(500):
        lru.put(n, bytes(rng.randint(0, 300)))
        assert lru.total <= lru.limit
        assert lru.total == sum(entry(k, v) for k, v in lru.data.items())
    assert 0 < len(lru) < 500


def test_the_least_recently_used_goes_first_and_a_hit_refreshes() -> None:
    size = entry(1, b"x" * 10)
    lru: ByteLRU[int, bytes] = ByteLRU(limit=3 * size)
    for key in (1, 2, 3):
        lru.put(key, b"x" * 10)
    assert lru.get(1) == b"x" * 10  # 1 is now the most recently used: 2 is the oldest
    lru.put(4, b"x" * 10)
    assert list(lru.data) == [3, 1, 4]
    lru.put(5, b"x" * 10)
    assert list(lru.data) == [1, 4, 5]
    assert lru.get(3) is None


def test_a_memo_drops_the_generation_least_recently_used_and_a_hit_refreshes() -> None:
    """Generations of half the bound each (two entries here): an entry used since the last
    turnover stays, one not used for a whole generation goes."""
    memo = memoized(lambda n: bytes(5), limit=4 * entry(1, bytes(5)))
    store = MEMOS[-1]
    memo(1), memo(2)
    memo(3)  # the young generation was full: 1 and 2 are the old one now
    memo(1)  # a hit in the old generation: moved to the young one
    memo(4)  # turnover: 2, used least recently, is dropped
    kept = set(store.young) | set(store.old)
    assert kept == {1, 3, 4}
    assert store.total <= store.limit


def test_a_value_larger_than_the_bound_is_returned_but_not_kept() -> None:
    built: list[int] = []

    def big(n: int) -> bytes:
        built.append(n)
        return bytes(n)

    memo = memoized(big, limit=2 * entry(0, bytes(100)))  # half of it per generation
    assert memo(100) == bytes(100) and memo(100) == bytes(100)
    assert built == [100]  # an entry of exactly half the bound is kept
    assert memo(1000) == bytes(1000) and memo(1000) == bytes(1000)
    assert built == [100, 1000, 1000]  # too large: built each time
    assert memo(100) == bytes(100) and built == [100, 1000, 1000]


def test_a_bounded_memo_answers_as_the_function_does() -> None:
    built: list[tuple[int, ...]] = []

    def square(key: tuple[int, ...]) -> tuple[int, ...]:
        built.append(key)
        return tuple(k * k for k in key)

    memo = memoized(square, limit=2000)
    rng = random.Random(7)
    keys = [tuple(rng.randint(0, 9) for _ in range(rng.randint(1, 4))) for _ in range(40)]
    for _ in range(2000):
        key = rng.choice(keys)
        assert memo(key) == square(key)
    stats = next(
        s for s in memo_stats() if s.name.endswith(f"square:{square.__code__.co_firstlineno}")
    )
    assert 0 < stats.bytes <= stats.limit == 2000
    assert any(m.name == stats.name for m in MEMOS)


@dataclass(frozen=True, slots=True)
class Pair:
    left: tuple[int, ...]
    right: bytes


def test_sizes_count_what_tuples_and_dataclasses_hold() -> None:
    inner = (1, 2, 3)
    assert approx_bytes((inner, inner)) > 2 * approx_bytes(inner)
    pair = Pair(inner, bytes(500))
    assert approx_bytes(pair) > approx_bytes(inner) + 500


def test_keep_choices_are_the_same_from_a_small_cache() -> None:
    roomy: KeepCache = ByteLRU(1 << 30)
    small: KeepCache = ByteLRU(3000)
    rng = random.Random(11)
    for _ in range(300):
        offered = tuple(rng.sample(range(30), rng.randint(1, 5)))
        minimum = rng.randint(0, 3)
        want = keep_choices(offered, minimum, roomy, at_least_one=False)
        assert keep_choices(offered, minimum, small, at_least_one=False) == want
        assert all(isinstance(k, KeepTickets) for k in want)
        assert small.total <= 3000


def test_the_keep_choices_formula_stays_near_what_approx_bytes_counts() -> None:
    """The keep choices, sized by formula (their misses are frequent), count about what the
    walk does: within 0.9x to 1.5x, so their bound means what the memos' does."""
    from referee.games.common.tickets import keep_choices_bytes

    def ratio(key: object, value: object, formula: int) -> float:
        return formula / (approx_bytes(key) + approx_bytes(value))

    cache: KeepCache = ByteLRU(1 << 30)
    for offered in ((3,), (3, 9), (1, 5, 7), (2, 4, 6, 8, 10)):
        for minimum in (0, 1, 2):
            choices = keep_choices(offered, minimum, cache, at_least_one=False)
            assert (
                0.9
                <= ratio(
                    (offered, minimum), choices, keep_choices_bytes((offered, minimum), choices)
                )
                <= 1.5
            )


def test_a_dataclass_of_ints_and_int_tuples_is_sized_as_its_walk_sizes_it() -> None:
    # The shape learnt at the first one (a fixed part plus its tuples) gives what walking
    # every field gives, whatever the tuples' lengths.
    import random

    from referee.games.board.view import PlayerPublic
    from referee.games.common import memo

    rng = random.Random(3)

    def ints() -> int:
        return rng.randrange(60)

    players = [
        PlayerPublic(ints(), ints(), ints(), ints(), ints(), ints(), tuple(range(ints())))
        for _ in range(200)
    ]
    walked = []
    for p in players:
        memo._INT_SHAPES.pop(PlayerPublic, None)
        memo._FIELDS.pop(PlayerPublic, None)
        walked.append(memo.approx_bytes(p))
    assert PlayerPublic in memo._INT_SHAPES
    assert [memo.approx_bytes(p) for p in players] == walked
    assert len(set(walked)) > 10
