"""What every command group of ``ttr`` shares: the one-line user error, the parser that reports
usage errors the same way, the checked argument types, the clock and sandbox options of the
commands that run bots, and the helpers that let a refused command leave nothing behind. Kept
apart so that each group module declares only its own commands and options."""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TypeAlias

from referee.games.board import RulesetError
from referee.games.registry import AnyRuleset, load
from referee.hosting.sandbox import (
    UNSANDBOXED_WARNING,
    Limits,
    SandboxConfig,
    SandboxError,
    require_available,
)

if TYPE_CHECKING:
    from collections.abc import Callable


class UserError(Exception):
    """Something the user can fix; printed as one line."""


def fail(message: str) -> NoReturn:
    """Print ``message`` as ``ttr: error: ...`` and exit with status 2."""
    print(f"ttr: error: {message}", file=sys.stderr)
    raise SystemExit(2)


class Parser(argparse.ArgumentParser):
    """argparse, with usage errors reported like every other user error: one line."""

    def error(self, message: str) -> NoReturn:
        fail(f"{message} (see `{self.prog} --help`)")


#: What ``add_subparsers`` of a :class:`Parser` returns: where a group adds its commands.
Subcommands: TypeAlias = "argparse._SubParsersAction[Parser]"


# argument types ------------------------------------------------------------------------------


def positive(text: str) -> int:
    """A whole number, at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def nonnegative(text: str) -> int:
    """A whole number, at least 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be at least 0, got {value}")
    return value


def positive_float(text: str) -> float:
    """A number more than 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, got {text}")
    return value


def int_in(low: int, high: int) -> Callable[[str], int]:
    """The type of a whole number from ``low`` to ``high``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be {low}-{high}, got {value}")
        return value

    return parse


def float_in(low: float, high: float) -> Callable[[str], float]:
    """The type of a number from ``low`` to ``high``."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not low <= value <= high:  # also refuses nan
            raise argparse.ArgumentTypeError(f"must be {low:g}-{high:g}, got {text}")
        return value

    return parse


def known_variant(text: str) -> str:
    """``--variant``, checked as the command line is read, so that a refused command has
    started and created nothing: a known variant, or name@version with the version this
    referee plays (``load`` checks both, for every caller)."""
    try:
        load(text)
    except RulesetError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def check_variant(text: str) -> None:
    """:func:`known_variant` for a ``--variant`` checked after the command line is read: a
    UserError naming the option."""
    try:
        known_variant(text)
    except argparse.ArgumentTypeError as e:
        raise UserError(f"--variant: {e}") from None


def load_ruleset(variant: str) -> AnyRuleset:
    """The ruleset of ``variant``; an unknown one is a UserError."""
    try:
        return load(variant)
    except RulesetError as e:
        raise UserError(str(e)) from None


def bot_label(name: str, version: str) -> str:
    """A bot as the commands print it: its name and version."""
    return f"{name} {version}".strip()


# clocks and the sandbox ----------------------------------------------------------------------

#: Clock bounds, checked before any bot starts. Under 10 ms per decision no bot answers over
#: gRPC in time, so every move would be a timeout; over 10 minutes per decision, or an hour of
#: bank per game, one stuck bot would hold a game (and a league night) longer than anyone
#: waits. Start-up: 0.1 s to 10 minutes (a JVM or a big model may be slow to load).
MOVE_MS = (10, 600_000)
BANK_MS = (0, 3_600_000)
STARTUP_S = (0.1, 600.0)


def add_clock_options(p: argparse.ArgumentParser) -> None:
    """The options of every command that runs games between bot processes."""
    p.add_argument(
        "--move-ms",
        type=int_in(*MOVE_MS),
        default=1000,
        help=f"time per decision, {MOVE_MS[0]}-{MOVE_MS[1]} (default 1000)",
    )
    p.add_argument(
        "--bank-ms",
        type=int_in(*BANK_MS),
        default=60000,
        help=f"time bank per game, {BANK_MS[0]}-{BANK_MS[1]} (default 60000)",
    )
    p.add_argument(
        "--startup-s",
        type=float_in(*STARTUP_S),
        default=10.0,
        help=f"how long a bot may take to become healthy, {STARTUP_S[0]:g}-{STARTUP_S[1]:g} "
        "(default 10)",
    )
    add_sandbox_options(p)


def add_sandbox_options(p: argparse.ArgumentParser, switch: bool = True) -> None:
    """The sandbox's limits (and, with ``switch``, ``--no-sandbox``)."""
    d = Limits()
    g = p.add_argument_group(
        "sandbox",
        "Every bot folder runs in a sandbox (docs/security.md): no network, its own processes "
        "and user, only its folder and runtime readable, these limits per bot.",
    )
    if switch:
        g.add_argument(
            "--no-sandbox",
            action="store_true",
            help="run bots as ordinary processes (debugging bots you trust; prints a warning)",
        )
    g.add_argument(
        "--memory-mb", type=positive, default=d.memory_mb, help=f"memory (default {d.memory_mb})"
    )
    g.add_argument(
        "--max-processes",
        type=positive,
        default=d.processes,
        help=f"processes and threads at once (default {d.processes})",
    )
    g.add_argument(
        "--cpu-s",
        type=positive,
        default=d.cpu_s,
        help=f"CPU seconds per process over its life (default {d.cpu_s})",
    )
    g.add_argument(
        "--open-files",
        type=positive,
        default=d.open_files,
        help=f"open files per process (default {d.open_files})",
    )
    g.add_argument(
        "--log-kb",
        type=positive,
        default=d.log_kb,
        help=f"stdout+stderr kept per bot and game, the rest dropped (default {d.log_kb})",
    )
    g.add_argument(
        "--scratch-mb",
        type=positive,
        default=d.scratch_mb,
        help=f"size of the bot's private writable /tmp (default {d.scratch_mb})",
    )
    g.add_argument(
        "--cpus",
        type=positive_float,
        default=d.cpus,
        help=f"CPU cores' worth of time at once, where cgroups allow (default {d.cpus:g})",
    )
    g.add_argument(
        "--build-mb",
        type=positive,
        default=SandboxConfig().build_mb,
        help="what a bot's build may leave in its folder: it builds in a copy of that size "
        f"(default {SandboxConfig().build_mb})",
    )
    g.add_argument(
        "--online-builds",
        action="store_true",
        help="let bot.toml builds reach the network (package registries). Off by default: a "
        "build is the entrant's code; the kits' packages are installed by the platform "
        "(tools/ensure_toolchains.sh) and read-only to builds and bots",
    )
    g.add_argument(
        "--read-only",
        action="append",
        default=[],
        metavar="PATH",
        help="also let bots read PATH (a runtime installed outside /usr); repeatable",
    )


