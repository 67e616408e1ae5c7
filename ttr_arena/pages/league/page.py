"""The league page as one self-contained HTML document (ttr_arena.pages.web.html_page): the served
page and the static export's ``index.html`` are this same document, only the embedded
``page`` settings differ (live: poll ``api/league.json``; snapshot: never fetch)."""

from __future__ import annotations

import time
from typing import Any

from ttr_arena.pages.web import asset, html_page

REFRESH_S = 2.0  #: how often the served page asks for new data while a tournament runs
#: ...and once every tournament of the store is finished or abandoned: a new one may begin
#: in the same store, so the page keeps looking, rarely.
IDLE_REFRESH_S = 30.0

_BODY = """<header class="league-top">
  <h1>TTR Arena league</h1>
  <div id="live" class="muted"></div>
</header>
<section id="tournaments"></section>
<div id="pools"></div>
<section id="recent"></section>
<section id="left-out"></section>
<p id="legend" class="muted"></p>"""


def page_html(
    league: dict[str, Any], *, live: bool, refresh_s: float = REFRESH_S, title: str | None = None
) -> str:
    """The page around ``league`` (:func:`ttr_arena.pages.league.data.league_json`). ``live``: it
    polls the server it came from; otherwise it is a snapshot and says of when."""
    settings = {
        "live": live,
        "refresh_s": refresh_s,
        "idle_refresh_s": max(refresh_s, IDLE_REFRESH_S),
        "api": "api/league.json",
        "snapshot_at": None if live else league.get("generated_at", time.time()),
    }
    return html_page(
        title or "TTR Arena league",
        _BODY,
        data={"page": settings, "league": league},
        scripts=(asset("league.js", "ttr_arena.pages.league"),),
        styles=(asset("league.css", "ttr_arena.pages.league"),),
    )
