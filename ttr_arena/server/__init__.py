"""The competition server's web app (issue 22): the ladder's API and author pages, with the
league page and replays beside them; docs/server.md."""
