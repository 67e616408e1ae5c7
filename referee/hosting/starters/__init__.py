"""Starter kits for ``ttr new-bot``: one folder of templates per language (package data).

Each folder is copied as it is into the new bot's folder, with ``{{name}}`` replaced by the
bot's name in the text files and ``gitignore`` renamed ``.gitignore`` (a dot file would be
left out of the package data). The Node, Go and C++ kits also get a copy of the contract,
``proto/ttr/v1/*.proto``, made by :mod:`referee.hosting.newbot` from the repository's ``proto/``, so
the new folder builds and runs wherever it is copied.
"""
