"""What the browser pages share: the replay viewer (``ttr replay view``) and the league page
(``ttr leaderboard serve`` / ``html``) are both self-contained HTML made here, so each page is
one file with its code, its style and its data inside it (no network at view time, no CDN).

The shared assets live in ``ttr_arena/pages/web/assets/``: ``base.css`` (the look and the seat
colours, one palette for every page) and ``chart.js`` (the line chart with optional bands that
draws a game's scores and a bot's rating). A page's own script and style sit beside its Python
code and are passed in by name.
"""

from __future__ import annotations

import html
import json
from importlib import resources
from typing import Any

#: One colour per seat, in seat order (up to the 6 seats any variant has): the claimed routes,
#: the score lines and the seat labels all use these. Chosen to stay apart from each other and
#: from the map's route colours (red, orange, yellow, green, blue, pink, black, white, gray:
#: they draw unclaimed tracks and cards), and readable on white: teal, magenta, brown,
#: indigo, olive, maroon (tests/pages/test_web_shared.py holds the distances).
SEAT_COLOURS = ("#00a6a6", "#b5008a", "#8c564b", "#5b2c9f", "#8f9a00", "#7a0019")


def asset(name: str, package: str = "ttr_arena.pages.web") -> str:
    """The text of ``assets/NAME`` in ``package`` (installed with it as package data)."""
    return resources.files(package).joinpath("assets", name).read_text(encoding="utf-8")


def script_json(data: Any) -> str:
    """``data`` as JSON that is safe inside ``<script type="application/json">``: a string
    holding ``</script>`` or ``<!--`` (a bot's name, a fault message) cannot end the element or
    open a comment, because every ``<``, ``>`` and ``&`` is written as a JSON escape."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return (
        text.replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def html_page(
    title: str,
    body: str,
    *,
    data: Any,
    scripts: tuple[str, ...] = (),
    styles: tuple[str, ...] = (),
) -> str:
    """A whole HTML document: ``body`` (trusted markup, made by this project), the shared
    style and chart script, then ``styles`` and ``scripts`` (the page's own asset texts), and
    ``data`` as ``<script id="ttr-data" type="application/json">`` for the scripts to read
    with ``TTR.data()``. The title is escaped; nothing is fetched when the page opens."""
    css = "\n".join((asset("base.css"), *styles))
    js = "\n".join((asset("chart.js"), *scripts))
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n"
        f"<style>\n{css}\n</style>\n</head>\n<body>\n{body}\n"
        f'<script id="ttr-data" type="application/json">{script_json(data)}</script>\n'
        f"<script>\n{js}\n</script>\n</body>\n</html>\n"
    )
