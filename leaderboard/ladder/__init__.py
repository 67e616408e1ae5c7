"""The competition ladder (issue 22): authors submit bot versions at any time; each is built in
the jail, validated, and then plays a ladder that never stops, matched by
:mod:`leaderboard.matchmaking` and rated by TrueSkill into one pool per variant and seat count.

``model`` is what the web layer (``ttr_arena.server``) sees; ``season`` reads the organiser's
season file; ``store`` keeps authors and versions beside the tournaments' results store (one
SQLite file: the league page and ``ttr leaderboard`` read the ladder as they read a tournament);
``service`` is the ladder itself: builds, validation games, matchmaking and the games, the
single writer of results.
"""
