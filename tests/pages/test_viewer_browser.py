"""``ttr replay view`` in a real browser (tests/browser.py): the generated page of each variant
is opened, stepped with the buttons, the keys and the slider, switched to one seat's eyes, and
what it draws is checked against the engine at that step: the claimed routes, the scores, a
seat's hand, and that no other seat's secret ticket is anywhere on the page. Each variant's
page is saved as a screenshot (test-artifacts/screenshots/replay-VARIANT.png)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from referee.games.board.scoring import connected
from referee.games.common.cards import CARD_NAMES
from referee.games.registry import AnyFamily, family_of, load, variants
from referee.replay import load_record
from tests.browser import screenshot
from tests.helpers import play
from tests.pages.test_viewer import HOSTILE, engine_states, make_records
from ttr_arena.pages.viewer import render_html

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page


@dataclasses.dataclass(frozen=True)
class Game:
    record: Path
    page: Path  #: the whole-truth page
    family: AnyFamily
    ruleset: Any
    states: list[Any]  #: the engine's state at every step

    @property
    def last(self) -> int:
        return len(self.states) - 1


BIG_SEED = 2**53 + 1


@pytest.fixture(scope="module")
def games(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Game]:
    folder = tmp_path_factory.mktemp("viewer")
    records = make_records(folder)
    # seed 2**53 + 1: the first integer a JavaScript number cannot hold exactly
    records["hostile"] = play(folder / "hostile.json", "usa", 2, BIG_SEED, names=[HOSTILE, "b"])
    out = {}
    for name, record in records.items():
        page = folder / f"{name}.html"
        page.write_text(render_html(record), encoding="utf-8")
        ruleset = load(load_record(record)["ruleset"])
        out[name] = Game(record, page, family_of(ruleset), ruleset, engine_states(record))
    return out


def open_page(page: Page, path: Path, fragment: str = "") -> None:
    page.goto(path.as_uri() + fragment)
    page.wait_for_function("window.TTR_READY === true")


def slide(page: Page, k: int) -> None:
    """Move the slider to ``k`` as a user's drag does: its value, then an input event."""
    page.evaluate(
        "k => { const s = document.getElementById('slider'); s.value = k;"
        " s.dispatchEvent(new Event('input')); }",
        k,
    )


def picture(page: Page, name: str) -> None:
    """A screenshot of the whole page from its top (the controls bar sticks to the top of
    the window, so a scrolled page would show it in the middle of the picture)."""
    page.evaluate("window.scrollTo(0, 0)")
    screenshot(page, name)


def at(page: Page) -> int:
    return int(page.evaluate("document.getElementById('slider').value"))


def check_step(page: Page, game: Game, k: int) -> None:
    """The page is at step ``k`` and draws what the engine's public view holds there."""
    assert page.text_content("#position") == f"step {k} / {game.last}"
    public = game.family.view(game.states[k], 0)
    for p in public.players:
        score = p.route_points if game.family.name == "board" else p.ticket_points
        assert page.text_content(f'[data-score="{p.seat}"]') == str(score)
    if game.family.name == "board":
        claimed = sum(len(p.routes) for p in public.players)
        assert page.locator("#board [data-owner]").count() == claimed
        for p in public.players:
            drawn = page.locator(f'#board [data-owner="{p.seat}"]')
            assert sorted(
                int(r) for r in drawn.evaluate_all("n => n.map(e => e.dataset.route)")
            ) == (sorted(p.routes))
    else:
        assert page.locator(".mat").count() == public.num_seats


def hand_chips(counts: Any) -> list[str]:
    return [f"{n} {CARD_NAMES[k]}" for k, n in enumerate(counts) if n]


