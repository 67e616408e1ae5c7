"""The ``ttr`` command: the top of the import graph, imported by nothing.

One module per command group, each declaring its own options beside its handler; ``main``
assembles them.
"""

from ttr_arena.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
