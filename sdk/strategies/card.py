"""Sample strategies for Ticket to Ride: The Card Game, deciding from what one seat may know.

The card game's counterpart of :mod:`sdk.strategies`: a strategy sees exactly what a bot on the
wire sees, its seat's :class:`CardSeatView`, the legal actions and the static
:class:`CardRuleset`, and never the ``CardGameState``. Three strengths:

* :class:`CardRandomStrategy`, the floor: uniform over the legal actions;
* :class:`CardGreedyStrategy`, a few sensible rules: cheap tickets, suits of the colours its
  tickets need, rows big enough not to be robbed cheaply;
* :class:`CardPlannerStrategy`, which aims its Railyard at its tickets: it keeps a running
  account of its own (hidden) On-the-Track stack, projects what its Railyard and hand can
  still push onto it before the deck runs out, weighs robbing both ways, and draws tickets to
  use what its stack will hold beyond its tickets' needs.

What the game rewards (measured with the engine, see tests/sdk/test_card_strategies.py): every
turn, Step 1 moves one card from *each* Railyard row onto the stack, so the stack grows by the
number of rows; cards still in the Railyard or the hand when the deck runs out score nothing
(in a four-player game the hand is kept for the second deck); a ticket needs 1 to 5 cards and
is worth 3 to 5 points a card, and one not completed costs its points.
"""

from __future__ import annotations

import math
import random
from abc import ABC, abstractmethod
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from functools import lru_cache, partial

from referee.games.card import (
    CardAction,
    CardOutcome,
    CardRuleset,
    CardSeatView,
    DrawBlind,
    DrawFaceUp,
    DrawTickets,
    KeepTickets,
    Pass,
    PlaceMix,
    PlaceSuit,
    best_completion,
)
from referee.games.common.cards import LOCOMOTIVE, NUM_CARD_KINDS, NUM_COLOURS
from referee.games.play import play
from referee.games.registry import CARD

__all__ = [
    "CardGreedyStrategy",
    "CardPlannerStrategy",
    "CardRandomStrategy",
    "CardStrategy",
    "StackTracker",
    "play_card_match",
    "rob_chance",
    "row_moves",
    "shortfall",
    "ticket_needs",
    "ticket_score",
    "unseen_cards",
    "worth",
]

#: ``CardSeatView.phase`` values (``Phase`` names, lower case).
SETUP = "setup_tickets"
TURN = "turn"
SECOND_CARD = "second_card"
KEEP = "keep_tickets"


class CardStrategy(ABC):
    """What the referee (or a bot's wire loop) needs from a card-game bot's brain; the
    interface of :class:`sdk.strategies.Strategy` with the card game's types.

    Randomness comes from the strategy's own ``random.Random`` seeded from its seed, the one
    ``new_game`` gets (in-process the game seed; behind the SDK's
    :class:`~sdk.bot.StrategyBot`, the seat's ``Game.bot_seed``) and its seat, so a game
    replays exactly whatever else runs in the process.
    """

    name = "card-strategy"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.rng = random.Random(f"{self.name}/{seed}")

    def new_game(self, ruleset: CardRuleset, seat: int, seed: int) -> None:
        """Reset per-game memory; reseeding here makes each game replayable on its own."""
        self.rng = random.Random(f"{self.name}/{self.seed}/{seed}/{seat}")

    @abstractmethod
    def choose(
        self, view: CardSeatView, legal: Sequence[CardAction], ruleset: CardRuleset
    ) -> CardAction:
        """One element of ``legal``."""


# ---------------------------------------------------------------------------------------------
# the random floor


class CardRandomStrategy(CardStrategy):
    """Uniform over the legal actions, the floor every other bot must clear (the player of
    ``referee.games.card.selfplay``).

    Not weighted: at a ticket choice every legal subset is equally likely, which is the same
    as keeping each offered ticket with probability 1/2 (at least one at setup), so it keeps
    about half of what it is dealt or draws; on a turn placements outnumber the other actions,
    so it places more often than it draws, and it draws tickets seldom (one legal action of
    dozens). Its scores are positive on average, which makes it a fair floor.
    """

    name = "card-random"

    def choose(
        self, view: CardSeatView, legal: Sequence[CardAction], ruleset: CardRuleset
    ) -> CardAction:
        return legal[self.rng.randrange(len(legal))]


# ---------------------------------------------------------------------------------------------
# facts derived from the view (shared by the greedy and the planner)


def ticket_needs(ruleset: CardRuleset, tickets: Iterable[int]) -> tuple[int, ...]:
    """Per colour, the cards ``tickets`` need together (000:202)."""
    out = [0] * NUM_COLOURS
    for t in tickets:
        for c, n in enumerate(ruleset.tickets[t].requires):
            out[c] += n
    return tuple(out)


def ticket_score(ruleset: CardRuleset, stack: Sequence[int], tickets: Sequence[int]) -> int:
    """What ``tickets`` score against ``stack`` at a final scoring: the points of the ones it
    completes (the engine's own choice, ``best_completion``) less the points of the others
    (000:243-245). Big Cities bonuses are left out."""
    done = set(best_completion(ruleset, tuple(stack), tuple(tickets)))
    return sum(
        ruleset.tickets[t].points if t in done else -ruleset.tickets[t].points for t in tickets
    )


