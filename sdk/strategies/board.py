"""Sample strategies for TTR Arena bots, deciding from what one seat may know.

A strategy sees exactly what a bot on the wire sees: its seat's :class:`SeatView`, the legal
actions and the static :class:`Ruleset`. It never reads the ``GameState``, so every strategy
here can sit behind the wire unchanged and cannot cheat by accident.

Three strengths, so that a new bot has something to measure itself against:

* :class:`RandomStrategy`, the floor;
* :class:`GreedyStrategy`, route points only, the baseline a real bot must beat;
* :class:`PlannerStrategy`, tickets along shortest paths, the bar of the sample bots.
"""

from __future__ import annotations

import heapq
import math
import random
from abc import ABC, abstractmethod
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial

from referee.games.board import (
    Action,
    ClaimRoute,
    DrawBlind,
    DrawFaceUp,
    DrawTickets,
    KeepTickets,
    Outcome,
    Ruleset,
    SeatView,
)
from referee.games.common.cards import GRAY, LOCOMOTIVE, NUM_COLOURS
from referee.games.common.memo import per_object
from referee.games.play import play
from referee.games.registry import BOARD

__all__ = [
    "Board",
    "GreedyStrategy",
    "Needs",
    "Plan",
    "PlannerStrategy",
    "RandomStrategy",
    "Rates",
    "Strategy",
    "blocked_routes",
    "build_plan",
    "card_needs",
    "claimed_routes",
    "connected",
    "play_match",
    "route_value",
    "shortest_path",
    "touched_attractions",
    "turns_left",
]


class Strategy(ABC):
    """What the referee (or the SDK's wire loop) needs from a bot's brain.

    ``choose`` gets only what a seat may know, so a strategy that works in-process works on
    the wire too. Randomness comes from the strategy's own ``random.Random`` seeded from its
    own seed and the one ``new_game`` gets (in-process the game seed; behind the SDK's
    :class:`~sdk.bot.StrategyBot`, the seat's ``Game.bot_seed``), so a game replays exactly
    whatever else runs in the process.
    """

    name = "strategy"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.rng = random.Random(f"{self.name}/{seed}")

    def new_game(self, ruleset: Ruleset, seat: int, seed: int) -> None:
        """Reset per-game memory; reseeding here makes each game replayable on its own."""
        self.rng = random.Random(f"{self.name}/{self.seed}/{seed}/{seat}")

    @abstractmethod
    def choose(self, view: SeatView, legal: Sequence[Action], ruleset: Ruleset) -> Action:
        """One element of ``legal``."""


# ---------------------------------------------------------------------------------------------
# the random floor


class RandomStrategy(Strategy):
    """Uniform over the legal actions: the floor every other bot must clear."""

    name = "random"

    def choose(self, view: SeatView, legal: Sequence[Action], ruleset: Ruleset) -> Action:
        return legal[self.rng.randrange(len(legal))]


# ---------------------------------------------------------------------------------------------
# facts about the board, derived from the view (shared by the greedy and the planner)


@dataclass(frozen=True, slots=True)
class Board:
    """Per-ruleset adjacency, built once: path searches run on every planner decision."""

    ruleset: Ruleset
    adjacency: tuple[tuple[tuple[int, int, int], ...], ...]  #: city -> (other, route, length)

    @staticmethod
    def of(ruleset: Ruleset) -> Board:
        """The ruleset's board, built once per ruleset."""
        return _board_of(ruleset)


@per_object
def _board_of(ruleset: Ruleset) -> Board:
    game_map = ruleset.game_map
    adjacency: list[list[tuple[int, int, int]]] = [[] for _ in game_map.cities]
    for r in game_map.routes:
        adjacency[r.a].append((r.b, r.index, r.length))
        adjacency[r.b].append((r.a, r.index, r.length))
    return Board(ruleset, tuple(tuple(edges) for edges in adjacency))


def claimed_routes(view: SeatView) -> dict[int, int]:
    """Route index -> the seat that claimed it, from the public part of the view."""
    return {route: p.seat for p in view.players for route in p.routes}


def blocked_routes(view: SeatView, ruleset: Ruleset) -> frozenset[int]:
    """Routes the viewing seat may not claim (003:87), rebuilt from public claims.

    The engine keeps this mask in the hidden state; a bot has to derive it: claimed by anyone,
    the other track of a double the seat owns, and in games below
    ``both_tracks_min_players`` the other track of any claimed double.
    """
    routes = ruleset.game_map.routes
    both_open = view.num_seats >= ruleset.both_tracks_min_players
    blocked: set[int] = set()
    for route, owner in claimed_routes(view).items():
        blocked.add(route)
        sibling = routes[route].sibling
        if sibling is not None and (owner == view.seat or not both_open):
            blocked.add(sibling)
    return frozenset(blocked)


