"""Ticket choices, the same in both families: which subsets of the tickets offered a seat may
keep, whether a kept set is one of them, and where the rest go.

Both rulebooks deal tickets, let the seat keep at least some minimum and return the others
(the board games: 003:17, 003:59, 001:27-28; the card game: 000:54, 000:180-181); they differ
only in that minimum, in whether keeping none can be allowed, and in what they call the
tickets, so each engine passes those and the rule lines it cites.
"""

from __future__ import annotations

from itertools import combinations

from referee.games.common.actions import KeepTickets
from referee.games.common.errors import IllegalActionError, MalformedActionError
from referee.games.common.memo import ByteLRU

#: Bytes of keep choices an engine keeps (a :class:`ByteLRU`): the 3-ticket offers of one
#: ruleset's deck, about 700 bytes each, mostly fit, and a long night stays bounded.
KEEP_CHOICES_BYTES = 1 << 20

KeepKey = tuple[tuple[int, ...], int]
KeepCache = ByteLRU[KeepKey, tuple[KeepTickets, ...]]


def keep_choices_bytes(key: KeepKey, choices: tuple[KeepTickets, ...]) -> int:
    """What :func:`referee.games.common.memo.approx_bytes` counts for a key and its choices,
    without its walk through every object: the key is the offer (124 bytes and 36 a ticket),
    a choice a KeepTickets of a tuple (88 bytes with its slot, and 36 a ticket)."""
    return 124 + 36 * len(key[0]) + 40 + sum(88 + 36 * len(c.tickets) for c in choices)


def new_keep_cache(name: str) -> KeepCache:
    """An engine's cache of keep choices (misses are common: sizing them must be cheap)."""
    return ByteLRU(KEEP_CHOICES_BYTES, name, keep_choices_bytes)


def keep_choices(
    offered: tuple[int, ...],
    minimum: int,
    cache: KeepCache,
    *,
    at_least_one: bool,
) -> tuple[KeepTickets, ...]:
    """Every subset of ``offered`` with at least ``minimum`` tickets (and at least one where
    ``at_least_one``), smallest first, each ascending. ``cache`` is the engine's own: the
    same offers recur across games."""
    key = (offered, minimum)
    found = cache.get(key)
    if found is None:
        ordered = tuple(sorted(offered))
        smallest = min(minimum, len(ordered))
        if at_least_one:
            smallest = max(1, smallest)
        found = tuple(
            KeepTickets(combo)
            for size in range(smallest, len(ordered) + 1)
            for combo in combinations(ordered, size)
        )
        cache.put(key, found)
    return found


def checked_keep(
    offered: tuple[int, ...], kept: object, minimum: int, *, dealt: str, rules: str
) -> tuple[int, ...]:
    """``kept``, ascending, when it is a set of the ``offered`` tickets of at least
    ``minimum`` (or all of them, when fewer were offered); else the error naming the rule.
    ``dealt`` is how the rulebook says the tickets came ("drawn", "dealt") and ``rules`` the
    lines it cites for the minimum."""
    if not isinstance(kept, tuple) or not all(
        isinstance(t, int) and not isinstance(t, bool) for t in kept
    ):
        raise MalformedActionError(
            "action.tickets", f"tickets must be a tuple of ints, got {kept!r}"
        )
    if len(set(kept)) != len(kept):
        raise MalformedActionError("action.tickets", f"ticket listed twice in {kept!r}")
    stray = [t for t in kept if t not in offered]
    if stray:
        raise IllegalActionError(
            "tickets.not_offered", f"ticket(s) {stray} were not among those drawn {sorted(offered)}"
        )
    need = min(minimum, len(offered))
    if len(kept) < need:
        raise IllegalActionError(
            "tickets.keep_min",
            f"must keep at least {need} of the {len(offered)} tickets {dealt}, not {len(kept)} "
            f"({rules})",
        )
    return tuple(sorted(kept))