def shortfall(stack: Sequence[float], needs: Sequence[float]) -> float:
    """Cards missing from ``stack`` (per card kind, Locomotives last; fractions allowed) to
    complete everything ``needs`` (per colour), Locomotives standing in for any colour."""
    short = 0.0
    for c in range(NUM_COLOURS):
        gap = needs[c] - stack[c]
        if gap > 0:
            short += gap
    return max(0.0, short - stack[LOCOMOTIVE])


def worth(
    stack: Sequence[float], needs: Sequence[float], per_needed: float, per_spare: float
) -> float:
    """A projected stack's value for tickets needing ``needs``: ``per_needed`` points lost for
    each card still missing, ``per_spare`` points for each card the tickets do not use (a
    ticket drawn later may use it)."""
    short = 0.0
    used = 0.0
    for c in range(NUM_COLOURS):
        have = stack[c]
        need = needs[c]
        if have < need:
            short += need - have
            used += have
        else:
            used += need
    cover = min(stack[LOCOMOTIVE], short)
    short -= cover
    used += cover
    spare = sum(stack) - used
    return per_spare * spare - per_needed * short


def unseen_cards(view: CardSeatView, ruleset: CardRuleset, stack: Sequence[int]) -> list[int]:
    """Per card kind, the cards this seat cannot see: the deck, the other hands and the other
    stacks (everything else is public, or its own: hand, ``stack`` as it tracks it)."""
    out = list(ruleset.deck)
    for kind in range(NUM_CARD_KINDS):
        out[kind] -= view.hand[kind] + stack[kind] + view.discards[kind]
    for card in view.face_up:
        if card >= 0:
            out[card] -= 1
    for p in view.players:
        for c in range(NUM_COLOURS):
            out[c] -= p.railyard[c]
            out[LOCOMOTIVE] -= p.railyard_locomotives[c]
    return [max(0, n) for n in out]


@lru_cache(maxsize=1 << 14)
def _tail(n: int, k: int, p_percent: int) -> float:
    """P(Binomial(n, p) >= k), p in whole percent (cached: few distinct arguments)."""
    if k <= 0:
        return 1.0
    if k > n or p_percent <= 0:
        return 0.0
    p = p_percent / 100.0
    below = sum(math.comb(n, i) * p**i * (1.0 - p) ** (n - i) for i in range(k))
    return max(0.0, 1.0 - below)


def rob_chance(
    size: int, colour: int, view: CardSeatView, unseen: Sequence[int], propensity: float
) -> float:
    """The chance that a row of ``size`` cards of ``colour`` in this seat's Railyard is robbed
    during one round (000:163-169): some opponent plays more than ``size`` cards of the colour,
    Locomotives included, from a hand drawn from what this seat cannot see, and chooses to
    (``propensity``)."""
    pool = sum(unseen)
    if pool <= 0:
        return 0.0
    p_percent = round(100.0 * (unseen[colour] + unseen[LOCOMOTIVE]) / pool)
    keep = 1.0
    for p in view.players:
        if p.seat != view.seat and p.railyard[colour] == 0:
            keep *= 1.0 - propensity * _tail(p.hand_size, size + 1, p_percent)
    return 1.0 - keep


def row_moves(
    colour: int, cards: int, locos: int, turns: int, risk: Sequence[float]
) -> list[tuple[int, float]]:
    """The cards a Railyard row will move onto the stack in the next ``turns`` Step 1s
    (000:111-117; Locomotives on top move first, 000:133-135), each with the chance that the
    row is still there: ``risk[m]`` is the chance a row of ``m`` cards is robbed in a round."""
    out: list[tuple[int, float]] = []
    alive = 1.0
    size = cards + locos
    for j in range(min(size, turns)):
        m = size - j
        alive *= 1.0 - (risk[m] if m < len(risk) else 0.0)
        out.append((LOCOMOTIVE if j < locos else colour, alive))
    return out


def flush_moves(
    hand: Sequence[int],
    turns: int,
    start: int,
    busy: Sequence[int],
    risks: Sequence[Sequence[float]] | None = None,
) -> list[float]:
    """Per card kind, the cards ``hand`` would move onto the stack this deck if it were all
    placed from turn ``start`` on (0 = this turn), one placement a turn: the biggest suit that
    may be placed then (Locomotives ride on the first), then three-colour mixes of the single
    cards. A row placed at turn ``j`` moves ``min(size, turns - j)`` cards (the Step 1s of turns
    ``j + 1 .. turns``, 000:111-117), each with the chance the row is not robbed first
    (``risks[colour][size]``, see :func:`row_moves`). ``busy[c]``: the first turn colour ``c``
    may be placed (a row of it is in a Railyard until then, 000:160-165)."""
    out = [0.0] * NUM_CARD_KINDS
    suits = {c: hand[c] for c in range(NUM_COLOURS) if hand[c] >= 2}
    singles = [c for c in range(NUM_COLOURS) if hand[c] == 1]
    locos = hand[LOCOMOTIVE]
    no_risk: tuple[float, ...] = ()
    j = start
    while j < turns and (suits or len(singles) >= 3):
        free = [c for c in suits if busy[c] <= j]
        if free:
            c = max(free, key=lambda c: (suits[c], -c))
            cards = suits.pop(c)
            for kind, p in row_moves(
                c, cards, locos, turns - j, risks[c] if risks is not None else no_risk
            ):
                out[kind] += p
            locos = 0
        else:
            mix = [c for c in singles if busy[c] <= j][:3]
            if len(mix) == 3:
                for c in mix:
                    singles.remove(c)
                    for kind, p in row_moves(
                        c, 1, 0, turns - j, risks[c] if risks is not None else no_risk
                    ):
                        out[kind] += p
            elif not suits and all(busy[c] <= j for c in singles):
                break
        j += 1
    return out