def connected(ruleset: Ruleset, routes: Iterable[int], a: int, b: int) -> bool:
    """Whether ``routes`` join cities ``a`` and ``b`` (how 003:97 scores a ticket)."""
    parent = list(range(len(ruleset.game_map.cities)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    all_routes = ruleset.game_map.routes
    for index in routes:
        r = all_routes[index]
        parent[find(r.a)] = find(r.b)
    return find(a) == find(b)


def shortest_path(
    board: Board,
    a: int,
    b: int,
    free: Collection[int],
    closed: Collection[int],
    per_route: float = 0.0,
    prize: Mapping[int, float] | None = None,
) -> tuple[int, tuple[int, ...]] | None:
    """The fewest trains still to lay to join ``a`` and ``b``, and the routes to claim.

    Routes in ``free`` (owned, or already planned) cost nothing; other routes in ``closed``
    do not exist. Each route to claim also costs ``per_route`` trains' worth: fewer, longer routes
    mean fewer claiming turns, more points per train and fewer chances to be cut off. A city in
    ``prize`` (a Tourist Attraction not yet touched, 001:79-81) takes that many trains' worth
    off a route to claim that reaches it, so a path bends through it when the detour is cheaper
    than the points; every step still costs something, so the search stays exact. Ties go to
    fewer routes. ``None`` when no path is left.
    """
    if a == b:
        return 0, ()
    adjacency = board.adjacency
    step = per_route + 1e-3
    best: dict[int, float] = {a: 0.0}
    back: dict[int, tuple[int, int]] = {}
    heap = [(0.0, a)]
    while heap:
        key, city = heapq.heappop(heap)
        if city == b:
            break
        if key > best[city]:
            continue
        for other, route, length in adjacency[city]:
            if route in free:
                new = key
            elif route in closed:
                continue
            else:
                cost = length + step
                if prize:
                    cost = max(step, cost - prize.get(other, 0.0))
                new = key + cost
            if new < best.get(other, float("inf")):
                best[other] = new
                back[other] = (city, route)
                heapq.heappush(heap, (new, other))
    if b not in best:
        return None
    path: list[int] = []
    trains = 0
    routes = board.ruleset.game_map.routes
    city = b
    while city != a:
        city, route = back[city]
        if route not in free:
            path.append(route)
            trains += routes[route].length
    path.reverse()
    return trains, tuple(path)


def _claims_by_route(legal: Sequence[Action]) -> dict[int, list[ClaimRoute]]:
    out: dict[int, list[ClaimRoute]] = {}
    for action in legal:
        if isinstance(action, ClaimRoute):
            out.setdefault(action.route, []).append(action)
    return out


def _face_up_draws(view: SeatView, legal: Sequence[Action]) -> list[tuple[DrawFaceUp, int]]:
    """Legal face-up draws with the card each one takes."""
    return [(a, view.face_up[a.slot]) for a in legal if isinstance(a, DrawFaceUp)]


def _fallback(legal: Sequence[Action]) -> Action:
    """Whatever is left when a strategy's preferences are all illegal; never a ticket draw
    when anything else is possible, since a forced ticket costs points."""
    for action in legal:
        if not isinstance(action, DrawTickets):
            return action
    return legal[0]


# ---------------------------------------------------------------------------------------------
# the greedy baseline


class GreedyStrategy(Strategy):
    """Route points only: claim the longest route it can, else draw towards its biggest stack.

    Keeps the fewest and cheapest tickets and never draws more, so it loses ticket points
    but claims fast; the planner has to outscore that tempo with tickets.
    """

    name = "greedy"

    def choose(self, view: SeatView, legal: Sequence[Action], ruleset: Ruleset) -> Action:
        first = legal[0]
        if isinstance(first, KeepTickets):
            points = {t.index: t.points for t in ruleset.tickets}
            options = [a for a in legal if isinstance(a, KeepTickets)]
            return min(options, key=lambda a: (len(a.tickets), sum(points[t] for t in a.tickets)))
        claims = _claims_by_route(legal)
        if claims:
            routes = ruleset.game_map.routes
            route = max(claims, key=lambda r: (ruleset.route_points[routes[r].length], -r))
            hand = view.hand
            return min(
                claims[route],
                key=lambda a: (a.locomotives, -hand[a.colour], a.colour),
            )
        face_up = [(a, c) for a, c in _face_up_draws(view, legal) if c != LOCOMOTIVE]
        if face_up:
            action, colour = max(face_up, key=lambda ac: (view.hand[ac[1]], -ac[0].slot))
            if view.hand[colour] > 0 or DrawBlind() not in legal:
                return action
        if DrawBlind() in legal:
            return DrawBlind()
        return _fallback(legal)


# ---------------------------------------------------------------------------------------------
# the planner


@dataclass(frozen=True, slots=True)
class Plan:
    """Routes to claim for a set of tickets, cheapest ticket first (shared track is free)."""

    routes: tuple[int, ...]  #: to claim, in the order the tickets were planned
    cost: int  #: trains they take
    tickets: tuple[int, ...]  #: tickets the plan finishes, in planning order
    steps: tuple[tuple[int, int], ...]  #: per planned ticket: (trains, routes) so far
    dropped: tuple[int, ...]  #: tickets it cannot finish (cut off, or not enough trains)


def build_plan(
    board: Board,
    tickets: Iterable[int],
    mine: Collection[int],
    closed: Collection[int],
    trains: int,
    per_route: float = 0.0,
    prize: Mapping[int, float] | None = None,
) -> Plan:
    """A cheap Steiner tree for ``tickets``: repeatedly join the ticket that is cheapest to
    finish given what is owned or planned, so tickets share track. ``prize`` (see
    ``shortest_path``) is spent as the plan reaches its cities: an attraction scores once."""
    ruleset = board.ruleset
    all_routes = ruleset.game_map.routes
    free = set(mine)
    todo = list(tickets)
    left = dict(prize) if prize else None
    routes: list[int] = []
    planned: list[int] = []
    steps: list[tuple[int, int]] = []
    dropped: list[int] = []
    cost = 0
    while todo:
        best: tuple[float, int, tuple[int, ...], int] | None = None
        for t in list(todo):
            ticket = ruleset.tickets[t]
            found = shortest_path(board, ticket.a, ticket.b, free, closed, per_route, left)
            if found is None:
                todo.remove(t)
                dropped.append(t)
                continue
            key = (found[0] + per_route * len(found[1]), -ticket.points, found[1], t)
            if best is None or key < best:
                best = key
        if best is None:
            break
        _, _, path, t = best
        todo.remove(t)
        trains_needed = sum(all_routes[r].length for r in path)
        if cost + trains_needed > trains:
            dropped.append(t)
            continue
        cost += trains_needed
        routes.extend(path)
        free.update(path)
        if left:
            for r in path:
                left.pop(all_routes[r].a, None)
                left.pop(all_routes[r].b, None)
        planned.append(t)
        steps.append((cost, len(routes)))
    return Plan(tuple(routes), cost, tuple(planned), tuple(steps), tuple(dropped))


@dataclass(frozen=True, slots=True)
class Needs:
    """Cards still missing for a set of routes, and how much each colour is worth drawing."""

    missing: int  #: cards to collect, after counting the Locomotives in hand
    value: tuple[float, ...]  #: per colour: how much a card of it helps (0 = not at all)
    required: tuple[int, ...]  #: per colour: cards the coloured routes take


def card_needs(
    ruleset: Ruleset, routes: Iterable[int], hand: Sequence[int], closed: Collection[int]
) -> Needs:
    """Match the hand to the routes: coloured routes first (a double takes whichever of its
    two colours the hand holds more of), then gray routes on the biggest spare stacks."""
    all_routes = ruleset.game_map.routes
    required = [0] * NUM_COLOURS
    grays: list[int] = []
    for index in routes:
        route = all_routes[index]
        colours = {route.colour}
        sibling = route.sibling
        if sibling is not None and sibling not in closed:
            colours.add(all_routes[sibling].colour)
        if GRAY in colours:
            grays.append(route.length)
            continue
        colour = max(colours, key=lambda c: (hand[c] - required[c], -c))
        required[colour] += route.length
    deficit = [max(0, required[c] - hand[c]) for c in range(NUM_COLOURS)]
    spare = [max(0, hand[c] - required[c]) for c in range(NUM_COLOURS)]
    gray_target = [0] * NUM_COLOURS
    gray_any = 0
    for length in sorted(grays, reverse=True):
        colour = max(range(NUM_COLOURS), key=lambda c: (spare[c], -gray_target[c], -c))
        if spare[colour] >= length:
            spare[colour] -= length
        elif spare[colour] > 0:
            gray_target[colour] += length - spare[colour]
            spare[colour] = 0
        else:
            gray_any += length
    value = []
    for c in range(NUM_COLOURS):
        if deficit[c]:
            value.append(3.0 + 0.1 * deficit[c])
        elif gray_target[c]:
            value.append(2.0 + 0.1 * gray_target[c])
        elif gray_any:
            value.append(1.0 + 0.1 * spare[c])
        else:
            value.append(0.0)
    missing = sum(deficit) + sum(gray_target) + gray_any - hand[LOCOMOTIVE]
    return Needs(max(0, missing), tuple(value), tuple(required))


#: Trains a seat lays per turn before anything is seen (blended with what is observed).
PRIOR_RATE = 1.4
PRIOR_TURNS = 8.0
#: Useful cards a drawing turn brings, on average (two cards, not all of a wanted colour).
CARDS_PER_TURN = 1.6


def turns_left(view: SeatView, ruleset: Ruleset) -> float:
    """How many more turns this seat will likely get, from the pace of the fastest seat.

    Each seat's pace (trains per turn) blends a prior with what it has done so far; the game
    ends when the first seat gets down to ``trains_trigger``, then everyone plays once more.
    """
    if view.last_round >= 0:
        return 1.0
    played = view.turn / view.num_seats
    estimate = float("inf")
    for p in view.players:
        used = ruleset.trains - p.trains
        rate = (used + PRIOR_RATE * PRIOR_TURNS) / (played + PRIOR_TURNS)
        estimate = min(estimate, (p.trains - ruleset.trains_trigger) / max(rate, 0.3))
    return estimate + 1.0


def turns_needed(routes: float, missing_cards: float) -> float:
    """Turns to collect the missing cards and then claim each route."""
    return routes + missing_cards / CARDS_PER_TURN


@dataclass(frozen=True, slots=True)
class Rates:
    """What a train, a ticket and a Tourist Attraction are worth in one ruleset, read from its
    numbers alone (the route table, the map, the ticket deck), so that the planner's
    thresholds scale from 45 trains to New York's 15 taxis without naming a variant."""

    point_rate: float  #: route points per train over all the map's routes
    best_rate: float  #: the most route points per train any route of the map scores
    ticket_trains: float  #: trains the average ticket's shortest path takes on an empty board
    ticket_routes: float  #: routes on that path
    attraction: float  #: trains' worth of touching one more Tourist Attraction (0: none scored)

    @staticmethod
    def of(ruleset: Ruleset) -> Rates:
        """The ruleset's rates, worked out once per ruleset."""
        return _rates_of(ruleset)


@per_object
def _rates_of(ruleset: Ruleset) -> Rates:
    routes = ruleset.game_map.routes
    points = ruleset.route_points
    point_rate = sum(points[r.length] for r in routes) / sum(r.length for r in routes)
    best_rate = max(points[r.length] / r.length for r in routes)
    board = Board.of(ruleset)
    found = [
        path
        for t in ruleset.tickets
        if (path := shortest_path(board, t.a, t.b, (), (), PlannerStrategy.per_route)) is not None
    ]
    ticket_trains = sum(p[0] for p in found) / max(1, len(found))
    ticket_routes = sum(len(p[1]) for p in found) / max(1, len(found))
    # a train laid scores ``point_rate`` on average, so an attraction point is worth that
    # many trains' fewer (001:79-81)
    attraction = ruleset.attraction_points / point_rate if point_rate else 0.0
    return Rates(point_rate, best_rate, ticket_trains, ticket_routes, attraction)


def touched_attractions(ruleset: Ruleset, routes: Iterable[int]) -> frozenset[int]:
    """Tourist Attractions the routes reach; each scores once however many routes end there
    (001:79-81), so only a route reaching a new one earns its points."""
    all_routes = ruleset.game_map.routes
    attractions = ruleset.game_map.cities
    touched: set[int] = set()
    for index in routes:
        r = all_routes[index]
        for city in (r.a, r.b):
            if attractions[city].attraction:
                touched.add(city)
    return frozenset(touched)


def route_value(ruleset: Ruleset, route: int, touched: Collection[int]) -> int:
    """Points a claim scores at once: the route table (002:89-95, 001:70-73) and, where the
    ruleset scores them, each Tourist Attraction it reaches that ``touched`` lacks."""
    r = ruleset.game_map.routes[route]
    points = ruleset.route_points[r.length]
    if ruleset.attraction_points:
        cities = ruleset.game_map.cities
        new = sum(1 for c in {r.a, r.b} if cities[c].attraction and c not in touched)
        points += new * ruleset.attraction_points
    return points


class PlannerStrategy(Strategy):
    """Tickets first: keep what it can finish, claim along shortest paths, then spend spare
    trains on the routes that score most per train.

    Everything is recomputed from the view on every decision (the plan, the blocked routes,
    the card needs), so it carries no memory between calls and can take over any seat mid-game.
    What a variant rewards comes from the ruleset's numbers: a Globetrotter bonus makes each
    finished ticket worth more, Tourist Attraction points make routes reaching new ones worth
    more, and the thresholds scale with the trains and the tickets (``Rates``).
    """

    name = "planner"

    #: Draw new tickets only with this many average tickets' trains (``Rates.ticket_trains``)
    #: and this share of the turns an average ticket takes to spare.
    ticket_trains = 1.2
    ticket_turns = 0.8
    #: Spread (in turns) of the completion-probability ramp used to value tickets.
    slack_spread = 6.0
    #: Chance, per route still to claim, that an opponent cuts a ticket's path for good.
    hazard = 0.05
    #: Trains' worth each extra route costs in path searches (see ``shortest_path``).
    per_route = 1.0
    #: Spare trains go on routes scoring at least this share of ``Rates.best_rate`` points per
    #: train: while tickets are planned, with none planned, in the last 6 turns, the last 3.
    spare_rates = (0.8, 0.7, 0.5, 0.0)
    #: Globetrotter (003:25): rivals are taken to finish this share of the tickets they hold
    #: (how many they finish is secret, 003:91, how many they hold is not), and a lead of one
    #: ticket moves the chance of the bonus by about one step of this logistic spread.
    rival_share = 0.8
    globetrotter_spread = 1.0
    attraction_keep = 1.0
    attraction_path = 1.0
    ticket_mode = "ev"
    ticket_turn_cost = 1.0

    def choose(self, view: SeatView, legal: Sequence[Action], ruleset: Ruleset) -> Action:
        if len(legal) == 1:
            return legal[0]
        if isinstance(legal[0], KeepTickets):
            return self._keep(view, legal, ruleset)
        return self._play(view, legal, ruleset)

    # -- the situation -----------------------------------------------------------------------

    def _situation(self, view: SeatView, ruleset: Ruleset) -> tuple[frozenset[int], frozenset[int]]:
        mine = frozenset(view.players[view.seat].routes)
        return mine, blocked_routes(view, ruleset)

    def _pending(self, view: SeatView, ruleset: Ruleset, mine: frozenset[int]) -> list[int]:
        return [
            t
            for t in view.tickets
            if not connected(ruleset, mine, ruleset.tickets[t].a, ruleset.tickets[t].b)
        ]

    def _prize(self, ruleset: Ruleset, touched: frozenset[int]) -> dict[int, float]:
        """Trains' worth of each Tourist Attraction the seat has not reached yet (empty where
        the ruleset scores none)."""
        worth = Rates.of(ruleset).attraction * self.attraction_path
        if not worth:
            return {}
        return {c: worth for c in ruleset.game_map.attractions if c not in touched}

    def _finishable(
        self, view: SeatView, ruleset: Ruleset, plan: Plan, closed: frozenset[int], turns: float
    ) -> list[tuple[int, float, int]]:
        """Each planned ticket with its estimated slack in turns (turns left - turns needed)
        and the number of routes its own path adds."""
        out = []
        before = 0
        for i, t in enumerate(plan.tickets):
            _, n_routes = plan.steps[i]
            needs = card_needs(ruleset, plan.routes[:n_routes], view.hand, closed)
            out.append((t, turns - turns_needed(n_routes, needs.missing), n_routes - before))
            before = n_routes
        return out

    def _chance(self, slack: float, routes: int) -> float:
        """Chance to finish a ticket: a ramp on the slack in turns, less the risk of being
        cut off on each route still to claim."""
        p = min(0.98, max(0.02, 0.5 + slack / (2 * self.slack_spread)))
        return p * (1.0 - self.hazard) ** routes

    def _globetrotter(self, view: SeatView, ruleset: Ruleset, finished: float) -> float:
        """Expected Globetrotter points (003:25: every seat tied for the most completed
        tickets, at least one) for ``finished`` tickets expected done; 0 when not in play."""
        bonus = ruleset.globetrotter_bonus
        if not bonus or finished <= 0:
            return 0.0
        held = max(
            (
                max(p.tickets, ruleset.setup_tickets_keep_min)
                for p in view.players
                if p.seat != view.seat
            ),
            default=0,
        )
        lead = finished - self.rival_share * held + 0.5  # a tie still earns the card
        return bonus / (1.0 + math.exp(-lead / self.globetrotter_spread))

    def _draw_value(
        self,
        view: SeatView,
        ruleset: Ruleset,
        mine: frozenset[int],
        closed: frozenset[int],
        turns: float,
        prize: Mapping[int, float],
        touched: frozenset[int],
    ) -> float:
        """Expected points of drawing tickets now: each ticket not in hand valued alone as
        ``_keep`` values it, then the best ``tickets_keep_min`` of a random draw of
        ``tickets_drawn`` that must be kept (003:59-61), plus any other worth keeping. More
        tickets to choose from (draw 4, keep 1) make a draw worth more."""
        board = Board.of(ruleset)
        trains = view.players[view.seat].trains
        held = set(view.tickets)
        finished = float(len(view.tickets))
        base = self._globetrotter(view, ruleset, finished)
        values = []
        for ticket in ruleset.tickets:
            if ticket.index in held:
                continue
            plan = build_plan(board, [ticket.index], mine, closed, trains, self.per_route, prize)
            if not plan.tickets:
                values.append(-float(ticket.points))
                continue
            ((_, slack, routes),) = self._finishable(view, ruleset, plan, closed, turns)
            p = self._chance(slack, routes)
            value = (2 * p - 1) * ticket.points
            value += self._globetrotter(view, ruleset, finished + p) - base
            if ruleset.attraction_points:
                reached = touched_attractions(ruleset, plan.routes) - touched
                value += p * self.attraction_keep * ruleset.attraction_points * len(reached)
            values.append(value)
        n = len(values)
        k = min(ruleset.tickets_drawn, view.ticket_deck_size, n)
        if k <= 0:
            return 0.0
        m = min(ruleset.tickets_keep_min, k)
        values.sort()
        subsets = math.comb(n, k)
        in_draw = math.comb(n - 1, k - 1) / subsets
        expected = 0.0
        for i, v in enumerate(values):
            # the draw holds this ticket with j of the n - 1 - i better ones: kept for sure
            # while j < m, kept only if worth it otherwise
            top = sum(math.comb(n - 1 - i, j) * math.comb(i, k - 1 - j) for j in range(m))
            top_p = top / subsets
            expected += v * top_p + max(0.0, v) * (in_draw - top_p)
        return expected

    # -- keeping tickets ---------------------------------------------------------------------

    def _keep(self, view: SeatView, legal: Sequence[Action], ruleset: Ruleset) -> Action:
        board = Board.of(ruleset)
        mine, closed = self._situation(view, ruleset)
        pending = self._pending(view, ruleset, mine)
        finished = len(view.tickets) - len(pending)
        trains = view.players[view.seat].trains
        turns = turns_left(view, ruleset)
        touched = touched_attractions(ruleset, mine)
        prize = self._prize(ruleset, touched)
        best: tuple[float, int, KeepTickets] | None = None
        for action in legal:
            if not isinstance(action, KeepTickets):
                continue
            tickets = [*pending, *action.tickets]
            plan = build_plan(board, tickets, mine, closed, trains, self.per_route, prize)
            value = 0.0
            expected = float(finished)
            for t, slack, routes in self._finishable(view, ruleset, plan, closed, turns):
                p = self._chance(slack, routes)
                value += (2 * p - 1) * ruleset.tickets[t].points
                expected += p
            for t in plan.dropped:
                value -= ruleset.tickets[t].points
            value += self._globetrotter(view, ruleset, expected)
            if ruleset.attraction_points:
                reached = touched_attractions(ruleset, plan.routes) - touched
                value += ruleset.attraction_points * len(reached) * self.attraction_keep
            # on equal value keep fewer: an unplayed ticket can only cost points
            if best is None or (value, -len(action.tickets)) > best[:2]:
                best = (value, -len(action.tickets), action)
        if best is None:
            return _fallback(legal)
        return best[2]

    # -- a turn ------------------------------------------------------------------------------

    def _play(self, view: SeatView, legal: Sequence[Action], ruleset: Ruleset) -> Action:
        board = Board.of(ruleset)
        rates = Rates.of(ruleset)
        mine, closed = self._situation(view, ruleset)
        trains = view.players[view.seat].trains
        pending = self._pending(view, ruleset, mine)
        turns = turns_left(view, ruleset)
        touched = touched_attractions(ruleset, mine)
        prize = self._prize(ruleset, touched)
        plan = build_plan(board, pending, mine, closed, trains, self.per_route, prize)
        # tickets that cannot be finished in time are given up: their routes are not chased
        keep_n = 0
        for i, (_, slack, _) in enumerate(self._finishable(view, ruleset, plan, closed, turns)):
            if slack >= -1.0:
                keep_n = i + 1
        routes = plan.routes[: plan.steps[keep_n - 1][1]] if keep_n else ()
        cost = plan.steps[keep_n - 1][0] if keep_n else 0
        # no phase test is needed: the second card's rules (no claim, no ticket draw, no face-up
        # Locomotive) are already in ``legal``
        claims = _claims_by_route(legal)

        if claims:
            if view.last_round >= 0 or turns <= 1.5:
                return self._best_scoring_claim(
                    view, ruleset, claims, mine, pending, routes, closed, touched
                )
            wanted = self._plan_claim(
                view, ruleset, claims, plan.tickets[:keep_n], routes, mine, closed, cost, prize
            )
            if wanted is not None:
                return wanted

        # a new ticket is worth a turn only while an average one still fits the trains and
        # the turns left (003:59-61: drawn tickets must be kept, at least one)
        if not pending and DrawTickets() in legal:
            if self.ticket_mode == "ev":
                worth = self._draw_value(view, ruleset, mine, closed, turns, prize, touched)
                if worth > self.ticket_turn_cost * CARDS_PER_TURN * rates.point_rate:
                    return DrawTickets()
            elif trains >= self.ticket_trains * rates.ticket_trains and turns >= (
                self.ticket_turns * turns_needed(rates.ticket_routes, rates.ticket_trains)
            ):
                return DrawTickets()

        spare = trains - cost
        targets = list(routes)
        if not routes:
            targets = self._point_targets(ruleset, mine, closed, spare, touched)
        if claims and spare > 0:
            extra = self._spare_claim(
                view, ruleset, claims, targets, routes, closed, spare, turns, touched
            )
            if extra is not None:
                return extra
        needs = card_needs(ruleset, targets, view.hand, closed)
        return self._draw(view, legal, needs)

    def _plan_claim(
        self,
        view: SeatView,
        ruleset: Ruleset,
        claims: dict[int, list[ClaimRoute]],
        tickets: Sequence[int],
        routes: Sequence[int],
        mine: frozenset[int],
        closed: frozenset[int],
        cost: int,
        prize: Mapping[int, float],
    ) -> Action | None:
        """Claim a planned route (or the open other track of one), the one whose loss would
        hurt most first (the detour in trains, a lost ticket counting double its points),
        then the longest: long routes need the most cards to replace."""
        all_routes = ruleset.game_map.routes
        planned = set(routes)
        candidates = [r for r in claims if r in planned or all_routes[r].sibling in planned]
        if not candidates:
            return None
        board = Board.of(ruleset)
        trains = view.players[view.seat].trains

        def urgency(r: int) -> tuple[int, int, int]:
            if len(candidates) == 1:
                return (0, 0, 0)
            without = build_plan(board, tickets, mine, closed | {r}, trains, self.per_route, prize)
            lost = sum(2 * ruleset.tickets[t].points for t in without.dropped)
            return (without.cost - cost + lost, all_routes[r].length, -r)

        route = max(candidates, key=urgency)
        group = {route, all_routes[route].sibling}
        others = [r for r in routes if r not in group]
        return self._pay(view, ruleset, claims[route], others, closed)

    def _pay(
        self,
        view: SeatView,
        ruleset: Ruleset,
        options: Sequence[ClaimRoute],
        others: Sequence[int],
        closed: frozenset[int],
    ) -> ClaimRoute:
        """The payment that spends the fewest cards the rest of the plan still needs;
        Locomotives are the scarcest card, so each one costs more than a coloured card."""
        hand = view.hand
        required = card_needs(ruleset, others, hand, closed).required
        length = ruleset.game_map.routes[options[0].route].length

        def cost(a: ClaimRoute) -> tuple[float, int, int]:
            if a.colour == LOCOMOTIVE:
                return (3.0 * length, 0, a.colour)
            coloured = length - a.locomotives
            spare = max(0, hand[a.colour] - required[a.colour])
            harm = max(0, coloured - spare)
            return (3.0 * a.locomotives + harm, hand[a.colour] - coloured, a.colour)

        return min(options, key=cost)

    def _best_scoring_claim(
        self,
        view: SeatView,
        ruleset: Ruleset,
        claims: dict[int, list[ClaimRoute]],
        mine: frozenset[int],
        pending: Sequence[int],
        routes: Sequence[int],
        closed: frozenset[int],
        touched: frozenset[int],
    ) -> Action:
        """Last turns: whatever scores most now, a ticket it finishes counted twice (the
        points it adds and the penalty it avoids) plus what it adds to the Globetrotter."""
        finished = len(view.tickets) - len(pending)
        globetrotter = self._globetrotter(view, ruleset, finished)

        def gain(r: int) -> tuple[float, int]:
            points = float(route_value(ruleset, r, touched))
            owned = [*mine, r]
            done = finished
            for t in pending:
                ticket = ruleset.tickets[t]
                if connected(ruleset, owned, ticket.a, ticket.b):
                    points += 2 * ticket.points
                    done += 1
            if done > finished:
                points += self._globetrotter(view, ruleset, done) - globetrotter
            return points, -r

        route = max(claims, key=gain)
        return self._pay(view, ruleset, claims[route], routes, closed)

    def _point_targets(
        self,
        ruleset: Ruleset,
        mine: frozenset[int],
        closed: frozenset[int],
        spare: int,
        touched: frozenset[int],
    ) -> list[int]:
        """With no ticket to chase, the open routes that fit the trains left and score the
        most (route points and new attractions), touching the network first for the
        longest-path bonus."""
        all_routes = ruleset.game_map.routes
        cities = {c for r in mine for c in (all_routes[r].a, all_routes[r].b)}
        floor = self.spare_rates[2] * Rates.of(ruleset).best_rate
        value = {
            r.index: route_value(ruleset, r.index, touched)
            for r in all_routes
            if r.index not in closed and r.length <= spare
        }
        open_routes = [all_routes[r] for r, v in value.items() if v >= floor * all_routes[r].length]
        open_routes.sort(
            key=lambda r: (-value[r.index], not ({r.a, r.b} & cities), r.colour != GRAY, r.index)
        )
        targets: list[int] = []
        budget = spare
        for r in open_routes:
            if r.length <= budget and (r.sibling is None or r.sibling not in targets):
                targets.append(r.index)
                budget -= r.length
            if len(targets) >= 2:
                break
        return targets

    def _spare_claim(
        self,
        view: SeatView,
        ruleset: Ruleset,
        claims: dict[int, list[ClaimRoute]],
        targets: Sequence[int],
        routes: Sequence[int],
        closed: frozenset[int],
        spare: int,
        turns: float,
        touched: frozenset[int],
    ) -> Action | None:
        """Spend trains the plan does not need on a route that scores well per train, if
        paying for it does not take cards the plan needs; the shorter the game left, the
        less per train it asks."""
        all_routes = ruleset.game_map.routes
        planned, unplanned, late, last = self.spare_rates
        share = planned if routes else unplanned
        if turns < 6:
            share = late
        if turns < 3:
            share = last
        floor = share * Rates.of(ruleset).best_rate
        value = {r: route_value(ruleset, r, touched) for r in claims}
        candidates = [
            r
            for r in claims
            if all_routes[r].length <= spare and value[r] >= floor * all_routes[r].length
        ]
        if not candidates:
            return None
        hand = view.hand
        required = card_needs(ruleset, routes, hand, closed).required

        def harmless(a: ClaimRoute) -> bool:
            if not routes:
                return True
            coloured = all_routes[a.route].length - a.locomotives
            return not a.locomotives and hand[a.colour] - coloured >= required[a.colour]

        payable = {r: [a for a in claims[r] if harmless(a)] for r in candidates}
        payable = {r: options for r, options in payable.items() if options}
        if not payable:
            return None
        route = max(payable, key=lambda r: (value[r], r in targets, -r))
        return self._pay(view, ruleset, payable[route], routes, closed)

    def _draw(self, view: SeatView, legal: Sequence[Action], needs: Needs) -> Action:
        """A face-up card of a wanted colour; else a face-up Locomotive when cards are
        missing and no wanted colour shows; else the deck."""
        face_up = _face_up_draws(view, legal)
        colours = [(a, c) for a, c in face_up if c != LOCOMOTIVE]
        if colours:
            action, colour = max(colours, key=lambda ac: (needs.value[ac[1]], -ac[0].slot))
            if needs.value[colour] >= 2.0:
                return action
        locos = [a for a, c in face_up if c == LOCOMOTIVE]
        if locos and needs.missing >= 2:
            return locos[0]
        if colours:
            action, colour = max(colours, key=lambda ac: (needs.value[ac[1]], -ac[0].slot))
            if needs.value[colour] >= 1.0:
                return action
        if DrawBlind() in legal:
            return DrawBlind()
        if colours:
            return colours[0][0]
        return _fallback(legal)


# ---------------------------------------------------------------------------------------------
# playing a game in-process


def play_match(ruleset: Ruleset, strategies: Sequence[Strategy], seed: int) -> Outcome:
    """One game, seat ``i`` played by ``strategies[i]``, each seeing only its own view.

    Raises ``ValueError`` if a strategy answers with an action that is not legal, naming the
    seat, so a broken strategy fails loudly instead of being corrected silently.
    """
    for seat, strategy in enumerate(strategies):
        strategy.new_game(ruleset, seat, seed)
    policies = [partial(_choose, s, ruleset) for s in strategies]
    names = [s.name for s in strategies]
    return play(BOARD, ruleset, policies, seed, names=names).outcome


def _choose(
    strategy: Strategy, ruleset: Ruleset, view: SeatView, legal: Sequence[Action]
) -> Action:
    return strategy.choose(view, legal, ruleset)