def sandbox_of(args: argparse.Namespace, quiet: bool = False) -> SandboxConfig:
    """The sandbox the options ask for; a bad limit or a machine that cannot sandbox is a
    UserError naming it. ``--no-sandbox`` prints its warning here, once."""
    try:
        limits = Limits(
            memory_mb=args.memory_mb,
            processes=args.max_processes,
            cpu_s=args.cpu_s,
            open_files=args.open_files,
            log_kb=args.log_kb,
            scratch_mb=args.scratch_mb,
            cpus=args.cpus,
        )
    except ValueError as e:
        raise UserError(str(e)) from None
    missing = [p for p in args.read_only if not Path(p).exists()]
    if missing:
        raise UserError(f"--read-only {missing[0]}: no such file or directory")
    if args.no_sandbox:
        if not quiet:
            print(UNSANDBOXED_WARNING, file=sys.stderr)
        return SandboxConfig(enabled=False, limits=limits)
    try:
        require_available()
    except SandboxError as e:
        raise UserError(str(e)) from None
    return SandboxConfig(
        True,
        limits,
        tuple(str(Path(p).resolve()) for p in args.read_only),
        online_builds=args.online_builds,
        build_mb=args.build_mb,
    )


# outputs: checked before the work, removed when it is refused ---------------------------------


def first_missing(path: Path) -> Path | None:
    """The outermost folder of ``path`` that does not exist yet (what creating ``path`` would
    create first), or None if ``path`` exists."""
    if path.exists():
        return None
    while not path.parent.exists() and path.parent != path:
        path = path.parent
    return path


def check_output(path: Path, option: str, folder: bool = False) -> None:
    """Refuse, before any bot starts, an output path that could not be written after the
    game: a folder where a file goes (or the reverse), a parent that is a file, a place
    without write permission. Creates nothing: the probe file is gone when this returns."""
    if folder and path.exists() and not path.is_dir():
        raise UserError(f"{option} {path}: not a folder")
    if not folder and path.is_dir():
        raise UserError(f"{option} {path}: is a folder; give a file name")
    existing = path if folder and path.exists() else path.parent
    while not existing.exists() and existing.parent != existing:
        existing = existing.parent
    if not existing.is_dir():
        raise UserError(f"{option} {path}: {existing} is not a folder")
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as e:
        raise UserError(
            f"{option} {path}: cannot write in {existing} ({e.strerror or e})"
        ) from None


class Undo:
    """Removes the folders a command would leave behind when it is refused before its work
    begins (a bot that will not start): a refused command leaves nothing. Pushed first on
    the command's ExitStack, it runs last, once the bots are stopped; ``armed = False`` once
    the work has begun, after which everything written is kept."""

    def __init__(self, *paths: Path) -> None:
        self.created = [p for p in {first_missing(p) for p in paths} if p is not None]
        self.armed = True

    def __call__(self, exc_type: type[BaseException] | None, *_: object) -> bool:
        if self.armed and exc_type is not None:
            for path in self.created:
                shutil.rmtree(path, ignore_errors=True)
        return False  # the exception goes on


# stderr shared by threads --------------------------------------------------------------------

_say_lock = threading.Lock()


def say(line: str) -> None:
    """A whole line to stderr: bots' output threads and the game loop write at once."""
    with _say_lock:
        print(line, file=sys.stderr, flush=True)


def say_as(prefix: str) -> Callable[[str], None]:
    """:func:`say`, each line prefixed by ``prefix``."""
    return lambda line: say(prefix + line)