def _needed_colours(ruleset: CardRuleset, tickets: Iterable[int]) -> set[int]:
    return {c for c, n in enumerate(ticket_needs(ruleset, tickets)) if n}


def _face_up_draws(view: CardSeatView, legal: Sequence[CardAction]) -> list[tuple[DrawFaceUp, int]]:
    """Legal face-up draws with the card each one takes."""
    return [(a, view.face_up[a.slot]) for a in legal if isinstance(a, DrawFaceUp)]


# ---------------------------------------------------------------------------------------------
# the greedy baseline


class CardGreedyStrategy(CardStrategy):
    """A handful of rules, no look-ahead and no memory:

    * tickets: at setup keep the cheap ones (at most ``cheap`` cards each, ``budget`` cards in
      all, at least the cheapest one); draw more when its stack and Railyard (public counts)
      hold ``room`` cards more than its tickets need, and keep the cheap ones that fit;
    * place the biggest suit of a colour its tickets need, or any suit of ``safe`` cards or
      more (a row that big is not robbed cheaply), adding Locomotives only where the
      placement needs them to rob; a mix when one of its colours is needed;
    * otherwise draw: a face-up card of a needed colour, else of a colour it holds two of,
      else blind; never a face-up Locomotive.
    """

    name = "card-greedy"
    cheap = 3
    budget = 12
    room = 8
    safe = 4

    def choose(
        self, view: CardSeatView, legal: Sequence[CardAction], ruleset: CardRuleset
    ) -> CardAction:
        if len(legal) == 1:
            return legal[0]
        if isinstance(legal[0], KeepTickets):
            return self._keep(view, legal, ruleset)
        needed = _needed_colours(ruleset, view.tickets)
        if view.phase == TURN:
            if DrawTickets() in legal and self._room(view, ruleset) >= self.room:
                return DrawTickets()
            placement = self._placement(view, legal, needed)
            if placement is not None:
                return placement
        draw = self._draw(view, legal, needed)
        if draw is not None:
            return draw
        placements = [a for a in legal if isinstance(a, PlaceSuit | PlaceMix)]
        if placements:
            return max(placements, key=_placement_size)
        return _fallback(legal)

    @staticmethod
    def _room(view: CardSeatView, ruleset: CardRuleset) -> int:
        """Cards its stack and Railyard hold beyond what its tickets need."""
        me = view.players[view.seat]
        placed = me.stack_size + sum(me.railyard) + sum(me.railyard_locomotives)
        return placed - sum(ticket_needs(ruleset, view.tickets))

    def _keep(
        self, view: CardSeatView, legal: Sequence[CardAction], ruleset: CardRuleset
    ) -> CardAction:
        offered = sorted(view.offered, key=lambda t: (ruleset.tickets[t].size, t))
        budget = self.budget if view.phase == SETUP else self._room(view, ruleset)
        keep: list[int] = []
        for t in offered:
            size = ruleset.tickets[t].size
            if size <= self.cheap and size <= budget:
                keep.append(t)
                budget -= size
        if view.phase == SETUP and not keep:
            keep = offered[:1]
        wanted = KeepTickets(tuple(sorted(keep)))
        return wanted if wanted in legal else legal[0]

    def _placement(
        self, view: CardSeatView, legal: Sequence[CardAction], needed: set[int]
    ) -> CardAction | None:
        best: tuple[tuple[int, int, int], CardAction] | None = None
        for a in legal:
            if isinstance(a, PlaceSuit):
                size = a.cards + a.locomotives
                if a.colour not in needed and size < self.safe:
                    continue
                # the fewest Locomotives for a given suit (the legal list has every count)
                key = (1 if a.colour in needed else 0, a.cards, -a.locomotives)
            elif isinstance(a, PlaceMix):
                hits = sum(1 for c in a.colours if c in needed)
                if hits < 1:
                    continue
                key = (1, hits, -1)
            else:
                continue
            if best is None or key > best[0]:
                best = (key, a)
        return None if best is None else best[1]

    def _draw(
        self, view: CardSeatView, legal: Sequence[CardAction], needed: set[int]
    ) -> CardAction | None:
        face_up = [(a, c) for a, c in _face_up_draws(view, legal) if c != LOCOMOTIVE]
        for a, c in face_up:
            if c in needed:
                return a
        if face_up:
            a, c = max(face_up, key=lambda ac: (view.hand[ac[1]], -ac[0].slot))
            if view.hand[c] >= 2:
                return a
        if DrawBlind() in legal:
            return DrawBlind()
        return None


