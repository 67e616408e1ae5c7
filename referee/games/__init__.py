"""The games: every rules family as a pure package, and the registry that names them.

``common/`` holds what both families share (cards, the shared actions, events and phases,
errors, memo, table parsing, the wire codec helpers); ``board/`` (the five board variants) and
``card/`` (Ticket to Ride: The Card Game) are one package each: engine, ruleset and data, wire
codec, text describer and score columns. ``registry`` binds each into a :class:`Family` that
everything above (the referee loop, records, the SDK, tournaments, pages) goes through.

Nothing here opens a socket, reads a clock or touches global randomness
(tests/games/test_purity.py); the engines themselves do not even import protobuf: only each
family's ``wire`` module (and the ``family`` record built on it) does.
"""
