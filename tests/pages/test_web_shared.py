"""The pages' shared plumbing (referee/web): embedded data survives hostile text, and the
shared chart draws what it is given, in a real browser (tests/browser.py)."""

from __future__ import annotations

import json
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
