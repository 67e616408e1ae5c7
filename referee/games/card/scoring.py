"""Completing tickets from an On-the-Track stack, exactly, and the final scores.

000:199-209: "Players now use the Train cards in their own On-the-Track stack to complete as
many of their Destination Tickets as possible ... Each card can only be used to complete 1
Destination Ticket. Locomotives can replace any color." The engine makes that choice for the
players, and makes it optimally: :func:`best_completion` finds the set of tickets that scores
the most for the seat (tests/games/test_cardgame_engine.py proves it against a brute force over
every assignment of cards to tickets). Final scoring: 000:243-249, 000:216-228.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from referee.games.card.ruleset import CardRuleset
from referee.games.card.state import CardGameState
from referee.games.common.cards import LOCOMOTIVE, NUM_COLOURS

# ---------------------------------------------------------------------------------------------
# which tickets a stack completes


def _spend(need: tuple[int, ...], rem: tuple[int, ...]) -> tuple[int, ...] | None:
    """``rem`` (per-colour cards, Locomotives last) after completing a ticket needing
    ``need``, or None if it cannot. Cards of the ticket's colours are spent before
    Locomotives: a card of colour c serves only colour c while a Locomotive serves any, so
    spending the coloured card first never leaves a later ticket worse off. Spent this way, a
    set of tickets completes in any order exactly when, summed over colours, its shortfalls
    ``max(0, needed - held)`` are at most the Locomotives held: which set, not which order or
    which card, is the only choice."""
    out = list(rem)
    short = 0
    for c in range(NUM_COLOURS):
        n = need[c]
        if n:
            have = out[c]
            if have >= n:
                out[c] = have - n
            else:
                out[c] = 0
                short += n - have
    if short > out[LOCOMOTIVE]:
        return None
    out[LOCOMOTIVE] -= short
    return tuple(out)


def _parts(reqs: list[tuple[int, ...]]) -> list[tuple[tuple[int, int], ...]]:
    """Per ticket, the (colour, cards) it needs, so a check reads only the colours it names."""
    return [tuple((c, k) for c, k in enumerate(need) if k) for need in reqs]


def _fits(part: tuple[tuple[int, int], ...], rem: tuple[int, ...]) -> bool:
    """Whether ``rem`` completes the ticket on its own (:func:`_spend` without the result)."""
    short = 0
    for c, k in part:
        if k > rem[c]:
            short += k - rem[c]
    return short <= rem[LOCOMOTIVE]


def _fits_all(
    parts: list[tuple[tuple[int, int], ...]], chosen: list[int], rem: tuple[int, ...]
) -> bool:
    """Whether ``rem`` completes every ticket of ``chosen`` at once (the shortfall rule of
    :func:`_spend` on their summed needs)."""
    total = [0] * NUM_COLOURS
    for t in chosen:
        for c, k in parts[t]:
            total[c] += k
    short = 0
    for c in range(NUM_COLOURS):
        if total[c] > rem[c]:
            short += total[c] - rem[c]
    return short <= rem[LOCOMOTIVE]


_INF = math.inf
#: Up to this many undecided tickets a node branches without solving the relaxation: trying
#: both ways is cheaper than the simplex there.
_SMALL = 12
#: Simplex tolerances (the bound below stays valid whatever the simplex returns).
_TOL = 1e-9
_PIVOT_LIMIT = 400


def _lp_bound(
    reqs: list[tuple[int, ...]], values: list[int], rem: tuple[int, ...]
) -> tuple[float, list[float], list[float]]:
    """An upper bound on the value of any set of these tickets that ``rem`` completes, the
    fractional choice ``x`` of the linear relaxation (a hint for an incumbent only) and the
    multipliers that gave the bound (per colour, then the Locomotives'), which bound any
    other node too (see :func:`_best_set`).

    The relaxation: maximise ``sum(values[t] * x[t])`` with ``0 <= x[t] <= 1``, per colour c
    ``sum(reqs[t][c] * x[t]) - u[c] <= rem[c]`` and ``sum(u) <= rem[LOCOMOTIVE]`` (``u[c]``:
    Locomotives standing in for colour c), solved by a bounded-variable primal simplex in
    floating point. The bound is not the simplex's value but the Lagrangian dual of its
    multipliers ``y >= 0``, ``sum(rem[c] * y[c]) + rem[LOCOMOTIVE] * max(y)`` plus every
    positive ``values[t] - sum(reqs[t][c] * y[c])``: weak duality makes that an upper bound
    for any ``y >= 0``, so rounding, an early stop or a poor basis can only make the search
    slower, never wrong (the search adds a margin far above the rounding error, see
    :func:`_best_set`)."""
    n = len(reqs)
    m = NUM_COLOURS + 1
    width = n + NUM_COLOURS + m  # tickets, Locomotive stand-ins, slacks
    upper_bound = [1.0] * n + [_INF] * (NUM_COLOURS + m)
    rows: list[list[float]] = []
    for c in range(NUM_COLOURS):
        row = [float(need[c]) for need in reqs] + [0.0] * (NUM_COLOURS + m)
        row[n + c] = -1.0
        row[n + NUM_COLOURS + c] = 1.0
        rows.append(row)
    row = [0.0] * n + [1.0] * NUM_COLOURS + [0.0] * m
    row[width - 1] = 1.0
    rows.append(row)
    beta = [float(rem[c]) for c in range(NUM_COLOURS)] + [float(rem[LOCOMOTIVE])]
    basis = [n + NUM_COLOURS + i for i in range(m)]
    in_basis = [False] * width
    for b in basis:
        in_basis[b] = True
    reduced = [float(v) for v in values] + [0.0] * (NUM_COLOURS + m)
    at_upper = [False] * width
    degenerate = 0
    for _ in range(_PIVOT_LIMIT):
        # Dantzig's rule; Bland's (the first improving column) after a run of degenerate
        # pivots, so the simplex cannot cycle.
        enter = -1
        gain = 1e-7
        for k in range(width):
            if in_basis[k]:
                continue
            g = -reduced[k] if at_upper[k] else reduced[k]
            if g > gain:
                enter, gain = k, g
                if degenerate > 20:
                    break
        if enter < 0:
            break
        sign = -1.0 if at_upper[enter] else 1.0
        theta = upper_bound[enter]
        leave = -1
        leave_up = False
        for i in range(m):
            a = rows[i][enter] * sign
            if a > _TOL:
                t = beta[i] / a
                if t < theta:
                    theta, leave, leave_up = t, i, False
            elif a < -_TOL and upper_bound[basis[i]] < _INF:
                t = (upper_bound[basis[i]] - beta[i]) / -a
                if t < theta:
                    theta, leave, leave_up = t, i, True
        if theta == _INF:  # pragma: no cover - every variable is bounded by the stack
            break
        degenerate = degenerate + 1 if theta <= _TOL else 0
        for i in range(m):
            beta[i] -= rows[i][enter] * sign * theta
        if leave < 0:  # the entering variable moves to its other bound
            at_upper[enter] = not at_upper[enter]
            continue
        value = (upper_bound[enter] if at_upper[enter] else 0.0) + sign * theta
        pivot_row = [v / rows[leave][enter] for v in rows[leave]]
        rows[leave] = pivot_row
        for i in range(m):
            f = rows[i][enter]
            if i != leave and f:
                rows[i] = [a - f * b for a, b in zip(rows[i], pivot_row, strict=True)]
        f = reduced[enter]
        reduced = [a - f * b for a, b in zip(reduced, pivot_row, strict=True)]
        old = basis[leave]
        basis[leave] = enter
        in_basis[old], in_basis[enter] = False, True
        at_upper[old], at_upper[enter] = leave_up, False
        beta[leave] = value
    y = [max(0.0, -reduced[n + NUM_COLOURS + i]) for i in range(m)]
    lam = y[:NUM_COLOURS]
    lam.append(max(y[NUM_COLOURS], *lam))
    bound = sum(rem[c] * lam[c] for c in range(NUM_COLOURS)) + rem[LOCOMOTIVE] * lam[-1]
    for need, v in zip(reqs, values, strict=True):
        excess = v - sum(need[c] * lam[c] for c in range(NUM_COLOURS) if need[c])
        if excess > 0:
            bound += excess
    x = [1.0 if at_upper[k] else 0.0 for k in range(n)]
    for i, b in enumerate(basis):
        if b < n:
            x[b] = beta[i]
    return bound, x, lam


def _lagrange(
    lam: list[float],
    parts: list[tuple[tuple[int, int], ...]],
    values: list[int],
    live: list[int],
    rem: tuple[int, ...],
) -> float:
    """The Lagrangian bound of :func:`_lp_bound` for the tickets ``live`` and the stack
    ``rem`` with multipliers ``lam`` solved at another node: weak duality holds for any
    multipliers, so this bounds a node for a sum instead of a simplex, only less tightly."""
    bound = sum(rem[c] * lam[c] for c in range(NUM_COLOURS)) + rem[LOCOMOTIVE] * lam[NUM_COLOURS]
    for t in live:
        excess = values[t] - sum(lam[c] * k for c, k in parts[t])
        if excess > 0:
            bound += excess
    return bound


def _best_set(reqs: list[tuple[int, ...]], values: list[int], stack: tuple[int, ...]) -> list[int]:
    """The positions of the set of tickets that ``stack`` completes with the largest
    ``sum(values)``, which the caller makes unique.

    Branch and bound: each node fixes some tickets in or out; a node ends when its undecided
    tickets all fit at once, or when a bound cannot beat the best set found: the sum of what
    is left, the Lagrangian bound with the multipliers of the last relaxation solved above it
    (:func:`_lagrange`), and at nodes of more than ``_SMALL`` tickets the relaxation solved
    afresh (:func:`_lp_bound`), which also gives a greedy incumbent and the ticket to branch
    on (the one it is least sure of). Smaller nodes branch on the ticket the multipliers
    like most, or else the most points per card. Any order finds the same set, the
    optimum being unique. The float bounds are floored after adding ``margin``: every term
    of a bound is non-negative, so its rounding error is below ``1e-14 * sum(values)``
    wherever it could cut, far under the margin."""
    parts = _parts(reqs)
    size = [sum(need) for need in reqs]
    margin = 1e-9 * sum(values) + 1e-3
    best = -1
    best_set: list[int] = []

    def search(
        undecided: list[int],
        rem: tuple[int, ...],
        value: int,
        chosen: list[int],
        lam: list[float] | None,
    ) -> None:
        nonlocal best, best_set
        live = [t for t in undecided if _fits(parts[t], rem)]
        total = value + sum(values[t] for t in live)
        if total <= best:
            return
        if _fits_all(parts, live, rem):
            best, best_set = total, chosen + live
            return
        if (
            lam is not None
            and value + int(_lagrange(lam, parts, values, live, rem) + margin) <= best
        ):
            return
        if len(live) > _SMALL:
            bound, x, lam = _lp_bound([reqs[t] for t in live], [values[t] for t in live], rem)
            if value + int(bound + margin) <= best:
                return
            # A quick incumbent: the tickets the relaxation likes most, greedily.
            ranked = sorted(range(len(live)), key=lambda k: (-x[k], live[k]))
            got, left, taken = value, rem, list(chosen)
            for k in ranked:
                after = _spend(reqs[live[k]], left)
                if after is not None:
                    got, left = got + values[live[k]], after
                    taken.append(live[k])
            if got > best:
                best, best_set = got, taken
            if value + int(bound + margin) <= best:
                return
            split = min(range(len(live)), key=lambda k: (abs(x[k] - 0.5), live[k]))
        elif lam is not None:
            mults = lam
            split = max(
                range(len(live)),
                key=lambda k: values[live[k]] - sum(mults[c] * n for c, n in parts[live[k]]),
            )
        else:
            split = max(range(len(live)), key=lambda k: values[live[k]] / size[live[k]])
        t = live[split]
        rest = live[:split] + live[split + 1 :]
        after = _spend(reqs[t], rem)
        assert after is not None  # t is live
        search(rest, after, value + values[t], [*chosen, t], lam)
        search(rest, rem, value, chosen, lam)

    search(list(range(len(reqs))), stack, 0, [], None)
    return best_set


def best_completion(
    ruleset: CardRuleset, stack: tuple[int, ...], tickets: tuple[int, ...]
) -> tuple[int, ...]:
    """The tickets (indices, ascending) that ``stack`` completes at a scoring.

    What "scores the most" means (docs/rules.md): the most points for the seat's own tickets;
    among those, the most tickets; among those, the lexicographically smallest list of ticket
    indices (a fixed, documented choice, so the result never depends on anything else). Big
    Cities bonuses are not weighed: they depend on the other seats' tickets, which a seat
    cannot know. Maximising completed points also minimises the points lost at the end,
    since every ticket not completed is subtracted (000:243-245).

    Exact for every stack and hand (a hand of 40 tickets takes milliseconds, not the
    exponential time of trying sets), in one search (:func:`_best_set`) of one integer value
    per ticket that orders every set as the three rules do: ``points * (len(ruleset.tickets)
    + 1) + 1`` (points first, then the count), shifted past ``2 ** (n - 1 - i)`` for the
    ticket at position ``i`` of the ``n`` in index order. Among sets of equal points and
    count, the one holding the smallest index that the other lacks has the larger sum of those
    powers, and it is the lexicographically smaller list; no two sets have equal values.
    """
    table = ruleset.tickets
    # A ticket the whole stack cannot complete on its own is in no completion.
    order = [t for t in sorted(tickets) if _spend(table[t].requires, stack) is not None]
    reqs = [table[t].requires for t in order]
    parts = _parts(reqs)
    if _fits_all(parts, list(range(len(order))), stack):
        return tuple(order)
    scale = len(table) + 1
    n = len(order)
    values = [
        ((table[t].points * scale + 1) << n) + (1 << (n - 1 - i)) for i, t in enumerate(order)
    ]
    return tuple(order[i] for i in sorted(_best_set(reqs, values, stack)))


def ticket_points(ruleset: CardRuleset, tickets: tuple[int, ...]) -> int:
    return sum(ruleset.tickets[t].points for t in tickets)


# ---------------------------------------------------------------------------------------------
# final scores


@dataclass(frozen=True, slots=True)
class CardSeatScore:
    seat: int
    completed: tuple[int, ...]  #: tickets completed at the scorings (indices, ascending)
    failed: tuple[int, ...]  #: tickets still in hand (subtracted, 000:243-245)
    completed_points: int
    failed_points: int  #: >= 0, subtracted from the total
    bonuses: tuple[int, ...]  #: Big Cities won (indices into ``ruleset.big_cities``)
    bonus_points: int
    total: int
    rank: int  #: 1 = winner; seats tied on every tie-break share the rank


@dataclass(frozen=True, slots=True)
class CardOutcome:
    final: bool  #: False for a provisional score of a running game
    end_reason: str
    seats: tuple[CardSeatScore, ...]

    @property
    def winners(self) -> tuple[int, ...]:
        return tuple(s.seat for s in self.seats if s.rank == 1)


def big_city_winners(
    ruleset: CardRuleset, completed: tuple[tuple[int, ...], ...]
) -> tuple[tuple[int, ...], ...]:
    """Per Big City, the seats that win its Bonus card: the most completed tickets naming it,
    ties all winning (000:246-249, 000:216-221), a ticket naming two Big Cities counting for
    both (000:221-223). Nobody wins a city no completed ticket names."""
    counts = [[0] * len(completed) for _ in ruleset.big_cities]
    for seat, done in enumerate(completed):
        for t in done:
            for city in ruleset.tickets[t].big_cities:
                counts[city][seat] += 1
    out = []
    for per_seat in counts:
        most = max(per_seat)
        out.append(tuple(s for s, n in enumerate(per_seat) if most and n == most))
    return tuple(out)


def outcome(state: CardGameState) -> CardOutcome:
    """Scores with the per-seat breakdown and ranks. Valid for a running game too (``final``
    False): tickets completed so far count, tickets in hand count as failed, as they would if
    the game ended now; the stacks are not scored until their deck runs out."""
    rules = state.ruleset
    n = state.num_seats
    winners = big_city_winners(rules, state.completed)
    won = [tuple(c for c, seats in enumerate(winners) if s in seats) for s in range(n)]
    totals = []
    for s in range(n):
        bonus = sum(rules.big_cities[c].points for c in won[s])
        totals.append(state.ticket_points[s] - ticket_points(rules, state.tickets[s]) + bonus)

    def key(s: int) -> tuple[int, ...]:
        # 000:224-228 "The player with the most points wins the game. If two or more players
        # are tied for the most points, the player who has completed the most Tickets wins.
        # In the unlikely event they are still tied, the player with the most bonus cards
        # wins." (the ruleset lists the tie-breaks in that order); seats tied on all share
        # the rank.
        tie = {"tickets_completed": len(state.completed[s]), "bonus_cards": len(won[s])}
        return (totals[s], *(tie[name] for name in rules.tie_breaks))

    keys = [key(s) for s in range(n)]
    seats = []
    for s in range(n):
        seats.append(
            CardSeatScore(
                seat=s,
                completed=tuple(sorted(state.completed[s])),
                failed=tuple(sorted(state.tickets[s])),
                completed_points=state.ticket_points[s],
                failed_points=ticket_points(rules, state.tickets[s]),
                bonuses=won[s],
                bonus_points=sum(rules.big_cities[c].points for c in won[s]),
                total=totals[s],
                rank=1 + sum(1 for other in keys if other > keys[s]),
            )
        )
    return CardOutcome(state.is_over, state.end_reason, tuple(seats))
