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
import random
from abc import ABC, abstractmethod
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from referee.rules import (
    Action,
    ClaimRoute,
    DrawBlind,
    DrawFaceUp,
    DrawTickets,
    KeepTickets,
    Outcome,
    Ruleset,
    SeatView,
    apply,
    legal_actions,
    new_game,
    outcome,
    view,
)
from referee.rules.cards import GRAY, LOCOMOTIVE, NUM_COLOURS
from referee.rules.memo import per_object

__all__ = [
    "Board",
    "GreedyStrategy",
    "Needs",
    "Plan",
    "PlannerStrategy",
    "RandomStrategy",
    "Strategy",
    "blocked_routes",
    "build_plan",
    "card_needs",
    "claimed_routes",
    "connected",
    "play_match",
    "shortest_path",
    "turns_left",
]


class Strategy(ABC):
    """What the referee (or the SDK's wire loop) needs from a bot's brain.

    ``choose`` gets only what a seat may know, so a strategy that works in-process works on
    the wire too. Randomness comes from the strategy's own ``random.Random`` seeded from its
    own seed and the game's, so a game replays exactly whatever else runs in the process.
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
) -> tuple[int, tuple[int, ...]] | None:
    """The fewest trains still to lay to join ``a`` and ``b``, and the routes to claim.

    Routes in ``free`` (owned, or already planned) cost nothing; other routes in ``closed``
    do not exist. Each route to claim also costs ``per_route`` trains' worth: fewer, longer routes
    mean fewer claiming turns, more points per train and fewer chances to be cut off. Ties
    go to fewer routes. ``None`` when no path is left.
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
                new = key + length + step
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
) -> Plan:
    """A cheap Steiner tree for ``tickets``: repeatedly join the ticket that is cheapest to
    finish given what is owned or planned, so tickets share track."""
    ruleset = board.ruleset
    free = set(mine)
    todo = list(tickets)
    routes: list[int] = []
    planned: list[int] = []
    steps: list[tuple[int, int]] = []
    dropped: list[int] = []
    cost = 0
    while todo:
        best: tuple[float, int, tuple[int, ...], int] | None = None
        for t in list(todo):
            ticket = ruleset.tickets[t]
            found = shortest_path(board, ticket.a, ticket.b, free, closed, per_route)
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
        trains_needed = sum(ruleset.game_map.routes[r].length for r in path)
        if cost + trains_needed > trains:
            dropped.append(t)
            continue
        cost += trains_needed
        routes.extend(path)
        free.update(path)
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


def turns_needed(routes: int, missing_cards: int) -> float:
    """Turns to collect the missing cards and then claim each route."""
    return routes + missing_cards / CARDS_PER_TURN


