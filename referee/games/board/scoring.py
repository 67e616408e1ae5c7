"""Final scoring: routes, tickets, the longest path, bonuses, the winner and tie-breaks.

003:105-109 and 002:114-120; New York's Tourist Attractions and tie rule, 001:70-81 and
001:40-42. Everything here is recomputed from the claims (bitmasks) and the kept tickets,
which is what lets the tests compare it with the running route score.
"""

from __future__ import annotations

from dataclasses import dataclass

from referee.games.board.ruleset import GameMap, Ruleset
from referee.games.board.state import GameState


@dataclass(frozen=True, slots=True)
class SeatScore:
    seat: int
    route_points: int  #: 002:89-95 table, recomputed from the routes owned
    tickets_completed: tuple[int, ...]  #: ticket indices
    tickets_failed: tuple[int, ...]
    ticket_points: int  #: 003:105 completed added, incomplete subtracted
    longest_path: int  #: length in trains of the seat's longest continuous path
    longest_path_bonus: int  #: 003:107
    globetrotter_bonus: int  #: 003:25 (1910 variants; 0 where the ruleset has no such card)
    #: Tourist Attractions touched by the seat's routes (city indices, ascending; 001:79-81)
    attractions: tuple[int, ...]
    attraction_points: int  #: ``len(attractions) * ruleset.attraction_points``
    total: int
    rank: int  #: 1 = winner; tied seats share a rank (RULINGS 8)

    def bonus_points(self, kind: str) -> int:
        """Points awarded for the bonus card ``kind`` (``ruleset.BONUS_KINDS``); 0 if none."""
        return {"longest_path": self.longest_path_bonus, "globetrotter": self.globetrotter_bonus}[
            kind
        ]


@dataclass(frozen=True, slots=True)
class Outcome:
    final: bool  #: False for a provisional score of a running game
    end_reason: str
    seats: tuple[SeatScore, ...]

    @property
    def winners(self) -> tuple[int, ...]:
        return tuple(s.seat for s in self.seats if s.rank == 1)


def owned_routes(owned: int) -> list[int]:
    """Route indices set in an ownership bitmask, ascending. Steps once per set bit (lowest
    first), not once per route: views call it for every seat on every decision."""
    out = []
    while owned:
        low = owned & -owned
        out.append(low.bit_length() - 1)
        owned ^= low
    return out