def secret_tickets(game: Game, owner: int, viewer: int) -> set[int]:
    """Tickets ``owner`` held or was offered that ``viewer`` was never told of (not in its
    views, not in any event as it was told it)."""
    held: set[int] = set()
    known: set[int] = set()
    for state in game.states:
        held |= set(state.tickets[owner]) | set(state.offered[owner])
        v = game.family.view(state, viewer)
        known |= set(v.tickets) | set(v.offered)
        for p in v.players:
            known |= set(getattr(p, "completed", ()))
        for e in state.events:
            told = game.family.project(e, viewer)
            for field in ("tickets", "kept", "completed"):
                value = getattr(told, field, None)
                if isinstance(value, tuple):
                    known |= set(value)
    return held - known


def ticket_label(game: Game, index: int) -> str:
    t = game.ruleset.tickets[index]
    if game.family.name == "card":
        return f"{t.a}-{t.b} {t.points}"
    cities = game.ruleset.game_map.cities
    return f"{cities[t.a].name}-{cities[t.b].name} {t.points}"


@pytest.mark.parametrize("variant", variants())
def test_each_variant_steps_and_draws_what_the_engine_holds(
    variant: str, games: dict[str, Game], page: Page
) -> None:
    game = games[variant]
    open_page(page, game.page)
    check_step(page, game, 0)
    page.keyboard.press("End")
    check_step(page, game, game.last)
    totals = page.locator("#final tr[data-seat]").evaluate_all(
        "rows => rows.map(r => [+r.dataset.seat, +r.dataset.total])"
    )
    outcome = game.family.outcome(game.states[-1])
    assert sorted(totals) == sorted([s.seat, s.total] for s in outcome.seats)
    page.click("#back")
    page.click("#back")
    check_step(page, game, game.last - 2)
    assert page.locator("#final table").count() == 0
    mid = game.last // 2
    slide(page, mid)
    check_step(page, game, mid)
    page.keyboard.press("ArrowRight")
    check_step(page, game, mid + 1)
    page.keyboard.press("ArrowLeft")
    page.click("#forward")
    page.click("#back")
    check_step(page, game, mid)
    assert page.evaluate("location.hash") == f"#step={mid}&seat=truth"
    # the log's current line is this step's, and clicking another line goes there
    assert page.get_attribute("#log .entry.current", "data-step") == str(mid)
    page.click(f'#log .entry[data-step="{mid - 1}"]')
    check_step(page, game, mid - 1)
    page.click("#forward")
    picture(page, f"replay-{variant}")
    # the step's header says "turn" once (the plain turn phase is not named again)
    heads = page.locator("#log .entry-head").all_text_contents()
    assert [h for h in heads if h.count("turn") != 1] == [heads[0]]  # step 0: the deal
    # a seat's pieces by their name: New York's are taxis (rulebook 001:164-165)
    if game.family.name == "board":
        piece = {"newyork": "taxi"}.get(variant, "train")
        facts = page.locator("#players .facts").all_text_contents()
        assert facts and all(re.search(rf"\b\d+ {piece}s? left\b", f) for f in facts), facts

    # the whole truth shows seat 0's secret tickets where it holds them (or is offered them:
    # in the card game every kept ticket is shown to all by the end); seat 1's eyes never do
    secret = secret_tickets(game, owner=0, viewer=1)
    assert secret
    peek = next(k for k, s in enumerate(game.states) if secret & set(s.tickets[0] + s.offered[0]))
    slide(page, peek)
    held = secret & set(game.states[peek].tickets[0] + game.states[peek].offered[0])
    assert ticket_label(game, min(held)) in page.inner_text("body")
    slide(page, mid)
    page.select_option("#seat", "1")
    assert page.evaluate("location.hash") == f"#step={mid}&seat=1"
    check_step(page, game, mid)
    own = game.family.view(game.states[mid], 1)
    chips = page.locator("#player-1 .hand .card").all_text_contents()
    assert chips == hand_chips(own.hand)
    for t in own.tickets:
        assert ticket_label(game, t) in page.inner_text("#player-1")
    assert page.locator("#player-0 .hand").count() == 0
    labels = {ticket_label(game, t) for t in range(len(game.ruleset.tickets))}
    for step in (mid, peek, 0, game.last):
        slide(page, step)
        # at the end, the outcome (every seat's tickets, completed or failed) is public: the
        # referee sends it to every seat (EndGame); shown in #final alone
        text = page.evaluate(
            "() => { const f = document.getElementById('final'); f.hidden = true;"
            " const t = document.body.innerText; f.hidden = false; return t; }"
        )
        for t in secret:
            label = ticket_label(game, t)
            if not any(label in other for other in labels - {label}):  # not part of another
                assert label not in text, f"seat 0's ticket {label} shown to seat 1 at {step}"
    if game.family.name == "card":  # stacks are face down to everyone: no card drawn
        assert page.locator('.mat[data-seat="0"] .stack .card').count() == 0
        page.select_option("#seat", "truth")
        stacked = sum(game.states[game.last].stacks[0])
        drawn = page.locator('.mat[data-seat="0"] .stack .card').all_text_contents()
        assert sum(int(c.split()[0]) for c in drawn) == stacked