def _placement_size(a: CardAction) -> int:
    if isinstance(a, PlaceSuit):
        return a.cards + a.locomotives
    return 3


# ---------------------------------------------------------------------------------------------
# the planner: its own stack, tracked


class StackTracker:
    """This seat's On-the-Track stack, rebuilt from its Railyard.

    The stack is hidden from its owner too (000:119-122), but the owner knows every card it
    moved there: Step 1 takes the top card of each row (Locomotives first), and the view shows
    the Railyard and the stack's size before and after. A row that vanished between two turns
    was either moved (a row of one) or robbed: robbed exactly when an opponent now holds the
    colour, as two Railyards never hold one colour at once (a colour enters a Railyard only by
    out-numbering every row of it, which robs them). Where the ruleset shows the stack
    (``owners_see_stack``), the view's stack is used instead.
    """

    __slots__ = ("deck_number", "stack", "stack_size", "yard")

    def __init__(self) -> None:
        self.stack = [0] * NUM_CARD_KINDS
        self.deck_number = 1
        self.stack_size = 0
        #: the Railyard as it was when this seat's last decision ended: (cards, locomotives)
        self.yard: tuple[list[int], list[int]] | None = None

    def observe(self, view: CardSeatView) -> None:
        """Account for what moved since this seat's last decision."""
        me = view.players[view.seat]
        if view.deck_number != self.deck_number:
            # 000:199-214 a four-player game's second deck: stacks and Railyards start empty
            self.stack = [0] * NUM_CARD_KINDS
            self.deck_number = view.deck_number
            self.stack_size = 0
            self.yard = None
        if view.stack is not None:
            self.stack = list(view.stack)
        elif self.yard is not None and me.stack_size > self.stack_size:
            self._infer(view)
        self.stack_size = me.stack_size
        self.yard = (list(me.railyard), list(me.railyard_locomotives))

    def _infer(self, view: CardSeatView) -> None:
        assert self.yard is not None
        before_cards, before_locos = self.yard
        me = view.players[view.seat]
        held = {
            c
            for p in view.players
            if p.seat != view.seat
            for c in range(NUM_COLOURS)
            if p.railyard[c]
        }
        moved: list[int] = []
        for c in range(NUM_COLOURS):
            if not before_cards[c]:
                continue
            before = before_cards[c] + before_locos[c]
            now = me.railyard[c] + me.railyard_locomotives[c]
            if now == before - 1 and (now > 0 or c not in held):
                moved.append(LOCOMOTIVE if before_locos[c] else c)
        for kind in moved[: me.stack_size - self.stack_size]:
            self.stack[kind] += 1

    def placed(self, action: CardAction) -> None:
        """Record this seat's own placement (it lands after the Railyard was observed)."""
        if self.yard is None:
            return
        cards, locos = self.yard
        if isinstance(action, PlaceSuit):
            cards[action.colour] = action.cards
            locos[action.colour] = action.locomotives
        elif isinstance(action, PlaceMix):
            for c in action.colours:
                cards[c] = 1


# ---------------------------------------------------------------------------------------------
# the planner