def connected(game_map: GameMap, owned: int, a: int, b: int) -> bool:
    """003:97 "A Ticket is successfully completed if the player creates a continuous path of
    his trains between the 2 cities named on the Ticket." (union-find over owned routes)"""
    parent = list(range(len(game_map.cities)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    routes = game_map.routes
    for index in owned_routes(owned):
        r = routes[index]
        ra, rb = find(r.a), find(r.b)
        if ra != rb:
            parent[ra] = rb
    return find(a) == find(b)


def longest_path(game_map: GameMap, owned: int) -> int:
    """Length (in trains) of the longest continuous path of owned routes.

    003:107 "A given Train can never be used twice in the same continuous path": a route is
    used at most once, while cities may be passed through again (a trail, not a simple path).
    Exhaustive search over trails from every city; a seat owns at most ~45 trains of routes,
    which keeps this small.
    """
    routes = game_map.routes
    adjacency: dict[int, list[tuple[int, int, int]]] = {}
    for index in owned_routes(owned):
        r = routes[index]
        adjacency.setdefault(r.a, []).append((r.b, index, r.length))
        adjacency.setdefault(r.b, []).append((r.a, index, r.length))
    if not adjacency:
        return 0
    best = 0

    def walk(city: int, used: int, length: int) -> None:
        nonlocal best
        if length > best:
            best = length
        for other, index, route_length in adjacency[city]:
            bit = 1 << index
            if not used & bit:
                walk(other, used | bit, length + route_length)

    # A longest trail can be assumed to start at an odd-degree city when its component has
    # one (extend it backwards otherwise); in an all-even component any city will do.
    for city, edges in adjacency.items():
        if len(edges) % 2 == 1 or not _component_has_odd(adjacency, city):
            walk(city, 0, 0)
    return best


def _component_has_odd(adjacency: dict[int, list[tuple[int, int, int]]], start: int) -> bool:
    seen = {start}
    stack = [start]
    while stack:
        city = stack.pop()
        if len(adjacency[city]) % 2 == 1:
            return True
        for other, _, _ in adjacency[city]:
            if other not in seen:
                seen.add(other)
                stack.append(other)
    return False


def attractions_touched(game_map: GameMap, owned: int) -> tuple[int, ...]:
    """001:79-81 "one point for each Tourist Attraction that is connected to one or more of
    the Routes they claimed": an attraction counts once, however many of the seat's routes end
    there, and it need not lie on a ticket's path."""
    routes = game_map.routes
    touched = set()
    for index in owned_routes(owned):
        r = routes[index]
        touched.add(r.a)
        touched.add(r.b)
    return tuple(c for c in game_map.attractions if c in touched)


def route_points_of(ruleset: Ruleset, owned: int) -> int:
    """Route points recomputed from scratch (the engine keeps a running total)."""
    routes = ruleset.game_map.routes
    return sum(ruleset.route_points[routes[i].length] for i in owned_routes(owned))


def outcome(state: GameState) -> Outcome:
    """Scores with the per-seat breakdown and ranks. Valid for a running game too (then
    ``final`` is False and tickets not yet finished count as failed, as they would now)."""
    rules = state.ruleset
    game_map = rules.game_map
    completed: list[tuple[int, ...]] = []
    failed: list[tuple[int, ...]] = []
    ticket_points: list[int] = []
    lengths: list[int] = []
    for seat in range(state.num_seats):
        owned = state.owned[seat]
        done: list[int] = []
        missed: list[int] = []
        points = 0
        for t in state.tickets[seat]:
            ticket = rules.tickets[t]
            if connected(game_map, owned, ticket.a, ticket.b):
                done.append(t)
                points += ticket.points  # 003:105 "added"
            else:
                missed.append(t)
                points -= ticket.points  # 003:105 "subtracted"
        completed.append(tuple(done))
        failed.append(tuple(missed))
        ticket_points.append(points)
        lengths.append(longest_path(game_map, owned))

    longest = max(lengths)
    # 003:107 "If several players are tied they each receive the bonus"; RULINGS 7: a path
    # of at least one route is needed.
    has_longest = [longest > 0 and length == longest for length in lengths]
    most_tickets = max(len(c) for c in completed)
    # 003:25 Globetrotter "Most Completed Tickets": tied players each receive it, as with the
    # longest path (docs/rules.md); at least one completed ticket is needed.
    has_globetrotter = [
        rules.globetrotter_bonus > 0 and most_tickets > 0 and len(c) == most_tickets
        for c in completed
    ]
    attractions = [
        attractions_touched(game_map, state.owned[seat]) if rules.attraction_points else ()
        for seat in range(state.num_seats)
    ]
    totals = []
    for seat in range(state.num_seats):
        totals.append(
            route_points_of(rules, state.owned[seat])
            + ticket_points[seat]
            + len(attractions[seat]) * rules.attraction_points
            + (rules.longest_path_bonus if has_longest[seat] and rules.longest_path_bonus else 0)
            + (rules.globetrotter_bonus if has_globetrotter[seat] else 0)
        )

    def key(seat: int) -> tuple[int, ...]:
        # 003:109 "The player with the most points wins. If a tie, the player who completed the
        # most Destination Tickets wins. If still tied, the player with the Longest Continuous
        # Path bonus card wins." 001:40-42 New York: most tickets, then shared. Tie-break order
        # comes from the ruleset.
        parts = [totals[seat]]
        for tie_break in rules.tie_breaks:
            if tie_break == "tickets_completed":
                parts.append(len(completed[seat]))
            elif tie_break == "longest_path":
                parts.append(int(has_longest[seat]))
            elif tie_break == "globetrotter":
                parts.append(int(has_globetrotter[seat]))
        return tuple(parts)

    keys = [key(seat) for seat in range(state.num_seats)]
    scores = []
    for seat in range(state.num_seats):
        # RULINGS 8: seats equal on every tie-break share the rank (competition ranking).
        rank = 1 + sum(1 for other in keys if other > keys[seat])
        scores.append(
            SeatScore(
                seat=seat,
                route_points=route_points_of(rules, state.owned[seat]),
                tickets_completed=completed[seat],
                tickets_failed=failed[seat],
                ticket_points=ticket_points[seat],
                longest_path=lengths[seat],
                longest_path_bonus=rules.longest_path_bonus if has_longest[seat] else 0,
                globetrotter_bonus=rules.globetrotter_bonus if has_globetrotter[seat] else 0,
                attractions=attractions[seat],
                attraction_points=len(attractions[seat]) * rules.attraction_points,
                total=totals[seat],
                rank=rank,
            )
        )
    return Outcome(state.is_over, state.end_reason, tuple(scores))