class PlannerStrategy(Strategy):
    """Tickets first: keep what it can finish, claim along shortest paths, then spend spare
    trains on the longest routes.

    Everything is recomputed from the view on every decision (the plan, the blocked routes,
    the card needs), so it carries no memory between calls and can take over any seat mid-game.
    """

    name = "planner"

    #: Draw new tickets only with at least this many trains and turns to spare.
    ticket_trains = 14
    ticket_turns = 9.0
    #: Spread (in turns) of the completion-probability ramp used to value tickets.
    slack_spread = 6.0
    #: Chance, per route still to claim, that an opponent cuts a ticket's path for good.
    hazard = 0.05
    #: Trains' worth each extra route costs in path searches (see ``shortest_path``).
    per_route = 1.0

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

    def _ticket_value(self, points: int, slack: float, routes: int) -> float:
        p = min(0.98, max(0.02, 0.5 + slack / (2 * self.slack_spread)))
        p *= (1.0 - self.hazard) ** routes
        return (2 * p - 1) * points

    # -- keeping tickets ---------------------------------------------------------------------

    def _keep(self, view: SeatView, legal: Sequence[Action], ruleset: Ruleset) -> Action:
        board = Board.of(ruleset)
        mine, closed = self._situation(view, ruleset)
        pending = self._pending(view, ruleset, mine)
        trains = view.players[view.seat].trains
        turns = turns_left(view, ruleset)
        best: tuple[float, int, KeepTickets] | None = None
        for action in legal:
            if not isinstance(action, KeepTickets):
                continue
            tickets = [*pending, *action.tickets]
            plan = build_plan(board, tickets, mine, closed, trains, self.per_route)
            value = 0.0
            for t, slack, routes in self._finishable(view, ruleset, plan, closed, turns):
                value += self._ticket_value(ruleset.tickets[t].points, slack, routes)
            for t in plan.dropped:
                value -= ruleset.tickets[t].points
            # on equal value keep fewer: an unplayed ticket can only cost points
            if best is None or (value, -len(action.tickets)) > best[:2]:
                best = (value, -len(action.tickets), action)
        if best is None:
            return _fallback(legal)
        return best[2]

    # -- a turn ------------------------------------------------------------------------------

    def _play(self, view: SeatView, legal: Sequence[Action], ruleset: Ruleset) -> Action:
        board = Board.of(ruleset)
        mine, closed = self._situation(view, ruleset)
        trains = view.players[view.seat].trains
        pending = self._pending(view, ruleset, mine)
        turns = turns_left(view, ruleset)
        plan = build_plan(board, pending, mine, closed, trains, self.per_route)
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
                    view, ruleset, claims, mine, pending, routes, closed
                )
            wanted = self._plan_claim(
                view, ruleset, claims, plan.tickets[:keep_n], routes, mine, closed, cost
            )
            if wanted is not None:
                return wanted

        if (
            not pending
            and DrawTickets() in legal
            and trains >= self.ticket_trains
            and turns >= self.ticket_turns
        ):
            return DrawTickets()

        spare = trains - cost
        targets = list(routes)
        if not routes:
            targets = self._point_targets(ruleset, mine, closed, spare)
        if claims and spare > 0:
            extra = self._spare_claim(view, ruleset, claims, targets, routes, closed, spare, turns)
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
            without = build_plan(board, tickets, mine, closed | {r}, trains, self.per_route)
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
    ) -> Action:
        """Last turns: whatever scores most now, a ticket it finishes counted twice (the
        points it adds and the penalty it avoids)."""
        all_routes = ruleset.game_map.routes

        def gain(r: int) -> tuple[int, int]:
            points = ruleset.route_points[all_routes[r].length]
            owned = [*mine, r]
            for t in pending:
                ticket = ruleset.tickets[t]
                if connected(ruleset, owned, ticket.a, ticket.b):
                    points += 2 * ticket.points
            return points, -r

        route = max(claims, key=gain)
        return self._pay(view, ruleset, claims[route], routes, closed)

    def _point_targets(
        self, ruleset: Ruleset, mine: frozenset[int], closed: frozenset[int], spare: int
    ) -> list[int]:
        """With no ticket to chase, the longest open routes that fit the trains left (the
        best points per train), touching the network first for the longest-path bonus."""
        all_routes = ruleset.game_map.routes
        cities = {c for r in mine for c in (all_routes[r].a, all_routes[r].b)}
        open_routes = [
            r for r in all_routes if r.index not in closed and r.length <= spare and r.length >= 3
        ]
        open_routes.sort(
            key=lambda r: (-r.length, not ({r.a, r.b} & cities), r.colour != GRAY, r.index)
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
    ) -> Action | None:
        """Spend trains the plan does not need on a long route, if paying for it does not
        take cards the plan needs; the shorter the game left, the shorter the route taken."""
        all_routes = ruleset.game_map.routes
        min_length = 5 if routes else 4
        if turns < 6:
            min_length = 3
        if turns < 3:
            min_length = 1
        candidates = [r for r in claims if min_length <= all_routes[r].length <= spare]
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
        route = max(payable, key=lambda r: (all_routes[r].length, r in targets, -r))
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
    state = new_game(ruleset, len(strategies), seed)
    for seat, strategy in enumerate(strategies):
        strategy.new_game(ruleset, seat, seed)
    while not state.is_over:
        seat = state.seat
        legal = legal_actions(state)
        action = strategies[seat].choose(view(state, seat), legal, ruleset)
        if action not in legal:
            raise ValueError(f"seat {seat} ({strategies[seat].name}) chose illegal {action!r}")
        state = apply(state, action)
    return outcome(state)
