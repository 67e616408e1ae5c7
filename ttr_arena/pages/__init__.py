"""Pages: the text replay (``show``), the HTML replay (``viewer``), the league page and its
live server (``league``), and their shared plumbing (``web``). The CLI and any server import
them from here; they read the games, records and the store below, and write nothing but the
pages they are asked for."""
