"""TTR Arena's referee, in three layers (docs/architecture.md):

- ``referee.games``: the rules, pure: both rules families, what they share, the registry;
- ``referee.match``, ``referee.replay``, ``referee.selfplay``: one game over gRPC (clocks,
  faults, records), replaying a record, timed random self-play;
- ``referee.hosting``: bot folders (``bot.toml``, builds, the launcher, the sandbox, kits).

Each imports only the layers below it (``[tool.importlinter]`` in pyproject.toml).
"""