class CardPlannerStrategy(CardStrategy):
    """Aims its Railyard at its tickets, drawing while its hand can still reach the stack.

    The stack grows by one card per Railyard row per turn, whatever the rows hold, so what
    limits it is the cards a seat gets and the turns it spends placing them; a card still in
    hand or Railyard when the deck runs out scores nothing (000:191-193). So the planner draws
    *just in time*: on each turn it projects the stack it will have at the deck's end if it
    placed its whole hand from now on, one placement a turn, the biggest suits first
    (:func:`flush_moves`), on top of the stack it knows (:class:`StackTracker`) and what its
    Railyard rows will still move, every row discounted by the chance it is robbed first
    (:func:`rob_chance`). It scores such projections with :func:`worth` (a card its tickets
    still miss costs ``per_needed``, a card beyond their needs is worth ``per_spare``, since
    a ticket drawn later may use it) and takes the best of:

    * drawing: placing from the next turn on, with two more cards (each card valued by what
      it adds, face up or the unseen mix blind) -- worth it while the delay strands nothing;
    * each placement now (plus ``rob_weight`` a card for the cards robbing an opponent's row
      takes from them), then the rest from the next turn on;
    * drawing tickets: the tickets it cannot see are equally likely, and each adds what
      :meth:`tickets_value` gains by keeping it.

    The deck's end is timed from its size and the cards drawn per round, observed between its
    own turns (:meth:`future_turns`); the flush keeps ``safety`` turns of margin. On its last
    turn of a deck its stack is exactly known: it draws tickets and keeps those the stack
    completes besides its own. Tickets are weighed by :meth:`tickets_value` (points and a share
    of the Big Cities bonuses they name; each completed, best paying first, with the chance
    that the cards still to come cover what it lacks).
    """

    name = "card-planner"

    #: points a ticket card still missing costs; points a spare card is worth
    per_needed = 8.0
    per_spare = 1.2
    #: turns of margin the flush keeps before the estimated end of the deck
    safety = 2
    #: chance an opponent who can rob a row does so in a round
    rob_propensity = 0.35
    #: points per card taken from an opponent's row by robbing it, over the opponents
    rob_weight = 3.0
    #: deck cards each seat draws per round before anything is seen, and its weight in rounds
    prior_rate = 1.3
    prior_rounds = 2.0
    #: for sizing tickets: share of future turns spent drawing (2 cards each), turns at the end
    #: spent placing instead, share of the drawn cards that reach the stack, and share of them
    #: that can be steered to the colours the tickets need
    draw_share = 0.55
    flush_turns = 3
    reach_share = 0.6
    steer = 0.7
    #: a ticket draw is worth this share of the summed gains of the tickets it may bring,
    #: less this cost (the turn it takes)
    ticket_draw_share = 0.7
    ticket_draw_cost = 1.0
    #: completion-probability spread (cards) when weighing tickets, plus this per turn left;
    #: cards of headroom a ticket with nothing missing is taken to have
    keep_spread = 1.0
    keep_spread_per_turn = 0.25
    headroom = 1.5
    #: cards of one colour beyond this count as missing (10 of each exist, 000:8-10)
    colour_cap = 7
    #: share of a deck's future cards a four-player game's second deck is counted for
    second_deck_share = 0.5
    #: share of a Big City's bonus a ticket naming it is counted for (000:246-249: the bonus
    #: goes to the most completed tickets naming the city)
    city_share = 0.3
    #: in a four-player game's first deck, the value of a hand card carried to the second deck
    carry_value = 0.5

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self.tracker = StackTracker()
        self._rounds: list[int] = []  # deck cards drawn per round, as observed
        self._last_deck: tuple[int, int, int] | None = None  # (deck number, size, turn)
        self._ticket_table: _TicketTable | None = None

    def new_game(self, ruleset: CardRuleset, seat: int, seed: int) -> None:
        super().new_game(ruleset, seat, seed)
        self.tracker = StackTracker()
        self._rounds = []
        self._last_deck = None

    def choose(
        self, view: CardSeatView, legal: Sequence[CardAction], ruleset: CardRuleset
    ) -> CardAction:
        self.tracker.observe(view)
        if view.phase == TURN:
            self._observe_deck(view)
        action = legal[0] if len(legal) == 1 else self._decide(view, legal, ruleset)
        self.tracker.placed(action)
        return action

    # -- timing ------------------------------------------------------------------------------

    def _observe_deck(self, view: CardSeatView) -> None:
        last = self._last_deck
        now = (view.deck_number, view.deck_size, view.turn)
        if (
            last is not None
            and last[0] == now[0]
            and now[2] - last[2] == view.num_seats
            and last[1] >= now[1]
        ):
            self._rounds.append(last[1] - now[1])
        self._last_deck = now

    def rate(self, view: CardSeatView) -> float:
        """Deck cards drawn per round (every seat's turn), observed and prior blended."""
        prior = self.prior_rate * view.num_seats
        seen = self._rounds[-8:]
        return max(1.0, (sum(seen) + prior * self.prior_rounds) / (len(seen) + self.prior_rounds))

    def future_turns(self, view: CardSeatView) -> int:
        """Step 1s this seat still gets in the current deck after the present turn: 0 in the
        final round (000:191-193), else about the rounds the deck lasts (the round it runs out
        in is followed by one more turn each)."""
        if view.last_round > 0 or view.deck_size == 0:
            return 0
        return max(1, math.ceil(view.deck_size / self.rate(view)))

    # -- the projection ------------------------------------------------------------------------

    def _risks(self, view: CardSeatView, unseen: Sequence[int]) -> list[list[float]]:
        """Per colour, per row size (0-10), the chance such a row of this seat is robbed in a
        round."""
        return [
            [0.0] + [rob_chance(m, c, view, unseen, self.rob_propensity) for m in range(1, 11)]
            for c in range(NUM_COLOURS)
        ]

    def _projection(
        self, view: CardSeatView, turns: int, risks: Sequence[Sequence[float]]
    ) -> list[float]:
        """The stack so far plus what the Railyard rows will still move this deck."""
        proj = [float(n) for n in self.tracker.stack]
        me = view.players[view.seat]
        for c in range(NUM_COLOURS):
            if me.railyard[c]:
                for kind, p in row_moves(
                    c, me.railyard[c], me.railyard_locomotives[c], turns, risks[c]
                ):
                    proj[kind] += p
        return proj

    @staticmethod
    def _busy(view: CardSeatView) -> list[int]:
        """Per colour, the first turn (0 = now) this seat may place it: once its own row of
        it has moved (one card a turn), or an opponent's row of it that its hand cannot
        out-number has (a rough bound)."""
        out = [0] * NUM_COLOURS
        hand = view.hand
        for p in view.players:
            for c in range(NUM_COLOURS):
                size = p.railyard[c] + p.railyard_locomotives[c]
                if size and (p.seat == view.seat or hand[c] + hand[LOCOMOTIVE] <= size):
                    out[c] = size
        return out

    def _future_cards(self, turns: int) -> float:
        """Cards still to be drawn and pushed onto the stack this deck, beyond the hand."""
        drawing = max(0, turns - self.flush_turns)
        return 2.0 * self.draw_share * drawing * self.reach_share

    # -- decisions ---------------------------------------------------------------------------

    def _decide(
        self, view: CardSeatView, legal: Sequence[CardAction], ruleset: CardRuleset
    ) -> CardAction:
        if view.phase in (SETUP, KEEP):
            return self._keep(view, legal, ruleset)
        turns = self.future_turns(view)
        if view.phase == TURN and turns == 0:
            return self._last_turn(view, legal, ruleset)
        plan = _Plan(self, view, ruleset, turns)
        if view.phase == SECOND_CARD:
            return plan.second_card(legal)
        return plan.turn(legal)

    def _last_turn(
        self, view: CardSeatView, legal: Sequence[CardAction], ruleset: CardRuleset
    ) -> CardAction:
        """The final turn of a deck: placing moves nothing any more (000:191-193), so draw
        tickets to keep what the now-known stack completes; else rob a row an opponent would
        still move; else do the least harm (in a four-player game's first deck the hand is
        kept for the second, 000:203-205)."""
        if DrawTickets() in legal:
            return DrawTickets()
        carry = view.num_seats >= ruleset.second_deck_min_players and view.deck_number == 1
        robs = [(_robbed(view, a, 0), a) for a in legal if isinstance(a, PlaceSuit)]
        robs = [r for r in robs if r[0] > 0]
        if robs and not carry:
            return max(robs, key=lambda r: (r[0], -_placement_size(r[1])))[1]
        placements = [a for a in legal if isinstance(a, PlaceSuit | PlaceMix)]
        if placements:
            return min(placements, key=_placement_size)
        return _fallback(legal)

    # -- tickets -----------------------------------------------------------------------------

    def _table(self, ruleset: CardRuleset) -> _TicketTable:
        """Per ticket: its weight and priority, built once per ruleset."""
        table = self._ticket_table
        if table is None or table.ruleset is not ruleset:
            table = _TicketTable(ruleset, self.city_share)
            self._ticket_table = table
        return table

    def _outlook(
        self, view: CardSeatView, ruleset: CardRuleset, turns: int, proj: Sequence[float]
    ) -> tuple[list[float], float, float]:
        """What tickets can count on: the projected stack with what the hand can still add,
        the cards still to come this deck (and, in a four-player game's first deck, some of
        the second's: uncompleted tickets wait for it, 000:199-214), and how uncertain that
        is (in cards)."""
        moved = flush_moves(view.hand, max(0, turns - self.safety), 0, self._busy(view))
        have = [proj[k] + moved[k] for k in range(NUM_CARD_KINDS)]
        future = self.steer * self._future_cards(turns)
        if view.num_seats >= ruleset.second_deck_min_players and view.deck_number == 1:
            future += self.steer * self._second_deck_cards(view, ruleset)
        spread = self.keep_spread + self.keep_spread_per_turn * turns
        return have, future, spread

    def tickets_value(
        self,
        ruleset: CardRuleset,
        tickets: Sequence[int],
        have: Sequence[float],
        future: float,
        spread: float,
    ) -> float:
        """Expected points of ``tickets``, Big Cities weighed in: a scoring completes the
        best-paying tickets first (``best_completion``), so they are taken in order of weight
        per card, each completed with the chance that the cards still to come (``future``,
        give or take ``spread``) cover what it and the ones before it lack beyond ``have``;
        one not completed costs its points (000:243-245)."""
        table = self._table(ruleset)
        order = sorted(tickets, key=table.key.__getitem__)
        return self._run(table, order, [0] * NUM_COLOURS, have, future, spread)

    def _run(
        self,
        table: _TicketTable,
        order: Sequence[int],
        needs: list[int],
        have: Sequence[float],
        future: float,
        spread: float,
    ) -> float:
        """``tickets_value`` of ``order`` (sorted) on top of ``needs`` (updated in place)."""
        total = 0.0
        cap = self.colour_cap
        for t in order:
            for c, n in enumerate(table.requires[t]):
                needs[c] += n
            short = shortfall(have, needs)
            short += sum(n - cap for n in needs if n > cap)
            p = _logistic((future + self.headroom - short) / spread)
            total += table.weight[t] * (2.0 * p - 1.0)
        return total

    def ticket_draw_value(
        self, view: CardSeatView, ruleset: CardRuleset, turns: int, proj: Sequence[float]
    ) -> float:
        """What drawing tickets is expected to add: the tickets this seat cannot see are
        equally likely to come, and each adds what :meth:`tickets_value` gains by keeping it
        (or nothing, as it would be returned)."""
        have, future, spread = self._outlook(view, ruleset, turns, proj)
        table = self._table(ruleset)
        seen = set(view.tickets)
        for p in view.players:
            seen.update(p.completed)
        pool = [t for t in range(len(ruleset.tickets)) if t not in seen]
        if not pool:
            return -math.inf
        order = sorted(view.tickets, key=table.key.__getitem__)
        keys = [table.key[t] for t in order]
        # a ticket changes nothing before its place in the order: keep the needs of each
        # prefix, and what each suffix is worth on top of it
        prefix = [[0] * NUM_COLOURS]
        for t in order:
            prefix.append([n + m for n, m in zip(prefix[-1], table.requires[t], strict=True)])
        suffix = [
            self._run(table, order[i:], list(prefix[i]), have, future, spread)
            for i in range(len(order) + 1)
        ]
        gains = 0.0
        for t in pool:
            i = bisect_left(keys, table.key[t])
            gain = (
                self._run(table, (t, *order[i:]), list(prefix[i]), have, future, spread) - suffix[i]
            )
            if gain > 0:
                gains += gain
        drawn = min(ruleset.tickets_drawn, view.ticket_deck_size)
        return self.ticket_draw_share * drawn * gains / len(pool) - self.ticket_draw_cost

    def _keep(
        self, view: CardSeatView, legal: Sequence[CardAction], ruleset: CardRuleset
    ) -> CardAction:
        choices = [a for a in legal if isinstance(a, KeepTickets)]
        if not choices:
            return _fallback(legal)
        turns = self.future_turns(view) if view.phase == KEEP else self._setup_turns(view)
        if view.phase == KEEP and turns == 0:
            return self._keep_exact(view, choices, ruleset)
        unseen = unseen_cards(view, ruleset, self.tracker.stack)
        proj = self._projection(view, turns, self._risks(view, unseen))
        have, future, spread = self._outlook(view, ruleset, turns, proj)
        held = view.tickets

        def value(choice: KeepTickets) -> tuple[float, int]:
            kept = self.tickets_value(ruleset, held + choice.tickets, have, future, spread)
            return (kept, -len(choice.tickets))

        return max(choices, key=value)

    def _keep_exact(
        self, view: CardSeatView, choices: Sequence[KeepTickets], ruleset: CardRuleset
    ) -> CardAction:
        """Nothing more reaches the stack this deck: keep the tickets the known stack completes
        besides the ones it completes already (a set of tickets fits a stack exactly when its
        shortfall is nil), the most weight first."""
        stack = self.tracker.stack
        table = self._table(ruleset)
        done = ticket_needs(ruleset, best_completion(ruleset, tuple(stack), view.tickets))

        def value(choice: KeepTickets) -> tuple[float, int]:
            needs = list(done)
            for t in choice.tickets:
                for c, n in enumerate(table.requires[t]):
                    needs[c] += n
            if shortfall(stack, needs) > 0:
                return (-math.inf, 0)
            return (sum(table.weight[t] for t in choice.tickets), -len(choice.tickets))

        return max(choices, key=value)

    def _setup_turns(self, view: CardSeatView) -> int:
        return max(1, math.ceil(view.deck_size / (self.prior_rate * view.num_seats)))

    def _second_deck_cards(self, view: CardSeatView, ruleset: CardRuleset) -> float:
        """Stack cards a four-player game's second deck may add (a share of a deck's worth)."""
        deck = sum(ruleset.deck) - ruleset.face_up
        turns = math.ceil(deck / (self.prior_rate * view.num_seats))
        return self.second_deck_share * self._future_cards(turns)


