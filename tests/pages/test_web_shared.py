"""The pages' shared plumbing (referee/web): embedded data survives hostile text, and the
shared chart draws what it is given, in a real browser (tests/browser.py)."""

from __future__ import annotations

import itertools
import json
import math
import re
from pathlib import Path
from typing import TYPE_CHECKING

from ttr_arena.pages.web import SEAT_COLOURS, asset, html_page, script_json

if TYPE_CHECKING:
    from playwright.sync_api import Page

HOSTILE = "</script><script>document.title='owned'</script><!-- & \u2028"


def test_script_json_has_no_markup_characters() -> None:
    text = script_json({"name": HOSTILE})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"name": HOSTILE}


def test_seat_colours_are_the_same_in_python_css_and_script() -> None:
    css, js = asset("base.css"), asset("chart.js")
    for i, colour in enumerate(SEAT_COLOURS):
        assert f"--seat{i}: {colour};" in css
        assert f'"{colour}"' in js


def test_hostile_data_reaches_the_script_intact(page: Page, tmp_path: Path) -> None:
    body = '<h1 id="out"></h1><svg id="chart"></svg>'
    script = """
      var d = TTR.data();
      document.getElementById("out").textContent = d.name;
      TTR.chart(document.getElementById("chart"), {series: [
        {name: "a", points: [[0, 1], [1, 3], [2, 2]], band: [[0, 0, 2], [1, 2, 4], [2, 1, 3]]},
        {name: "b", points: [[0, 0], [2, 5]]}]}).cursor(1);
    """
    path = tmp_path / "p.html"
    path.write_text(
        html_page("t", body, data={"name": HOSTILE}, scripts=(script,)), encoding="utf-8"
    )
    page.goto(path.as_uri())
    assert page.text_content("#out") == HOSTILE
    assert page.title() == "t"  # the hostile name ran no script
    assert page.locator("#chart polyline.series").count() == 2
    assert page.locator("#chart polygon.band").count() == 1
    assert page.get_attribute("#chart line.cursor", "visibility") == "visible"


def _rgb(colour: str) -> tuple[int, int, int]:
    """``#rrggbb`` or ``rgb(r, g, b)`` (what a browser computes) as numbers."""
    if colour.startswith("#"):
        return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)
    r, g, b = (int(v) for v in re.findall(r"\d+", colour)[:3])
    return r, g, b


def _route_colours() -> list[str]:
    """Every colour the replay draws the board's tracks and cards in (board.js, viewer.css)."""
    js = asset("board.js")
    css = asset("viewer.css", "ttr_arena.pages.viewer")
    listed = re.search(r"ROUTE_COLOURS = \[([^\]]*)\]", js)
    assert listed is not None
    colours = re.findall(r"#[0-9a-f]{6}", listed.group(1))
    colours += re.findall(r'GRAY = "(#[0-9a-f]{6})"', js)
    colours += re.findall(r"\.card\.k\d \{ background: (#[0-9a-f]{6})", css)
    assert len(colours) >= 9 + 8  # 8 route colours and gray, the 8 coloured cards
    return colours


def test_seat_colours_are_apart_from_each_other_and_from_every_route_colour() -> None:
    """A claimed track is filled in its seat's colour: no seat colour may read as one of the
    board's own colours (red, orange, yellow, green, blue, pink, black, white, gray)."""
    routes = _route_colours()
    for colour in SEAT_COLOURS:
        assert colour not in routes
        nearest = min(math.dist(_rgb(colour), _rgb(r)) for r in routes)
        assert nearest >= 70, f"seat colour {colour} is {nearest:.0f} from a route colour"
    for a, b in itertools.combinations(SEAT_COLOURS, 2):
        assert math.dist(_rgb(a), _rgb(b)) >= 90, (a, b)


def test_twelve_bots_get_twelve_distinct_colours(page: Page, tmp_path: Path) -> None:
    """The league page's colours() gives bot i ``TTR.botColour(i)``: twelve colours far apart,
    and bots past twelve still their own (seven bots once shared one blue)."""
    assert "TTR.botColour(i)" in asset("league.js", "ttr_arena.pages.league")
    script = """
      document.body.setAttribute("data-colours", JSON.stringify(
        Array.from({length: 20}, function (_, i) {
          var probe = document.createElement("span");
          probe.style.color = TTR.botColour(i);
          document.body.appendChild(probe);
          return getComputedStyle(probe).color;
        })));
    """
    path = tmp_path / "p.html"
    path.write_text(html_page("t", "", data={}, scripts=(script,)), encoding="utf-8")
    page.goto(path.as_uri())
    colours = [_rgb(c) for c in json.loads(page.get_attribute("body", "data-colours") or "[]")]
    assert len(set(colours)) == 20
    twelve = colours[:12]
    closest = min(math.dist(a, b) for a, b in itertools.combinations(twelve, 2))
    assert closest >= 60, f"two of the first twelve bots' colours are {closest:.0f} apart"
