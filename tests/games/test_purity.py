"""The rules engine is pure (STYLE.md): importing it pulls in no network, process or async
machinery, its source calls no clock, no global RNG, no print/open/environment, and no file in
referee/ branches on a variant's name ("a variant's name appears only in its data file and one
registry, never in an ``if variant == ...`` inside the rules").

The source checks work on the syntax tree (docstrings and comments may say anything), and each
checker is first shown to catch a planted violation, so a check that silently stopped working
would fail here.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from referee.games.board import available_variants

ROOT = Path(__file__).resolve().parents[2]
GAMES = ROOT / "referee" / "games"  #: both rules families, what they share, the registry

# ---------------------------------------------------------------------------------------------
# What importing the engine loads

#: Modules (and their submodules) that mean network, processes, async or logging I/O. The
#: standard library itself imports ``time``, ``datetime`` and ``threading`` (through
#: ``zipfile`` and ``tempfile``, used by ``importlib.resources``), so those are checked in the
#: source below rather than here.
FORBIDDEN_MODULES = (
    "grpc",
    "google.protobuf",
    "socket",
    "ssl",
    "select",
    "selectors",
    "asyncio",
    "subprocess",
    "multiprocessing",
    "concurrent",
    "http",
    "urllib.request",
    "sqlite3",
    "logging",
    "signal",
)

#: The engine must not reach out to the project's outer layers either: the generated wire code
#: (``ttr``, in gen/python), the bot SDK, the league, tools.
FORBIDDEN_OWN = ("ttr", "sdk", "leaderboard", "tools", "bench")


ENGINES = ("referee.games.board", "referee.games.card")
#: What an engine may import of the project: its own package and the families' shared kernel.
PURE = ("referee.games.common", *ENGINES)


def outside_the_engine(modules: list[str]) -> list[str]:
    """Modules of the referee package other than the rules engines and their shared kernel
    (the match loop, hosting, the registry with its wire codecs)."""
    return [
        m
        for m in modules
        if m.startswith("referee.")
        and m != "referee.games"
        and not any(m == e or m.startswith(e + ".") for e in PURE)
    ]


def imported_by(statement: str) -> list[str]:
    code = f"import sys, json\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    modules: list[str] = json.loads(done.stdout)
    return modules


def offending(modules: list[str], forbidden: tuple[str, ...]) -> list[str]:
    return [m for m in modules if any(m == f or m.startswith(f + ".") for f in forbidden)]


@pytest.mark.parametrize("engine", ENGINES)
def test_importing_the_engine_imports_no_io_machinery(engine: str) -> None:
    modules = imported_by(f"import {engine}")
    assert f"{engine}.engine" in modules  # the import did happen
    assert offending(modules, FORBIDDEN_MODULES) == []
    assert offending(modules, FORBIDDEN_OWN) == []
    assert outside_the_engine(modules) == []


def test_the_import_check_can_see_a_forbidden_module() -> None:
    modules = imported_by("import referee.games.board, socket")
    assert "socket" in offending(modules, FORBIDDEN_MODULES)


def test_the_import_check_can_see_the_outer_layers() -> None:
    modules = imported_by("import referee.games.board, referee.match")
    assert "referee.match" in outside_the_engine(modules)


def test_a_whole_game_imports_nothing_more() -> None:
    # Playing and scoring a game must not import anything lazily either.
    modules = imported_by(
        "from referee.games.board import *\n"
        "import random\n"
        "r = load_ruleset('usa'); s = new_game(r, 3, 1); rng = random.Random(0)\n"
        "while not s.is_over:\n"
        "    a = legal_actions(s); s = apply(s, a[rng.randrange(len(a))])\n"
        "    view(s, 0); view_json(s, 0)\n"
        "outcome(s)"
    )
    assert offending(modules, FORBIDDEN_MODULES) == []
    assert offending(modules, FORBIDDEN_OWN) == []
    assert outside_the_engine(modules) == []


# ---------------------------------------------------------------------------------------------
# What the engine's source calls

FORBIDDEN_IMPORTS = frozenset(
    {
        "time",
        "datetime",
        "os",
        "sys",
        "io",
        "socket",
        "grpc",
        "asyncio",
        "subprocess",
        "threading",
        "logging",
        "secrets",
        "uuid",
        "urllib",
        "http",
        "shutil",
        "tempfile",
    }
)
#: Builtins that do I/O or run code.
FORBIDDEN_BUILTINS = frozenset(
    {"open", "print", "input", "exec", "eval", "breakpoint", "__import__"}
)
#: Attribute names that read the clock or the environment wherever they appear.
FORBIDDEN_ATTRS = frozenset(
    {
        "environ",
        "getenv",
        "now",
        "utcnow",
        "today",
        "time",
        "perf_counter",
        "monotonic",
        "time_ns",
        "urandom",
        "stdin",
        "stdout",
        "stderr",
    }
)
#: File access methods, allowed only where the ruleset loader reads data files.
FILE_ATTRS = frozenset(
    {
        "open",
        "read_text",
        "read_bytes",
        "write_text",
        "write_bytes",
        "iterdir",
        "is_file",
        "exists",
        "glob",
        "rglob",
        "mkdir",
        "unlink",
    }
)
#: (file, top-level function) pairs allowed to read files: the packaged data and a ruleset
#: file a map designer names (referee/games/board/ruleset.py).
FILE_ALLOW = frozenset(
    {
        ("ruleset.py", "_load_packaged_json"),
        ("ruleset.py", "available_variants"),
        ("ruleset.py", "load_ruleset"),
        ("ruleset.py", "load_ruleset_file"),
        ("ruleset.py", "available_card_variants"),
        ("ruleset.py", "load_card_ruleset"),  # referee/games/card/ruleset.py
        ("ruleset.py", "load_card_ruleset_file"),
    }
)


class _Purity(ast.NodeVisitor):
    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.function: str | None = None  # the enclosing top-level function
        self.problems: list[str] = []

    def flag(self, node: ast.AST, what: str) -> None:
        self.problems.append(f"{self.filename}:{getattr(node, 'lineno', '?')}: {what}")

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        outer = self.function
        if outer is None:
            self.function = node.name
        self.generic_visit(node)
        self.function = outer

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name.split(".")[0] in FORBIDDEN_IMPORTS:
                self.flag(node, f"import {alias.name}")

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = (node.module or "").split(".")[0]
        if module in FORBIDDEN_IMPORTS:
            self.flag(node, f"from {node.module} import ...")
        if module == "random":
            for alias in node.names:
                if alias.name != "Random":
                    self.flag(node, f"from random import {alias.name} (module-level RNG)")

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_BUILTINS:
            self.flag(node, f"{node.func.id}(...)")
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.value, ast.Name) and node.value.id == "random" and node.attr != "Random":
            self.flag(node, f"random.{node.attr} (module-level RNG)")
        if node.attr in FORBIDDEN_ATTRS:
            self.flag(node, f".{node.attr}")
        if node.attr in FILE_ATTRS and (self.filename, self.function) not in FILE_ALLOW:
            self.flag(node, f".{node.attr} outside the ruleset loader (in {self.function})")
        self.generic_visit(node)


def purity_problems(source: str, filename: str) -> list[str]:
    checker = _Purity(filename)
    checker.visit(ast.parse(source, filename))
    return checker.problems


def rules_sources() -> list[Path]:
    files = sorted(GAMES.rglob("*.py"))
    for family in ("board", "card"):
        names = {p.name for p in files if p.parent.name == family}
        assert names >= {"engine.py", "scoring.py", "ruleset.py", "view.py", "wire.py"}
    return files


@pytest.mark.parametrize("path", rules_sources(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_engine_source_has_no_clock_rng_or_io(path: Path) -> None:
    assert purity_problems(path.read_text(encoding="utf-8"), path.name) == []


PLANTED = [
    ("import time\n", "import time"),
    ("from datetime import datetime\n", "from datetime"),
    ("import os\nx = os.environ['HOME']\n", "import os"),
    ("def f(env):\n    return env.environ\n", ".environ"),
    ("def f():\n    print('hi')\n", "print"),
    ("def f(p):\n    return open(p)\n", "open"),
    ("import random\ndef f(x):\n    random.shuffle(x)\n", "random.shuffle"),
    ("import random\ndef f():\n    return random.random()\n", "random.random"),
    ("import random\nrandom.seed(1)\n", "random.seed"),
    ("from random import choice\n", "choice"),
    ("def f(clock):\n    return clock.now()\n", ".now"),
    ("def f(p):\n    return p.read_text()\n", ".read_text"),
]


@pytest.mark.parametrize(("source", "mentions"), PLANTED)
def test_the_purity_check_catches_planted_violations(source: str, mentions: str) -> None:
    problems = purity_problems(source, "planted.py")
    assert problems and any(mentions in p for p in problems), problems


def test_the_purity_check_allows_a_private_rng_and_the_loader() -> None:
    ok = "import random\ndef f(seed):\n    return random.Random(seed).random()\n"
    assert purity_problems(ok, "engine.py") == []
    loader = "def load_ruleset(name, path):\n    return path.read_text()\n"
    assert purity_problems(loader, "ruleset.py") == []
    # The same read anywhere else is flagged.
    assert purity_problems(loader, "engine.py") != []


# ---------------------------------------------------------------------------------------------
# No branching on a variant's name anywhere in referee/

#: The packaged variants and other Ticket to Ride variant names a later change might add.
VARIANT_NAMES = frozenset(
    {v.lower() for v in available_variants()}
    | {
        "usa",
        "usa1910",
        "1910",
        "mega",
        "mega_game",
        "big_cities",
        "bigcities",
        "europe",
        "newyork",
        "new_york",
        "nordic",
        "nordic_countries",
        "switzerland",
        "germany",
        "india",
        "asia",
        "africa",
        "netherlands",
        "pennsylvania",
        "uk",
        "france",
        "japan",
        "italy",
    }
)
#: Names whose comparison with any string literal is a branch on the variant.
VARIANT_HOLDERS = frozenset({"variant", "variant_name", "ruleset_name", "map_name", "ident"})
#: Objects whose ``.name`` is a variant's name.
NAMED_OBJECTS = frozenset({"ruleset", "rules", "game_map", "map", "r", "state"})


def _is_str(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _strings(node: ast.AST) -> list[str]:
    """String literals directly compared: a constant, or the items of a tuple/list/set."""
    if _is_str(node):
        assert isinstance(node, ast.Constant)
        return [str(node.value)]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [str(e.value) for e in node.elts if isinstance(e, ast.Constant) and _is_str(e)]
    return []


def _holds_variant(node: ast.AST) -> bool:
    if isinstance(node, ast.Name):
        return node.id in VARIANT_HOLDERS
    if isinstance(node, ast.Attribute):
        if node.attr in VARIANT_HOLDERS:
            return True
        if node.attr == "name":
            inner = node.value
            if isinstance(inner, ast.Attribute):
                return inner.attr in NAMED_OBJECTS or inner.attr == "ruleset"
            return isinstance(inner, ast.Name) and inner.id in NAMED_OBJECTS
    return False


def variant_branches(source: str, filename: str) -> list[str]:
    problems: list[str] = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            literals = [s for side in sides for s in _strings(side)]
            if any(s.lower() in VARIANT_NAMES for s in literals):
                problems.append(f"{filename}:{node.lineno}: compares with a variant name")
            elif literals and any(_holds_variant(side) for side in sides):
                problems.append(f"{filename}:{node.lineno}: compares a variant with a literal")
        elif isinstance(node, ast.match_case):
            for pattern in ast.walk(node.pattern):
                if isinstance(pattern, ast.MatchValue) and any(
                    s.lower() in VARIANT_NAMES for s in _strings(pattern.value)
                ):
                    problems.append(f"{filename}:{pattern.lineno}: matches a variant name")
    # The plain-text form too, in case the code is built so the tree walk misses it.
    for number, line in enumerate(source.splitlines(), 1):
        code = line.split("#", 1)[0]
        if re.search(r"\bvariant\w*\s*(==|!=)|(==|!=)\s*\w*\.?variant\b", code):
            problems.append(f"{filename}:{number}: `variant ==` in the text")
    return problems


#: every package of the platform: none may branch on a variant's name, not only the engines
PACKAGES = ("referee", "sdk", "leaderboard", "ttr_arena")


def platform_sources() -> list[Path]:
    files = sorted(f for package in PACKAGES for f in (ROOT / package).rglob("*.py"))
    assert any(p.name == "engine.py" for p in files) and any(p.name == "main.py" for p in files)
    return files


@pytest.mark.parametrize("path", platform_sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_branching_on_a_variant_name(path: Path) -> None:
    assert variant_branches(path.read_text(encoding="utf-8"), path.name) == []


PLANTED_BRANCHES = [
    'if ruleset.name == "usa":\n    pass\n',
    'if state.ruleset.name != "europe":\n    pass\n',
    'if variant == "anything":\n    pass\n',
    'if name in ("usa", "usa1910"):\n    pass\n',
    'x = 1 if self.rules.name == "nordic" else 2\n',
    'match name:\n    case "usa":\n        pass\n',
    'if "usa" == variant_name:\n    pass\n',
]


@pytest.mark.parametrize("source", PLANTED_BRANCHES)
def test_the_variant_check_catches_planted_branches(source: str) -> None:
    assert variant_branches(source, "planted.py") != []


def test_the_variant_check_allows_other_names() -> None:
    # cards.py compares a colour name with "gray"; a CLI default names the default variant.
    ok = 'if name == "gray":\n    pass\nparser.add_argument("--variant", default="usa")\n'
    assert variant_branches(ok, "ok.py") == []
