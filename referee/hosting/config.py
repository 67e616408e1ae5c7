"""A bot folder's ``bot.toml``: what it says, read and checked before anything runs::

    name = "greedy"
    version = "1.0"
    author = "..."
    description = "..."
    command = ["{python}", "bot.py"]   # run with the folder as cwd; {python} = our interpreter
    build = ["make"]                   # optional; run first when the folder changed (build.py)
    variants = ["usa", "cardgame"]     # optional: the variants it plays (default: every one)

Its own module so that the build (which needs the config) and the launcher (which needs the
build) both import it and not each other.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from referee.games.registry import variant_name

#: a build: argvs run in order in the bot folder
BuildSteps = tuple[tuple[str, ...], ...]


class LaunchError(Exception):
    """A bot could not be entered; the message is one line (plus an stderr tail) for users."""


class BotConfigError(LaunchError):
    """A ``bot.toml`` that is missing or invalid; the message names the file and the key."""


@dataclass(frozen=True, slots=True)
class BotConfig:
    folder: Path
    name: str
    version: str
    author: str
    description: str
    command: tuple[str, ...]
    #: argvs run before launching when the folder changed (referee/hosting/build.py)
    build: tuple[tuple[str, ...], ...] = ()
    #: the variants the bot plays (``variants = ["usa", "cardgame"]``); empty: every variant
    variants: tuple[str, ...] = ()

    def plays(self, variant: str) -> bool:
        """Whether the bot declares ``variant`` (a name, ``name@version`` compared by name),
        so a game is refused before it starts rather than lost to a bot that cannot play it."""
        name = variant_name(variant)
        return not self.variants or any(variant_name(v) == name for v in self.variants)

    def refusal(self, variant: str) -> str | None:
        """Why the bot may not play ``variant`` (one line), or None when it may."""
        if self.plays(variant):
            return None
        return (
            f"{self.folder / 'bot.toml'}: bot {self.name!r} declares variants "
            f"{', '.join(self.variants)}, not {variant_name(variant)}"
        )


def parse_build(value: object, path: Path) -> BuildSteps:
    """bot.toml's ``build``: absent, one argv (a list of strings) or a list of argvs."""
    if value is None:
        return ()

    def argv(item: object) -> tuple[str, ...] | None:
        if isinstance(item, list) and item and all(isinstance(a, str) and a for a in item):
            return tuple(item)
        return None

    one = argv(value)
    if one is not None:
        return (one,)
    if isinstance(value, list) and value:
        steps = [argv(item) for item in value]
        if all(s is not None for s in steps):
            return tuple(s for s in steps if s is not None)
    raise BotConfigError(
        f"{path}: key `build` must be a command (a non-empty list of non-empty strings, e.g. "
        '["make"]) or a non-empty list of such commands'
    )


def read_bot_config(folder: str | Path) -> BotConfig:
    """Read and validate ``folder/bot.toml``; ``BotConfigError`` naming the file and the key.
    Building the folder is the launcher's part (``launcher.load_bot_config``)."""
    folder = Path(folder)
    path = folder / "bot.toml"
    if folder.is_file():
        raise BotConfigError(f"{folder} is a file, not a bot folder (a folder holding bot.toml)")
    if not folder.is_dir():
        raise BotConfigError(f"{folder}: not a bot folder (no such directory)")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BotConfigError(f"{path}: no bot.toml in the bot folder") from None
    except OSError as e:
        raise BotConfigError(f"{path}: cannot read it: {e.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise BotConfigError(f"{path}: not valid TOML: {e}") from None

    def text(key: str, required: bool) -> str:
        value = data.get(key)
        if value is None:
            if required:
                raise BotConfigError(f"{path}: key `{key}` is missing")
            return ""
        if not isinstance(value, str) or (required and not value.strip()):
            raise BotConfigError(f"{path}: key `{key}` must be a non-empty string")
        bad = next((c for c in value if not c.isprintable()), None)
        if bad is not None:
            # Names and versions are printed on terminals and pages: a control character
            # there could clear a screen or forge a leaderboard row.
            raise BotConfigError(
                f"{path}: key `{key}` holds the control character {bad!r} at "
                f"{value.index(bad)}; use printable characters only"
            )
        return value

    name = text("name", True)
    version = text("version", True)
    author = text("author", False)
    description = text("description", False)
    command = data.get("command")
    if command is None:
        raise BotConfigError(f"{path}: key `command` is missing")
    if (
        not isinstance(command, list)
        or not command
        or not all(isinstance(a, str) and a for a in command)
    ):
        raise BotConfigError(
            f"{path}: key `command` must be a non-empty list of non-empty strings "
            '(e.g. ["{python}", "bot.py"])'
        )
    build = parse_build(data.get("build"), path)
    plays = data.get("variants", ())  # absent: every variant
    if "variants" in data and (
        not isinstance(plays, list) or not plays or not all(isinstance(v, str) and v for v in plays)
    ):
        raise BotConfigError(
            f"{path}: key `variants` must be a non-empty list of variant names "
            '(e.g. ["usa", "cardgame"])'
        )
    config = BotConfig(
        folder, name, version, author, description, tuple(command), build, tuple(plays)
    )
    return config
