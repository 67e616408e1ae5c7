"""League nights: results that survive a killed run, and ratings recomputed from them.

- ``store``: the SQLite results store; a game is written once, whole, in one transaction,
  so a tournament killed at any moment resumes without losing or double-counting a game.
- ``ratings``: TrueSkill from the stored games in schedule order, one pool per variant and
  seat count; pure, so the table never depends on what was computed before.
- ``table``: the leaderboard as aligned plain text (terminal, CI log) and as JSON.
- ``runner`` (the driver) and ``worker`` (what a local process or a Ray actor, ``cluster``,
  does with one game); ``schedule``; ``progress`` (the live display).
"""
