"""``ttr play --human``: a person plays one seat, in the browser, against bots.

The seat is a bot like any other to the referee: :class:`HumanSeat` is an :class:`sdk.Bot`
served in this process by the SDK's own gRPC server on a loopback port and entered into the
match by its address, so the referee sends it the same requests, clocks and rejections as any
bot and records its game the same way. Its ``choose`` publishes the decision to a
:class:`Table` and waits for the page to answer.

Nothing hidden reaches the page, by construction: everything the page is sent (:meth:`Table.
state`) is made from what this seat's bot received over the wire and nothing else -- the
ruleset of its StartGame, each request's view (``asdict`` of the view the SDK decoded: the
engine's own ``view(state, seat)``), its legal actions, the events as they were projected for
this seat, the rejection and the clock, and EndGame's outcome. Ticket names are sent only for
the tickets those name, so another seat's tickets are nowhere in the page's data until the
outcome reveals them at the end.

Only the local user can act for the seat: the page is served on 127.0.0.1 at a random port,
under a per-game secret in its address (``secrets.token_urlsafe``); every route compares it in
constant time and answers 404 otherwise. The page's script sets every name and event with
``textContent``, under the same content security policy as the league page.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hmac
import json
import secrets
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import anyio.to_thread
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from referee.games.board.actions import ClaimRoute
from referee.games.board.events import RouteClaimed
from referee.games.card.actions import PlaceMix, PlaceSuit
from referee.games.common.actions import DrawBlind, DrawFaceUp, DrawTickets, KeepTickets, Pass
from referee.games.common.cards import CARD_NAMES
from referee.games.common.describe import card, payment
from referee.games.registry import family_named
from sdk.bot import Bot, Game
from sdk.serve import RunningBot, start_server
from ttr_arena.pages.scores import score_details, tickets_so_far
from ttr_arena.pages.viewer import board_data
from ttr_arena.pages.web import SEAT_COLOURS, asset, html_page
from ttr_arena.pages.web.threaded import serving

__all__ = [
    "PAGE_POLICY",
    "HumanHost",
    "HumanSeat",
    "Table",
    "action_json",
    "hosting",
    "make_app",
    "render_page",
    "ticket_name",
    "wait_seen",
]

#: The page's content security policy (the league page's): its own inline script and style,
#: requests to its own origin only, nothing else.
PAGE_POLICY = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)
#: How long one long poll of ``state`` waits for something new before it answers anyway.
POLL_S = 20.0
#: Beyond the referee's deadline (move limit + bank left), how long ``choose`` still waits
#: before it gives the decision up (the referee has played the default by then).
GRACE_S = 0.1

Json = Any


def ticket_name(ruleset: Any, board: bool, index: int) -> str:
    """A ticket as the page shows it, ``Denver-El Paso 4`` (the describers' words)."""
    tickets = ruleset.tickets
    if not 0 <= index < len(tickets):
        return f"ticket #{index}"
    t = tickets[index]
    if board:
        cities = ruleset.game_map.cities
        return f"{cities[t.a].name}-{cities[t.b].name} {t.points}"
    return f"{t.a}-{t.b} {t.points}"


def action_json(
    action: Any, ruleset: Any, face_up: Sequence[int], ticket: Callable[[int], str] = str
) -> dict[str, Json]:
    """One legal action as the page offers it: its kind, what it needs to be drawn where it
    belongs (the slot, the route, the tickets, the cards), its words, and ``key``: its type and
    fields, the action's identity (the tests compare it with the engine's legal actions)."""
    key = f"{type(action).__name__}{json.dumps(dataclasses.asdict(action), sort_keys=True)}"
    out: dict[str, Json] = {"key": key}
    match action:
        case DrawBlind():
            out.update(kind="blind", words="draw a card from the deck")
        case DrawFaceUp(slot=slot):
            shown = card(face_up[slot]) if 0 <= slot < len(face_up) else f"slot {slot}"
            out.update(kind="face_up", slot=slot, words=f"take {shown} from the row")
        case ClaimRoute(route=r, colour=c, locomotives=n):
            routes = ruleset.game_map.routes
            length = routes[r].length if 0 <= r < len(routes) else n
            label = ruleset.game_map.route_label(r) if 0 <= r < len(routes) else f"route #{r}"
            paid = payment(c, length - n, n)
            out.update(kind="claim", route=r, words=f"claim {label} with {paid}", paid=paid)
        case DrawTickets():
            out.update(kind="tickets", words="draw tickets")
        case KeepTickets(tickets=ts):
            kept = ", ".join(ticket(t) for t in ts) or "none"
            out.update(kind="keep", tickets=list(ts), words=f"keep {kept}")
        case PlaceSuit(colour=c, cards=n, locomotives=loc):
            out.update(
                kind="suit",
                colour=c,
                paid=payment(c, n, loc),
                words=f"place {payment(c, n, loc)} in the {card(c)} row",
            )
        case PlaceMix(colours=cs):
            named = ", ".join(card(c) for c in cs)
            out.update(kind="mix", paid=named, words=f"place a mix: one each of {named}")
        case Pass():
            out.update(kind="pass", words="pass (nothing else is legal)")
        case _:
            out.update(kind="other", words=repr(action))
    return out


@dataclasses.dataclass
class _Decision:
    number: int
    count: int  #: how many legal actions
    answer: int | None = None
    given_up: bool = False


class Table:
    """What the page sees, in versions: made only from what the human seat's bot received.
    The gRPC thread (:class:`HumanSeat`) writes it, the web server's requests read it and
    answer decisions; a condition wakes the waiting side."""

    def __init__(self, names: Sequence[str], record: str = "") -> None:
        self.names = list(names)
        self.record = record
        self._cond = threading.Condition()
        self.version = 0
        self.closed = False
        self.seen = 0  #: the newest version a page was sent
        self._game: dict[str, Json] | None = None
        self._ruleset: Any = None
        self._family: Any = None
        self._describe: Any = None
        self._view: dict[str, Json] | None = None
        self._progress: list[list[int]] | None = None
        self._legal: list[dict[str, Json]] = []
        self._log: list[str] = []
        self._rejection: list[str] | None = None
        self._clock: list[int] | None = None
        self._outcome: dict[str, Json] | None = None
        self._missed = 0  #: decisions whose time ran out before the page answered
        self._decision: _Decision | None = None
        self._decisions = 0
        self._tickets: dict[int, str] = {}
        self._claims: list[list[int]] = []  #: [route, seat] of every claim this seat was told

    # the bot's side (the gRPC thread) --------------------------------------------------------

    def _bump(self) -> None:
        self.version += 1
        self._cond.notify_all()

    def start(self, game: Game) -> None:
        """StartGame: the ruleset (the map, the rule numbers), this seat, the clock."""
        family = family_named(game.family)
        ruleset = game.ruleset
        names = [f"{i}:{n}" for i, n in enumerate(self.names)]
        names += [f"seat {i}" for i in range(len(names), game.num_seats)]
        describe = family.describer(ruleset, names)
        static: dict[str, Json] = {
            "family": family.name,
            "variant": game.variant,
            "title": ruleset.title,
            "seat": game.seat,
            "num_seats": game.num_seats,
            "names": names[: game.num_seats],
            "seat_colours": list(SEAT_COLOURS[: game.num_seats]),
            "card_names": list(CARD_NAMES),
            "score_label": describe.score_label,
            "clock": [game.move_limit_ms, game.bank_ms],
            "record": self.record,
        }
        if family.name == "board":
            static["board"] = board_data(ruleset, describe)
        else:
            static["big_cities"] = [f"{c.name} ({c.points})" for c in ruleset.big_cities]
        with self._cond:
            self._family, self._ruleset, self._describe = family, ruleset, describe
            self._game = static
            self._bump()

    def _name_tickets(self, indices: Sequence[int]) -> None:
        board = self._family.name == "board"
        for t in indices:
            if t not in self._tickets:
                self._tickets[t] = ticket_name(self._ruleset, board, t)

    def _tell(self, events: Sequence[Any]) -> None:
        for e in events:
            self._log.append(self._describe.event(e))
            if isinstance(e, RouteClaimed):  # public: the board after the last view, too
                self._claims.append([e.route, e.seat])

    def ask(
        self,
        view: Any,
        legal: Sequence[Any],
        events: Sequence[Any],
        rejection: tuple[str, str] | None,
        clock: tuple[int, int],
    ) -> int:
        """A request: its view, legal actions, the events since the last one, a rejection of
        the previous answer; returns the decision's number."""
        plain = dataclasses.asdict(view)
        board = self._family.name == "board"
        actions = [
            action_json(
                a, self._ruleset, view.face_up, lambda t: ticket_name(self._ruleset, board, t)
            )
            for a in legal
        ]
        with self._cond:
            self._decisions += 1
            self._decision = _Decision(self._decisions, len(actions))
            self._tell(events)
            self._view = plain
            done, not_yet = tickets_so_far(self._ruleset, view)
            self._progress = [done, not_yet]
            self._legal = actions
            self._rejection = list(rejection) if rejection is not None else None
            self._clock = [clock[0], clock[1]]
            self._name_tickets([*view.tickets, *view.offered])
            for p in view.players:
                self._name_tickets(getattr(p, "completed", ()))
            self._bump()
            return self._decisions

    def wait_answer(self, number: int, timeout_s: float) -> int | None:
        """The page's answer to decision ``number``, or None when the time ran out or the
        table was closed (the decision is then given up)."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while True:
                decision = self._decision
                if decision is None or decision.number != number or self.closed:
                    return None
                if decision.answer is not None:
                    answer = decision.answer
                    self._decision = None
                    self._legal = []
                    self._bump()
                    return answer
                left = deadline - time.monotonic()
                if left <= 0:
                    decision.given_up = True
                    self._decision = None
                    self._legal = []
                    self._missed += 1
                    self._bump()
                    return None
                self._cond.wait(left)

    def finish(self, outcome: Any, events: Sequence[Any], view: Any = None) -> None:
        """EndGame: the final scores, every seat's tickets revealed (public now), and the
        seat's view of the finished game."""
        family, ruleset = self._family, self._ruleset
        columns = family.columns(ruleset)
        rows = sorted(outcome.seats, key=lambda s: (s.rank, s.seat))
        details = score_details(ruleset, outcome)
        with self._cond:
            self._tell(events)
            if view is not None:
                self._view = dataclasses.asdict(view)
                done, not_yet = tickets_so_far(ruleset, view)
                self._progress = [done, not_yet]
            for d in details:
                self._name_tickets([t for t, _ in [*d["completed"], *d["failed"]]])
            names = self._game["names"] if self._game else []
            self._outcome = {
                "columns": ["rank", "seat", "total", *(header for header, _ in columns)],
                "rows": [
                    {
                        "seat": s.seat,
                        "rank": s.rank,
                        "total": s.total,
                        "cells": [
                            str(s.rank),
                            names[s.seat] if s.seat < len(names) else f"seat {s.seat}",
                            str(s.total),
                            *(c(s) for _, c in columns),
                        ],
                    }
                    for s in rows
                ],
                "details": details,
            }
            self._decision = None
            self._legal = []
            self._bump()

    def close(self) -> None:
        """The game is over or stopped: wake every waiter (a poll answers at once)."""
        with self._cond:
            self.closed = True
            self._decision = None
            self._legal = []
            self._bump()

    # the page's side (the web server) ---------------------------------------------------------

    def state(self, since: int, with_game: bool, timeout_s: float) -> dict[str, Json]:
        """Once the version is past ``since`` (or ``timeout_s`` passed, or the table closed):
        everything the page shows, as JSON."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while self.version <= since and not self.closed:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            self.seen = max(self.seen, self.version)
            decision = self._decision
            out: dict[str, Json] = {
                "version": self.version,
                "started": self._game is not None,
                "view": self._view,
                "progress": self._progress,
                "decision": decision.number if decision is not None else None,
                "legal": self._legal if decision is not None else [],
                "rejection": self._rejection if decision is not None else None,
                "clock": self._clock if decision is not None else None,
                "log": self._log,
                "claims": self._claims,
                "tickets": {str(k): v for k, v in sorted(self._tickets.items())},
                "missed": self._missed,
                "outcome": self._outcome,
                "closed": self.closed,
            }
            if with_game:
                out["game"] = self._game
            copy: dict[str, Json] = json.loads(json.dumps(out))  # a copy, made under the lock
            return copy

    def answer(self, number: Any, index: Any) -> str | None:
        """The page chose legal action ``index`` for decision ``number``: None if taken, else
        why not (the page shows it; the decision stays open)."""
        if isinstance(number, bool) or not isinstance(number, int):
            return "the answer names no decision"
        if isinstance(index, bool) or not isinstance(index, int):
            return "the answer names no legal action"
        with self._cond:
            decision = self._decision
            if decision is None or decision.number != number:
                return (
                    f"decision {number} is not open (the page was behind: it shows the "
                    "current one now)"
                )
            if decision.answer is not None:
                return f"decision {number} was already answered"
            if not 0 <= index < decision.count:
                return (
                    f"there is no legal action {index}: this decision has {decision.count} "
                    f"(0-{decision.count - 1})"
                )
            decision.answer = index
            self._cond.notify_all()
            return None


class HumanSeat(Bot):
    """The human's seat, served like any bot: each decision is put on the :class:`Table` and
    answered by the page. Where the referee's deadline (move limit + bank left) passes first,
    ``choose`` gives up (the referee has played the safe default) and the page says so.

    It plays one game, ``game_id`` (chosen by ``ttr play`` and sent only to this game's
    bots, which the sandbox keeps off the network), at ``seat``: a request for any other game
    or seat is refused before it reaches the table, so another local process that finds the
    seat's loopback port cannot put a decision or a game of its own on the page."""

    def __init__(self, table: Table, game_id: str = "", seat: int | None = None) -> None:
        self.table = table
        self.game_id = game_id
        self.seat = seat

    def _check(self, game: Game) -> None:
        if (self.game_id and game.game_id != self.game_id) or (
            self.seat is not None and game.seat != self.seat
        ):
            raise ValueError("this seat plays another game")

    def on_start(self, game: Game) -> None:
        self._check(game)
        self.table.start(game)

    def choose(self, view: Any, legal: Sequence[Any]) -> int:
        game = self.game
        self._check(game)
        number = self.table.ask(view, legal, game.new_events, game.rejection, game.clock)
        move_ms, bank_ms = game.clock
        answer = self.table.wait_answer(number, (move_ms + bank_ms) / 1000 + GRACE_S)
        return 0 if answer is None else answer

    def on_end(self, outcome: Any) -> None:
        self._check(self.game)
        self.table.finish(outcome, self.game.new_events, self.game.final_view)


# the page ------------------------------------------------------------------------------------

#: The page's fixed markup (made here, never from data: human.js sets every name, ticket and
#: event with ``textContent``). Its ids and classes follow the replay viewer's, whose style it
#: shares.
_BODY = """
<header id="top">
  <h1 id="title">Waiting for the game to start</h1>
  <div id="meta" class="muted"></div>
</header>
<div id="now" class="panel">
  <div id="prompt">Waiting for the game to start&hellip;</div>
  <div id="clock" class="muted"></div>
  <div id="error" class="fault" role="alert"></div>
  <div id="choice"></div>
</div>
<main id="main">
  <section id="stage"></section>
  <aside id="side">
    <div id="table" class="panel"></div>
    <div id="me" class="panel"></div>
    <div id="players"></div>
    <div id="final"></div>
    <details id="moves"><summary id="moves-head">All legal moves</summary>
      <ol id="move-list"></ol></details>
  </aside>
</main>
<h2>Game log</h2>
<div id="log" class="panel"></div>
"""


def render_page() -> str:
    """The page: its markup, the shared style and board script, its own script. It carries
    no game data: the script fetches ``state`` from the address it was opened at."""
    return html_page(
        "TTR Arena: your seat",
        _BODY,
        data={"format": "ttr-human/1"},
        scripts=(asset("board.js"), asset("human.js", "ttr_arena.pages.human")),
        styles=(
            asset("viewer.css", "ttr_arena.pages.viewer"),
            asset("human.css", "ttr_arena.pages.human"),
        ),
    )


_HEADERS = {
    "Content-Security-Policy": PAGE_POLICY,
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
}


def _not_found() -> Response:
    return PlainTextResponse("not found", status_code=404, headers=_HEADERS)


def make_app(table: Table, key: str) -> Starlette:
    """The page's web app: ``/KEY/`` (the page), ``/KEY/state?since=N`` (a long poll) and
    ``POST /KEY/act`` (``{"decision": N, "action": I}``, answered ``{"ok": true}`` or
    ``{"ok": false, "error": why}``); anything else, or another key, 404."""
    page = render_page()
    expected = key.encode()

    def allowed(request: Request) -> bool:
        given = str(request.path_params.get("key", "")).encode()
        return hmac.compare_digest(given, expected)

    async def index(request: Request) -> Response:
        if not allowed(request):
            return _not_found()
        return HTMLResponse(page, headers=_HEADERS)

    async def state(request: Request) -> Response:
        if not allowed(request):
            return _not_found()
        try:
            since = int(request.query_params.get("since", "0"))
        except ValueError:
            since = 0
        with_game = request.query_params.get("game", "1") != "0"
        data = await anyio.to_thread.run_sync(table.state, since, with_game, POLL_S)
        return JSONResponse(data, headers=_HEADERS)

    async def act(request: Request) -> Response:
        if not allowed(request):
            return _not_found()
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            return JSONResponse(
                {"error": "send JSON (application/json)"}, status_code=415, headers=_HEADERS
            )
        try:
            body = json.loads(await request.body())
        except ValueError:
            body = None
        if not isinstance(body, dict):
            return JSONResponse(
                {"error": 'send {"decision": N, "action": I}'}, status_code=400, headers=_HEADERS
            )
        error = table.answer(body.get("decision"), body.get("action"))
        # a refused answer is an answer too (200): the page shows why, and the decision stays
        return JSONResponse({"ok": error is None, "error": error}, headers=_HEADERS)

    app = Starlette(
        routes=[
            Route("/{key}/", index, methods=["GET"]),
            Route("/{key}/state", state, methods=["GET"]),
            Route("/{key}/act", act, methods=["POST"]),
        ]
    )
    app.router.redirect_slashes = False
    return app


@dataclasses.dataclass
class HumanHost:
    """The human seat, running: its gRPC server (the referee's side) and its page."""

    table: Table
    bot: RunningBot
    url: str  #: the page's address, the secret in it
    host: str
    port: int

    @property
    def address(self) -> str:
        """Where the referee reaches the seat (a loopback port)."""
        return self.bot.address


@contextlib.contextmanager
def hosting(
    names: Sequence[str],
    record: str | Path = "",
    game_id: str = "",
    seat: int | None = None,
    timeout_s: float = 30.0,
) -> Iterator[HumanHost]:
    """The human seat and its page, served on 127.0.0.1 at free ports, until the block ends.
    ``names`` are the seats' names as the page shows them (the human's included); with
    ``game_id`` and ``seat`` it plays that game's seat only (:class:`HumanSeat`)."""
    table = Table(names, str(record))
    key = secrets.token_urlsafe(24)
    config = uvicorn.Config(
        make_app(table, key),
        host="127.0.0.1",
        port=0,
        log_level="warning",
        access_log=False,
        lifespan="off",
        server_header=False,
        timeout_graceful_shutdown=2,
        timeout_keep_alive=5,
        limit_concurrency=64,
    )
    with serving(config, "ttr-human-page", timeout_s) as url:
        bot = start_server(HumanSeat(table, game_id, seat), "127.0.0.1:0")
        try:
            port = urllib.parse.urlsplit(url).port or 0
            yield HumanHost(table, bot, f"{url}{key}/", "127.0.0.1", port)
        finally:
            table.close()
            bot.stop(grace=0.5)


def wait_seen(table: Table, timeout_s: float) -> bool:
    """Wait until a page has been sent the table's newest version (the end of the game), at
    most ``timeout_s``; False if no page fetched it in time."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if table.seen >= table.version:
            return True
        time.sleep(0.05)
    return table.seen >= table.version