class _Plan:
    """One decision's projection (see :class:`CardPlannerStrategy`)."""

    __slots__ = (
        "busy",
        "carry",
        "hand",
        "horizon",
        "later",
        "needs",
        "planner",
        "proj",
        "risks",
        "ruleset",
        "turns",
        "unseen",
        "view",
    )

    def __init__(
        self, planner: CardPlannerStrategy, view: CardSeatView, ruleset: CardRuleset, turns: int
    ) -> None:
        self.planner = planner
        self.view = view
        self.ruleset = ruleset
        self.turns = turns
        self.unseen = unseen_cards(view, ruleset, planner.tracker.stack)
        self.risks = planner._risks(view, self.unseen)
        self.proj = planner._projection(view, turns, self.risks)
        self.needs = ticket_needs(ruleset, view.tickets)
        self.carry = view.num_seats >= ruleset.second_deck_min_players and view.deck_number == 1
        self.hand = list(view.hand)
        self.busy = planner._busy(view)
        #: the flush must be over ``safety`` turns before the estimated end
        self.horizon = max(0, turns - planner.safety)
        #: ``busy`` as seen from the next turn
        self.later = [max(0, b - 1) for b in self.busy]

    def value(
        self, proj: Sequence[float], hand: Sequence[int], start: int, busy: Sequence[int]
    ) -> float:
        """``worth`` of ``proj`` once ``hand`` is placed from turn ``start`` on."""
        planner = self.planner
        moved = flush_moves(hand, self.horizon, start, busy, self.risks)
        total = [proj[k] + moved[k] for k in range(NUM_CARD_KINDS)]
        value = worth(total, self.needs, planner.per_needed, planner.per_spare)
        if self.carry:
            value += planner.carry_value * (sum(hand) - sum(moved))
        return value

    def card_values(self) -> tuple[float, list[float], float]:
        """The value of placing the hand from the next turn on, what one more card of each
        kind adds to it, and what a blind card adds (the unseen mix)."""
        base = self.value(self.proj, self.hand, 1, self.later)
        marg = []
        for kind in range(NUM_CARD_KINDS):
            more = list(self.hand)
            more[kind] += 1
            marg.append(self.value(self.proj, more, 1, self.later) - base)
        pool = sum(self.unseen)
        blind = sum(m * n for m, n in zip(marg, self.unseen, strict=True)) / pool if pool else 0.0
        return base, marg, blind

    def placement(self, a: PlaceSuit | PlaceMix) -> float:
        """The value of placing ``a`` now and the rest of the hand from the next turn on."""
        after = list(self.proj)
        rest = list(self.hand)
        busy = list(self.later)
        if isinstance(a, PlaceSuit):
            rest[a.colour] -= a.cards
            rest[LOCOMOTIVE] -= a.locomotives
            for kind, p in row_moves(
                a.colour, a.cards, a.locomotives, self.turns, self.risks[a.colour]
            ):
                after[kind] += p
            busy[a.colour] = a.cards + a.locomotives
        else:
            for c in a.colours:
                rest[c] -= 1
                for kind, p in row_moves(c, 1, 0, self.turns, self.risks[c]):
                    after[kind] += p
                busy[c] = 1
        value = self.value(after, rest, 1, busy)
        opponents = max(1, self.view.num_seats - 1)
        return value + self.planner.rob_weight / opponents * _robbed(self.view, a, self.turns)

    def turn(self, legal: Sequence[CardAction]) -> CardAction:
        best: tuple[float, CardAction] | None = None
        base, marg, blind = self.card_values()
        hand = self.hand
        for a in legal:
            if isinstance(a, PlaceSuit) and a.cards < hand[a.colour]:
                continue  # a suit takes every card of its colour: one kept back waits alone
            if isinstance(a, PlaceSuit | PlaceMix):
                gain = self.placement(a)
            elif isinstance(a, DrawTickets):
                gain = base + self.planner.ticket_draw_value(
                    self.view, self.ruleset, self.turns, self.proj
                )
            else:
                continue
            if best is None or gain > best[0]:
                best = (gain, a)
        if DrawBlind() in legal:
            draws = _face_up_draws(self.view, legal)
            second = max([blind] + [marg[c] for _, c in draws if c != LOCOMOTIVE])
            options: list[tuple[float, CardAction]] = [(base + blind + second, DrawBlind())]
            for a, c in draws:
                # 000:107-111 a face-up Locomotive is the whole draw
                options.append((base + marg[c] + (0.0 if c == LOCOMOTIVE else second), a))
            draw = max(options, key=lambda o: o[0])
            if best is None or draw[0] > best[0]:
                best = draw
        return best[1] if best is not None else _fallback(legal)

    def second_card(self, legal: Sequence[CardAction]) -> CardAction:
        _, marg, blind = self.card_values()
        best: tuple[float, CardAction] = (blind, DrawBlind())
        for a, c in _face_up_draws(self.view, legal):
            if c != LOCOMOTIVE and marg[c] > best[0] + 1e-9:
                best = (marg[c], a)
        return best[1] if best[1] in legal else legal[0]


