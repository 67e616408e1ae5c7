"""The league page: ``ttr leaderboard serve`` (live, over HTTP) and ``ttr leaderboard html``
(a static folder). One JSON value (:mod:`ttr_arena.pages.league.data`) feeds both; the page itself
(:mod:`ttr_arena.pages.league.page`, ``assets/league.js`` and ``league.css``) draws it with the
shared helpers of :mod:`ttr_arena.pages.web`. docs/league-page.md describes what it shows.

Submodules are imported by the commands that need them, so that ``import leaderboard`` stays
free of the HTTP server.
"""

from __future__ import annotations


class PageError(Exception):
    """The page cannot be served or written (one line for the user: a port in use, an
    ``--out`` folder that is not ours)."""
