"""The competition server\x27s web app (issue 22): docs/server.md."""