def _robbed(view: CardSeatView, a: CardAction, turns: int) -> float:
    """Cards a placement takes off opponents' rows that they would have moved (000:163-169)."""
    if not isinstance(a, PlaceSuit):
        return 0.0
    lost = 0
    for p in view.players:
        if p.seat != view.seat and p.railyard[a.colour]:
            lost += min(p.railyard[a.colour] + p.railyard_locomotives[a.colour], turns + 1)
    return float(lost)


class _TicketTable:
    """Per ticket of a ruleset: what it requires, its weight and its priority key (weight per
    card, best first, then index)."""

    __slots__ = ("key", "requires", "ruleset", "weight")

    def __init__(self, ruleset: CardRuleset, city_share: float) -> None:
        self.ruleset = ruleset
        cities = ruleset.big_cities
        self.requires = [t.requires for t in ruleset.tickets]
        self.weight = [
            t.points + city_share * sum(cities[c].points for c in t.big_cities)
            for t in ruleset.tickets
        ]
        self.key = [(-self.weight[t.index] / t.size, t.index) for t in ruleset.tickets]


def _logistic(x: float) -> float:
    if x < -30:
        return 0.0
    if x > 30:
        return 1.0
    return 1.0 / (1.0 + math.exp(-x))


def _fallback(legal: Sequence[CardAction]) -> CardAction:
    """Whatever harms least when no preference is legal: a pass, a ticket draw (keeping none),
    else the first legal action."""
    for a in legal:
        if isinstance(a, Pass | DrawTickets):
            return a
    return legal[0]


# ---------------------------------------------------------------------------------------------
# playing a game in-process


def play_card_match(
    ruleset: CardRuleset, strategies: Sequence[CardStrategy], seed: int
) -> CardOutcome:
    """One game, seat ``i`` played by ``strategies[i]``, each seeing only its own view.

    Raises ``ValueError`` if a strategy answers with an action that is not legal, naming the
    seat, so a broken strategy fails loudly instead of being corrected silently.
    """
    for seat, strategy in enumerate(strategies):
        strategy.new_game(ruleset, seat, seed)
    policies = [partial(_choose, s, ruleset) for s in strategies]
    names = [s.name for s in strategies]
    return play(CARD, ruleset, policies, seed, names=names).outcome


def _choose(
    strategy: CardStrategy, ruleset: CardRuleset, view: CardSeatView, legal: Sequence[CardAction]
) -> CardAction:
    return strategy.choose(view, legal, ruleset)