def test_faults_are_marked_where_they_happened(games: dict[str, Game], page: Page) -> None:
    game = games["liar"]
    data = load_record(game.record)
    open_page(page, game.page)
    expected = len(data["faults"]) + sum(1 for a in data["actions"] if a["default"])
    assert page.locator("#faults .fault-item").count() == expected
    assert page.locator("#chart line.mark").count() == expected
    steps = sorted({f["decision"] + 1 for f in data["faults"]})
    flagged = page.locator("#log .entry.has-fault").evaluate_all("n => n.map(e => +e.dataset.step)")
    assert flagged == steps
    page.locator("#faults .fault-item a").nth(4).click()  # the second decision's rejection
    check_step(page, game, data["faults"][3]["decision"] + 1)
    assert "answer rejected (pass.not_allowed)" in page.inner_text("#now")
    page.select_option("#seat", "0")  # seat 0 was never told of seat 1's faults
    assert page.locator("#faults .fault-item").count() == 0
    # no faults: a plain "none", not a numbered list of one item "none"
    assert page.locator("#faults li").count() == 0 and not page.is_visible("#faults")
    assert page.is_visible("#no-faults") and page.inner_text("#no-faults") == "none"
    assert page.locator("#chart line.mark").count() == 0
    assert page.locator("#log .entry.has-fault").count() == 0
    page.select_option("#seat", "1")
    assert page.locator("#faults .fault-item").count() == expected
    assert page.is_visible("#faults") and not page.is_visible("#no-faults")
    picture(page, "replay-faults")


def test_a_link_opens_at_its_step_and_seat_and_play_moves_on(
    games: dict[str, Game], page: Page
) -> None:
    game = games["usa"]
    open_page(page, game.page, "#step=40&seat=1")
    check_step(page, game, 40)
    assert page.input_value("#seat") == "1"
    page.keyboard.press("ArrowRight")
    assert page.evaluate("location.hash") == "#step=41&seat=1"
    page.select_option("#speed", "60")
    page.click("#play")
    page.wait_for_function("document.getElementById('slider').value >= 50")
    page.keyboard.press(" ")  # Space pauses
    paused = at(page)
    page.wait_for_timeout(100)
    assert at(page) == paused
    assert page.text_content("#play") == "play"
    page.keyboard.press("Home")
    check_step(page, game, 0)
    # a hash typed into the address bar moves the page
    page.evaluate("location.hash = '#step=12&seat=truth'")
    page.wait_for_function("document.getElementById('slider').value == 12")
    assert page.input_value("#seat") == "truth"


def test_a_seats_own_file_offers_only_that_seat(
    games: dict[str, Game], page: Page, tmp_path: Path
) -> None:
    game = games["cardgame"]
    path = tmp_path / "seat2.html"
    path.write_text(render_html(game.record, seat=2), encoding="utf-8")
    open_page(page, path)
    assert page.locator("#seat option").all_text_contents() == ["seat 2: 2:random3 (what it saw)"]
    assert "only what seat 2 saw" in page.inner_text("#notes")
    page.keyboard.press("End")
    check_step(page, game, game.last)
    assert page.locator(".player .hand").count() == 1
    assert page.locator("#player-2 .hand").count() == 1


