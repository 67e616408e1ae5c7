"""The card game in words: tickets by their cities, Railyards, stacks, robberies and the
scoring of each stack (see common/describe.py)."""

from __future__ import annotations

from typing import Any

from referee.games.card import events as card_events
from referee.games.common.describe import Describer, card, cards, count, payment, row


class CardDescriber(Describer):
    score_label = "ticket points"

    def ticket(self, index: int) -> str:
        """``Denver-El Paso 4``."""
        tickets = self.ruleset.tickets
        if not 0 <= index < len(tickets):
            return f"ticket #{index}"
        t = tickets[index]
        return f"{t.a}-{t.b} {t.points}"

    def city(self, index: int) -> str:
        cities = self.ruleset.big_cities
        return cities[index].name if 0 <= index < len(cities) else f"city #{index}"

    def score(self, player: Any) -> int:
        points: int = player.ticket_points
        return points

    def event(self, e: Any) -> str:
        match e:
            case card_events.MovedOnTrack(seat=s, count=n, cards=cs):
                shown = "" if cs is None else f" ({', '.join(card(c) for c in cs) or 'none'})"
                return f"{self.seat(s)} moves {count(n, 'card')} onto its On-the-Track stack{shown}"
            case card_events.SuitPlaced(seat=s, colour=c, cards=n, locomotives=loc):
                return f"{self.seat(s)} places {payment(c, n, loc)} in its {card(c)} Railyard row"
            case card_events.MixPlaced(seat=s, colours=cs):
                return f"{self.seat(s)} places a mix: one {', one '.join(card(c) for c in cs)}"
            case card_events.TrainRobbed(robber=r, seat=s, colour=c, cards=n, locomotives=loc):
                return (
                    f"{self.seat(r)} robs {self.seat(s)}: its {card(c)} row "
                    f"({payment(c, n, loc)}) is discarded"
                )
            case card_events.FinalRoundStarted(seat=s, deck=d):
                by = "the deal" if s < 0 else self.seat(s)
                return f"{by} took the last card of deck {d}: final round, one more turn each"
            case card_events.PlayStalled(turns=t):
                return f"no card moved and no ticket kept for {t} turns: the deck is scored now"
            case card_events.StackScored(seat=s, deck=d, stack=st, completed=done, points=p):
                return (
                    f"{self.seat(s)} scores its stack (deck {d}: {cards(st)}): completes "
                    f"{self.tickets(done)}: +{p}"
                )
            case card_events.CardsDealt(seat=s, count=n, cards=cs):
                shown = "" if cs is None else f" ({', '.join(card(c) for c in cs)})"
                return f"{self.seat(s)} is dealt {count(n, 'card')} from the second deck{shown}"
            case card_events.TicketsRevealed(seat=s, tickets=ts, points=p):
                return f"{self.seat(s)} shows the tickets left in hand: {self.tickets(ts)}: -{p}"
            case card_events.BonusAwarded(city=c, seats=ss, points=p):
                to = ", ".join(self.seat(s) for s in ss) or "nobody"
                return f"Big Cities bonus {self.city(c)} (+{p}) to {to}"
        return super().event(e)

    def view_lines(self, view: Any) -> list[str]:
        me = view.players[view.seat]
        lines = [
            f"hand: {cards(view.hand)}",
            f"tickets: {self.tickets(view.tickets)}",
        ]
        if view.offered:
            lines.append(f"offered: {self.tickets(view.offered)}")
        stack = (
            f"{cards(view.stack, 'empty')}"
            if view.stack is not None
            else f"{count(me.stack_size, 'card')}, face down"
        )
        lines.append(f"your stack: {stack}; railyard: {self._yard(me)}")
        lines.append(
            f"completed: {self.tickets(me.completed)} ({me.ticket_points} points)"
            if me.completed
            else f"completed: none ({me.ticket_points} points)"
        )
        lines.append(
            f"row: {row(view.face_up)}; deck {view.deck_number}: {view.deck_size} cards, "
            f"discards {sum(view.discards)}, ticket deck {view.ticket_deck_size}"
        )
        for p in view.players:
            if p.seat != view.seat:
                pending = f" (+{p.tickets_pending} offered)" if p.tickets_pending else ""
                done = f", completed {self.tickets(p.completed)}" if p.completed else ""
                lines.append(
                    f"{self.seat(p.seat)}: {count(p.hand_size, 'card')}, "
                    f"{count(p.tickets, 'ticket')}{pending}, "
                    f"stack {p.stack_size}, railyard: {self._yard(p)}, "
                    f"{p.ticket_points} ticket points{done}"
                )
        return lines

    @staticmethod
    def _yard(player: Any) -> str:
        rows = [
            payment(c, n, loc)
            for c, (n, loc) in enumerate(
                zip(player.railyard, player.railyard_locomotives, strict=True)
            )
            if n or loc
        ]
        return ", ".join(rows) if rows else "empty"
