"""The board games in words: tickets and routes by their cities, claims with their payment,
a seat's hand, tickets and routes (see common/describe.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from referee.games.board import events as board_events
from referee.games.common.describe import Describer, cards, count, payment, row


class BoardDescriber(Describer):
    score_label = "route points"

    def ticket(self, index: int) -> str:
        """``Denver-El Paso 4``."""
        tickets = self.ruleset.tickets
        if not 0 <= index < len(tickets):
            return f"ticket #{index}"
        t = tickets[index]
        cities = self.ruleset.game_map.cities
        return f"{cities[t.a].name}-{cities[t.b].name} {t.points}"

    def route(self, index: int) -> str:
        """``Denver-Omaha (4 red, #12)``, the map's own label."""
        routes = self.ruleset.game_map.routes
        if not 0 <= index < len(routes):
            return f"route #{index}"
        label: str = self.ruleset.game_map.route_label(index)
        return label

    def score(self, player: Any) -> int:
        points: int = player.route_points
        return points

    def event(self, e: Any) -> str:
        match e:
            case board_events.RouteClaimed(seat=s, route=r, colour=c, locomotives=n, points=p):
                length = (
                    self.ruleset.game_map.routes[r].length
                    if 0 <= r < len(self.ruleset.game_map.routes)
                    else n
                )
                paid = payment(c, length - n, n)
                return f"{self.seat(s)} claims {self.route(r)} with {paid}: +{p}"
            case board_events.FaceUpFlushed(cards=cs):
                return f"the row is discarded ({row(cs)})"
            case board_events.LastRoundStarted(seat=s, trains=t):
                pieces = count(t, self.ruleset.piece)  # New York's taxis (001:36-37)
                return f"{self.seat(s)} has {pieces} left: last round, one more turn each"
        return super().event(e)

    def view_lines(self, view: Any) -> list[str]:
        me = view.players[view.seat]
        lines = [
            f"hand: {cards(view.hand)}",
            f"tickets: {self.tickets(view.tickets)}",
        ]
        if view.offered:
            lines.append(f"offered: {self.tickets(view.offered)}")
        piece = self.ruleset.piece
        lines.append(
            f"{piece}s {me.trains}, route points {me.route_points}, "
            f"routes: {self._routes(me.routes)}"
        )
        lines.append(
            f"row: {row(view.face_up)}; deck {view.deck_size}, discards {sum(view.discards)}, "
            f"ticket deck {view.ticket_deck_size}"
        )
        for p in view.players:
            if p.seat != view.seat:
                pending = f" (+{p.tickets_pending} offered)" if p.tickets_pending else ""
                lines.append(
                    f"{self.seat(p.seat)}: {count(p.hand_size, 'card')}, "
                    f"{count(p.tickets, 'ticket')}{pending}, {count(p.trains, piece)}, "
                    f"{p.route_points} route points, "
                    f"routes: {self._routes(p.routes)}"
                )
        return lines

    def _routes(self, routes: Sequence[int]) -> str:
        if not routes:
            return "none"
        cities = self.ruleset.game_map.cities
        out = []
        for r in routes:
            route = self.ruleset.game_map.routes[r]
            out.append(f"{cities[route.a].name}-{cities[route.b].name}")
        return ", ".join(out)
