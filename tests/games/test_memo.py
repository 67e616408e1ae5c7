"""The engine's memos are bounded by bytes and forget the least recently used entry first
(referee/games/common/memo.py): a long night's worker stays flat, and the hot entries of the
current games survive the cold ones."""

from __future__ import annotations

import tracemalloc

import pytest

from referee.games.board import apply, legal_actions, load_ruleset, new_game, view
from referee.games.board import wire as board_wire
from referee.games.common.actions import KeepTickets
from referee.games.common.memo import ENTRY_OVERHEAD, MEMOS, BoundedCache, entry_bytes, memoized
from referee.games.common.tickets import keep_cache, keep_choices
from ttr.v1 import bot_service_pb2


def test_the_bound_holds_and_the_least_recently_used_goes_first() -> None:
    built: list[bytes] = []

    def padded(n: int) -> bytes:
        built.append(bytes([n]))
        return bytes([n]) * 1000

    per_entry = entry_bytes(0, bytes(1000))
    memo = memoized(padded, limit=3 * per_entry + 10)
    cache = next(c for name, c in MEMOS.items() if "padded" in name and len(c) == 0)
    for n in (1, 2, 3):
        assert memo(n) == bytes([n]) * 1000
    assert memo(1) == bytes([1]) * 1000  # a hit: 1 is now the most recently used
    assert len(built) == 3 and cache.misses == 3
    memo(4)  # full: 2, the least recently used, goes
    assert cache.total <= cache.limit and len(cache) == 3
    memo(1), memo(3), memo(4)
    assert len(built) == 4  # all three kept
    memo(2)
    assert built[-1] == bytes([2]) and len(built) == 5  # 2 was forgotten and built again
    memo(1)
    assert len(built) == 6  # 1 was the least recently used of 1, 3, 4 when 2 came back
    assert cache.total <= cache.limit


def test_a_value_larger_than_the_bound_is_answered_but_not_kept() -> None:
    cache: BoundedCache[str, bytes] = BoundedCache(limit=2000)
    cache.put("small", bytes(100))
    cache.put("huge", bytes(5000))
    assert cache.get("huge") is None and cache.get("small") == bytes(100)
    assert cache.total == entry_bytes("small", bytes(100))
    cache.put("small", bytes(300))  # replaced: counted once
    assert cache.total == entry_bytes("small", bytes(300)) and len(cache) == 1
    with pytest.raises(ValueError, match="positive number of bytes"):
        BoundedCache(0)


def test_a_build_that_raises_keeps_nothing() -> None:
    def fails(n: int) -> int:
        raise KeyError(n)

    memo = memoized(fails, limit=10_000)
    for _ in range(2):
        with pytest.raises(KeyError):
            memo(7)


def test_the_count_is_no_less_than_what_python_allocates() -> None:
    """The bound is only as good as the count: an entry of keep choices (a tuple of slotted
    actions holding tuples) is counted at least at what tracemalloc sees it take, entry
    included; counting the outer tuple alone was a fifth of it."""
    offered = (3, 8, 11, 17, 20)
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        cache = keep_cache("test keep choices")
        choices = keep_choices(offered, 1, cache, at_least_one=True)
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    taken = sum(s.size_diff for s in after.compare_to(before, "filename"))
    assert len(choices) == 31 and all(isinstance(c, KeepTickets) for c in choices)
    assert cache.total >= taken - 2048, (cache.total, taken)  # the snapshot's own noise
    assert cache.total < 4 * taken + ENTRY_OVERHEAD


def test_memos_stay_within_their_bound_over_many_games_and_answer_the_same() -> None:
    """Random usa games with small memos answer exactly as with the default ones (a memo
    changes only the time), and no memo passes its bound."""
    small = {name: c.limit for name, c in MEMOS.items()}
    try:
        for cache in MEMOS.values():
            cache.limit = 20_000
            cache.clear()
        encoded = _encode_games()
        assert all(c.total <= c.limit for c in MEMOS.values())
        forgot = [c for c in MEMOS.values() if c.misses > len(c) and c.total > c.limit // 2]
        assert forgot  # the bound was reached and entries were forgotten on the way
    finally:
        for name, limit in small.items():
            MEMOS[name].limit = limit
    assert encoded == _encode_games()


def _encode_games() -> list[bytes]:
    """Every request of two seeded random usa games, as the referee encodes them."""
    import random

    rules, out = load_ruleset("usa"), []
    for seed in range(2):
        rng = random.Random(seed)
        state = new_game(rules, 3, seed)
        while not state.is_over:
            actions = legal_actions(state)
            request = board_wire.act_request_pb(
                view(state, state.seat), (), actions, "g", "r", bot_service_pb2.Clock()
            )
            out.append(request.SerializeToString())
            state = apply(state, rng.choice(actions))
    return out
