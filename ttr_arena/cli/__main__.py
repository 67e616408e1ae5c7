"""``python -m ttr_arena.cli``: the ``ttr`` command without its installed script."""

import sys

from ttr_arena.cli.main import main

sys.exit(main())
