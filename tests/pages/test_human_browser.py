"""``ttr play --human`` in a real browser (tests/browser.py): whole games played through the
page, a board variant (usa), New York and the card game, each against the ``random`` sample
bot. At every decision of the human's seat the page's hand, tickets, offer, row, decks,
every seat's public facts and the board's claimed routes (or Railyards) are read off the
page, with the legal moves it offers; after the game the record is replayed through the
engine and each of those readings must equal ``view(state, seat)`` and
``legal_actions(state)`` at that decision, move for move, and the page's game log must be
every event in words as ``project(event, seat)`` told it. Every
response the page received before the end is searched for the other seat's tickets (and
the card game's hidden stacks): none may be there. The record replays (``ttr replay
verify``)."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from referee.games.registry import family_of, load
from referee.replay import load_record
from tests.browser import ROOT, screenshot
from tests.pages.test_viewer import engine_states
from ttr_arena.pages.human import ticket_name

if TYPE_CHECKING:
    from playwright.sync_api import Page

TTR = str(Path(sys.executable).parent / "ttr")

#: What the page shows of the seat's view, read off the page at a decision.
READ = """() => {
  const num = (el, name) => +el.getAttribute(name);
  const all = (sel) => Array.from(document.querySelectorAll(sel));
  const hand = {};
  all('#hand [data-kind]').forEach(c => { hand[c.dataset.kind] = +c.dataset.count; });
  return {
    decision: +document.body.dataset.decision,
    hand: hand,
    tickets: all('#my-tickets [data-ticket]').map(t => +t.dataset.ticket).sort((a, b) => a - b),
    offered: all('#offered input[data-ticket]').map(t => +t.dataset.ticket).sort((a, b) => a - b),
    face_up: all('#row [data-slot]').map(c => +c.dataset.card),
    deck: num(document.getElementById('deck'), 'data-size'),
    ticket_deck: num(document.getElementById('ticket-deck'), 'data-size'),
    players: all('#players .player').map(p => ({seat: +p.dataset.seat, hand: +p.dataset.hand,
      tickets: +p.dataset.tickets, pending: +p.dataset.pending,
      trains: p.dataset.trains === undefined ? null : +p.dataset.trains,
      score: +p.querySelector('.score').dataset.score})),
    yards: all('#stage .mat').map(m => all('#stage .mat[data-seat="' + m.dataset.seat +
      '"] .yard-row').map(r => [+r.dataset.cards, +r.dataset.locos])),
    moves: all('#move-list [data-key]').map(b => [+b.dataset.action, b.dataset.key]),
    owners: all('#board .route[data-owner]').map(g => [+g.dataset.route, +g.dataset.owner]),
  };
}"""


def key(action: Any) -> str:
    """An action's identity as the page's ``data-key`` has it (its type and fields)."""
    return f"{type(action).__name__}{json.dumps(dataclasses.asdict(action), sort_keys=True)}"


@dataclasses.dataclass
class Played:
    record: Path
    readings: list[dict[str, Any]]
    bodies: list[str]  #: every response body before the page showed the end
    seat: int
    log: list[str]  #: the page's game log at the end
    facts: list[str]  #: each seat's line of counts at the end


def start(tmp_path: Path, variant: str, seed: int, seat: int = 0) -> tuple[Any, str, Path]:
    record = tmp_path / f"{variant}.json"
    bots = ["random"]
    command = [TTR, "play", "--variant", variant, "--seed", str(seed), "--no-sandbox"]
    command += ["--no-open", "--record", str(record), "--human", str(seat), *bots]
    proc = subprocess.Popen(
        command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stderr is not None
    line = proc.stdout.readline()
    assert line.startswith("your seat's page: http://127.0.0.1:"), line + proc.stderr.read()
    return proc, line.split(": ", 1)[1].strip(), record


def choose(page: Page, reading: dict[str, Any], picture: str = "") -> bool:
    """Click one of the moves the quickest way through the game: a claim of the longest route
    (on the board, then its first payment), a placement, else the deck, the row, the fewest
    tickets; each through the page's own controls. With ``picture``, a claim's payments are
    saved as that screenshot first (True: taken)."""
    moves = reading["moves"]
    kinds = [m[1].split("{")[0] for m in moves]
    if "ClaimRoute" in kinds:
        claims = [json.loads(m[1][len("ClaimRoute") :]) for m in moves if m[1].startswith("Claim")]
        lengths = page.evaluate(
            "() => Array.from(document.querySelectorAll('#board .route.claimable'))"
            ".map(g => [+g.dataset.route, +g.dataset.length])"
        )
        assert sorted(r for r, _ in lengths) == sorted({c["route"] for c in claims})
        route = max(lengths, key=lambda x: (x[1], -x[0]))[0]
        page.dispatch_event(f'#board .route[data-route="{route}"]', "click")
        if picture:
            page.evaluate("window.scrollTo(0, 0)")
            screenshot(page, picture)
        page.click(f'#payments button.pay[data-route="{route}"] >> nth=0')
        return bool(picture)
    elif "PlaceSuit" in kinds or "PlaceMix" in kinds:
        page.click("#placements button.place >> nth=0")
    elif "KeepTickets" in kinds:
        fewest = min(
            (json.loads(m[1][len("KeepTickets") :])["tickets"] for m in moves),
            key=lambda ts: (len(ts), ts),
        )
        for box in page.query_selector_all("#offered input[data-ticket]"):
            box.set_checked(int(box.get_attribute("data-ticket") or -1) in fewest)
        page.click("#keep")
    elif "DrawBlind" in kinds:
        page.click("#deck")
    elif "DrawFaceUp" in kinds:
        page.click("#row [data-action] >> nth=0")
    else:
        page.click("#move-list button >> nth=0")
    return False


def play_through(
    page: Page,
    tmp_path: Path,
    variant: str,
    seed: int,
    seat: int,
    *,
    illegal: bool = False,
    picture: str = "",
) -> Played:
    proc, url, record = start(tmp_path, variant, seed, seat)
    bodies: list[str] = []
    over = [False]

    def on_response(response: Any) -> None:
        try:
            body = response.text()
        except Exception:  # a long poll cut short when the page closes
            return
        if '"outcome":{' in body.replace(" ", ""):
            over[0] = True
        if not over[0]:
            bodies.append(body)

    page.on("response", on_response)
    readings: list[dict[str, Any]] = []
    try:
        page.goto(url)
        # no clock given: a human's game takes the largest (MOVE_MS, BANK_MS)
        page.wait_for_function("() => document.getElementById('meta').textContent !== ''")
        assert "clock: 600 s a move, 3600 s of bank" in page.inner_text("#meta")
        last = 0
        while True:
            page.wait_for_function(
                "last => document.body.dataset.over === '1' || "
                "(+document.body.dataset.decision || 0) > last",
                arg=last,
                timeout=30_000,
            )
            if page.evaluate("document.body.dataset.over === '1'"):
                break
            reading = page.evaluate(READ)
            readings.append(reading)
            if illegal and len(readings) == 2:
                # an index no decision has: refused with the reason, and the game goes on
                page.evaluate("TTR_HUMAN.send(999)")
                page.wait_for_function(
                    "() => document.getElementById('error').textContent"
                    ".includes('no legal action 999')"
                )
            if choose(page, reading, picture if len(readings) >= 20 else ""):
                picture = ""
            last = reading["decision"]
        log = page.eval_on_selector_all(
            "#log .entry-line", "lines => lines.map(l => l.textContent)"
        )
        facts = page.eval_on_selector_all("#players .facts", "f => f.map(l => l.textContent)")
        assert page.inner_text("#record").endswith(str(record))
        assert page.query_selector_all("#final table.outcome tr[data-seat]")
        screenshot(page, f"human-{variant}")
    except BaseException:
        proc.kill()
        raise
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, out + err
    assert f"record: {record}" in out
    assert f"{seat}:human" in out
    return Played(record, readings, bodies, seat, log, facts)


def check(played: Played) -> None:
    """Every reading is the seat's engine view at that decision, with exactly its legal
    actions; no response before the end holds the other seat's secrets."""
    data = load_record(played.record)
    ruleset = load(data["ruleset"])
    family = family_of(ruleset)
    board = family.name == "board"
    seat = played.seat
    states = engine_states(played.record)
    mine = [s for s in states[:-1] if s.seat == seat]
    assert len(mine) == len(played.readings)
    seen: set[int] = set()  # every ticket this seat was ever shown
    for state, reading in zip(mine, played.readings, strict=True):
        v = family.view(state, seat)
        assert reading["hand"] == {str(k): n for k, n in enumerate(v.hand) if n}
        assert reading["tickets"] == sorted(v.tickets)
        assert reading["offered"] == sorted(v.offered)
        assert reading["face_up"] == list(v.face_up)
        assert reading["deck"] == v.deck_size
        assert reading["ticket_deck"] == v.ticket_deck_size
        for p, shown in zip(v.players, reading["players"], strict=True):
            assert shown["seat"] == p.seat
            assert shown["hand"] == p.hand_size
            assert shown["tickets"] == p.tickets
            assert shown["pending"] == p.tickets_pending
            assert shown["trains"] == (p.trains if board else None)
            assert shown["score"] == (p.route_points if board else p.ticket_points)
        if not board:
            yards = [
                [list(x) for x in zip(p.railyard, p.railyard_locomotives, strict=True)]
                for p in v.players
            ]
            assert reading["yards"] == yards
        if board:
            owners = {r: p.seat for p in v.players for r in p.routes}
            assert dict(map(tuple, reading["owners"])) == owners
        legal = family.legal_actions(state)
        assert reading["moves"] == [[i, key(a)] for i, a in enumerate(legal)]
        seen.update(v.tickets, v.offered)
        for p in v.players:
            seen.update(getattr(p, "completed", ()))
    # the events as they happened, told as the seat was told them (project), in words
    names = [f"{i}:{s['name']}" for i, s in enumerate(data["seats"])]
    describe = family.describer(ruleset, names)
    told = [describe.event(family.project(e, seat)) for s in states for e in s.events]
    assert played.log == told
    secret: set[int] = set()
    for state in states:
        for other in range(state.num_seats):
            if other != seat:
                secret.update(state.tickets[other], state.offered[other])
    secret -= seen
    assert secret, "the other seat held tickets this seat never saw: the check must search"
    text = "\n".join(played.bodies)
    assert played.bodies
    # every event that says more in the truth than as the seat was told it (another seat's
    # drawn card, its tickets, the cards it moved onto its stack): the truth is nowhere
    hidden = {
        describe.event(e)
        for s in states
        for e in s.events
        if describe.event(e) != describe.event(family.project(e, seat))
    }
    assert hidden, "some events hide something from the seat: the check must search"
    for line in hidden:
        assert line not in text and json.dumps(line)[1:-1] not in text, line
    for t in secret:
        name = ticket_name(ruleset, board, t)
        assert name not in text and json.dumps(name)[1:-1] not in text, name
    for body in played.bodies:
        if body.startswith("{"):
            sent = json.loads(body)
            view = sent.get("view")
            if view is not None:
                assert view["seat"] == seat
                for p in view["players"]:
                    assert not {"hand", "offered", "stack"} & set(p)
    done = subprocess.run(
        [TTR, "replay", "verify", str(played.record)], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(
    ("variant", "seed", "seat"), [("usa", 5, 0), ("newyork", 2, 1), ("cardgame", 3, 0)]
)
def test_a_whole_game_through_the_page_shows_the_seat_its_view_and_no_more(
    page: Page, tmp_path: Path, variant: str, seed: int, seat: int
) -> None:
    usa = variant == "usa"
    # the README's picture (docs/img/human-play.png is a copy): a claim's payments on offer
    played = play_through(
        page, tmp_path, variant, seed, seat, illegal=usa, picture="human-play" if usa else ""
    )
    check(played)
    # a seat's pieces by their name: New York's are taxis (rulebook 001:164-165)
    pieces = {"usa": "train", "newyork": "taxi"}
    if variant in pieces:
        assert played.facts and all(
            re.search(rf"\b\d+ {pieces[variant]}s? left\b", f) for f in played.facts
        ), played.facts