def test_hostile_names_are_shown_as_text(games: dict[str, Game], page: Page) -> None:
    open_page(page, games["hostile"].page)
    assert f"seed {BIG_SEED}," in page.inner_text("#meta")  # to the last digit
    assert page.evaluate("document.title") != "owned"
    assert page.locator("img").count() == 0
    assert HOSTILE in page.inner_text("#meta")
    assert page.text_content("#player-0 .name") == f"0:{HOSTILE}"


def test_a_five_seat_mega_game_and_the_readme_picture(games: dict[str, Game], page: Page) -> None:
    game = games["mega5"]
    open_page(page, game.page)
    page.keyboard.press("End")
    check_step(page, game, game.last)
    picture(page, "replay-mega-5-seats")
    usa = games["usa"]
    open_page(page, usa.page, f"#step={usa.last * 2 // 3}")
    check_step(page, usa, usa.last * 2 // 3)
    picture(page, "replay-usa-midgame")


def tickets_now(game: Game, k: int, seat: int) -> tuple[set[int], set[int]]:
    """A seat's tickets at step ``k`` from the engine's state: completed so far, not yet."""
    state = game.states[k]
    if game.family.name == "card":
        return set(state.completed[seat]), set(state.tickets[seat])
    rules = game.ruleset
    done = {
        t
        for t in state.tickets[seat]
        if connected(rules.game_map, state.owned[seat], rules.tickets[t].a, rules.tickets[t].b)
    }
    return done, set(state.tickets[seat]) - done


def shown(page: Page, selector: str) -> set[int]:
    got = page.locator(selector).evaluate_all("n => n.map(e => +e.dataset.ticket)")
    return set(got)


@pytest.mark.parametrize("variant", ["usa1910", "cardgame"])
def test_the_end_says_why_and_the_chart_ends_at_the_final_totals(
    variant: str, games: dict[str, Game], browser: Browser
) -> None:
    """At 1280 and 1400 px wide, the last step shows every seat's tickets completed and failed
    (as the engine's final scoring has them) and the bonuses, the chart's last point is each
    seat's final total, and nothing runs off the page sideways."""
    game = games[variant]
    outcome = game.family.outcome(game.states[-1])
    errors: list[str] = []
    for width in (1280, 1400):
        context = browser.new_context(viewport={"width": width, "height": 900})
        page = context.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        open_page(page, game.page, f"#step={game.last}&seat=truth")
        for s in outcome.seats:
            done, missed = tickets_now(game, game.last, s.seat)
            why = f'#final .why[data-seat="{s.seat}"]'
            assert shown(page, f"{why} .ticket.done") == done
            assert shown(page, f"{why} .ticket.failed") == missed
            assert f"{s.total} points" in page.inner_text(why)
        finals = page.locator("#chart .series").evaluate_all(
            "n => n.map(e => +e.getAttribute('data-final'))"
        )
        assert finals == [s.total for s in sorted(outcome.seats, key=lambda s: s.seat)]
        # one point per step, then the final total
        assert (
            page.locator("#chart .series").first.evaluate(
                "e => e.getAttribute('points').trim().split(' ').length"
            )
            == game.last + 2
        )
        wide = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert wide[0] <= wide[1], f"the page is {wide[0]} px wide in a {wide[1]} px window"
        page.evaluate("document.getElementById('final').scrollIntoView()")
        screenshot(page, f"replay-why-{variant}-{width}")
        context.close()
        assert not errors


def test_a_seat_sees_its_own_tickets_as_they_go(games: dict[str, Game], page: Page) -> None:
    """In seat 1's eyes, its tickets are marked completed so far or not at each step (as the
    engine would score them now), and seat 0's hidden tickets are never marked."""
    game = games["mega"]  # seat 1 completes a ticket in this game
    open_page(page, game.page, "#seat=1")
    changed = 0
    for k in [*range(0, game.last, max(1, game.last // 12)), game.last]:
        slide(page, k)
        done, pending = tickets_now(game, k, 1)
        assert shown(page, "#player-1 .ticket.done") == done
        assert shown(page, "#player-1 .ticket.open") == pending
        assert page.locator("#player-0 .ticket, #player-2 .ticket").count() == 0
        changed += bool(done)
    assert changed  # the game completes a ticket somewhere
    picture(page, "replay-seat-tickets")


def test_a_bots_lines_show_at_their_step_as_text(
    games: dict[str, Game], page: Page, tmp_path: Path
) -> None:
    from tests.pages.test_viewer import chatty_record

    record = chatty_record({k: g.record for k, g in games.items()}, tmp_path)
    path = tmp_path / "chatty.html"
    path.write_text(render_html(record), encoding="utf-8")
    data = load_record(record)
    first = data["actions"][0]
    name = f"{first['seat']}:{data['seats'][first['seat']]['name']}"
    open_page(page, path, "#step=1&seat=truth")
    shown = page.locator("#now-lines li.output").all_text_contents()
    assert shown == [f"{name} > seat {first['seat']} at decision 0", f"{name} > {HOSTILE}"]
    assert page.evaluate("document.title") != "owned" and page.locator("img").count() == 0
    # in the game log, at each decision's entry
    entry = page.locator('#log .entry[data-step="1"] .output').all_text_contents()
    assert entry == shown
    assert page.locator("#log .output").count() == 2 * len(data["actions"]) + 2
    other = 1 - first["seat"]
    page.select_option("#seat", str(other))  # another seat's eyes: never that bot's lines
    assert page.locator("#now-lines li.output").count() == 0
    assert (
        page.locator("#log .output").count()
        == 2 * sum(1 for a in data["actions"] if a["seat"] == other) + 1
    )


#: Each city name's box and each car's corners, as the page drew them (SVG user units).
_NAMES_AND_CARS = """() => ({
  names: Array.from(document.querySelectorAll('#board .labels .city-name')).map(t => {
    const b = t.getBBox(); return [t.textContent, b.x, b.y, b.x + b.width, b.y + b.height]; }),
  cars: Array.from(document.querySelectorAll('#board .car')).map(
    c => c.getAttribute('points').split(' ').map(p => p.split(',').map(Number))),
})"""


def _box_meets_polygon(box: list[float], polygon: list[list[float]]) -> bool:
    """Whether a box and a convex polygon overlap (separating axes: none separates them)."""
    corners = [(box[0], box[1]), (box[2], box[1]), (box[2], box[3]), (box[0], box[3])]
    axes = [(1.0, 0.0), (0.0, 1.0)]
    for (x0, y0), (x1, y1) in zip(polygon, polygon[1:] + polygon[:1], strict=True):
        axes.append((y0 - y1, x1 - x0))
    for ax, ay in axes:
        a = [x * ax + y * ay for x, y in corners]
        b = [x * ax + y * ay for x, y in polygon]
        if max(a) <= min(b) or max(b) <= min(a):
            return False
    return True


@pytest.mark.parametrize("variant", ["usa", "newyork"])
def test_city_names_sit_off_the_tracks(variant: str, games: dict[str, Game], page: Page) -> None:
    """A name drawn over a track hides its cars under the name's halo: each name is placed
    where it crosses the fewest (board.js), and most cross none. Every name is in its own
    layer above the cities. (Drawn at each city's north-east, as before, most crossed one.)"""
    open_page(page, games[variant].page)
    drawn = page.evaluate(_NAMES_AND_CARS)
    assert len(drawn["names"]) == len(games[variant].ruleset.game_map.cities)
    # the box's edges hold the font's line spacing, not ink: 1-2 units in from them
    crossing = [
        name
        for name, x0, y0, x1, y1 in drawn["names"]
        if any(_box_meets_polygon([x0 + 1, y0 + 2, x1 - 1, y1 - 2], c) for c in drawn["cars"])
    ]
    assert len(crossing) <= len(drawn["names"]) // 2, crossing
