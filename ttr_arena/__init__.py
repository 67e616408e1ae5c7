"""The top of TTR Arena: what people look at (``pages``) and the ``ttr`` command (``cli``).

Named after the distribution (``ttr-arena``) so that, once installed, it cannot clash with
another project's ``cli`` or ``pages``; nothing below it imports it (the import contract in
pyproject.toml, ``[tool.importlinter]``).
"""
