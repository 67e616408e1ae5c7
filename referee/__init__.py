"""TTR Arena referee: the pure rules engine (``referee.games.board``) and, around it, the tools that
run games (self-play today; the gRPC referee process later)."""
