"""``ttr check``, ``ttr new-bot`` and ``ttr sandbox``: the commands a bot author uses before a
league night: make a bot, check that it plays legally and in time, see how this machine
sandboxes it. The launcher, the starter kits and the compliance kit are imported only when
their command runs, so that building the parser stays cheap."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from referee.games.registry import variant_name, variants
from referee.hosting.sandbox import report as sandbox_report
from ttr_arena.cli.options import (
    Subcommands,
    UserError,
    add_clock_options,
    add_sandbox_options,
    bot_label,
    known_variant,
    load_ruleset,
    positive,
    sandbox_of,
)

if TYPE_CHECKING:
    from referee.games.registry import AnyRuleset
    from referee.hosting.launcher import LaunchedBot


def register(sub: Subcommands) -> None:
    """Add ``check``, ``new-bot`` and ``sandbox``, in that order."""
    _add_check(sub)
    _add_new_bot(sub)
    _add_sandbox(sub)


# check ---------------------------------------------------------------------------------------


def _add_check(sub: Subcommands) -> None:
    p = sub.add_parser(
        "check",
        help="check that a bot folder plays every variant it declares legally and in time",
        description=(
            "Start the bot in BOT_DIR as `ttr play` would (sandboxed unless --no-sandbox), "
            "then, for each variant it plays (bot.toml's `variants` list; every variant when "
            "it has none), play GAMES games with the bot at one seat (rotating) and random "
            "players at the others, calling it exactly as the referee does, under the same "
            "clocks (--move-ms per decision, time beyond it from a --bank-ms bank per game). "
            "Any failed or late call, wrong request id or illegal answer is a fault. Prints, "
            "per variant, the games and decisions played, the faults by kind with their first "
            "messages, and the slowest answer against the clock; then stops the bot. Exit 0 "
            "when every variant passed, 1 on any fault or a bot that cannot be started (with "
            "its stderr), 2 for a usage error."
        ),
    )
    p.add_argument(
        "bot",
        metavar="BOT_DIR",
        help="the bot folder (with its bot.toml), or a sample bot's name: random, greedy, "
        "planner (a folder of that name here wins)",
    )
    p.add_argument("--games", type=positive, default=2, help="games per variant (default 2)")
    p.add_argument(
        "--variant",
        type=known_variant,
        action="append",
        default=None,
        metavar="VARIANT",
        help="check only this variant (repeatable; default: every variant the bot declares; "
        f"available: {', '.join(variants())})",
    )
    p.add_argument(
        "--players",
        type=positive,
        default=2,
        help="seats per game, the bot's one of them (default 2)",
    )
    p.add_argument(
        "--seed", type=int, default=1, help="seed of the first game; game i uses seed+i (default 1)"
    )
    add_clock_options(p)
    p.set_defaults(func=cmd_check)


def cmd_check(args: argparse.Namespace) -> int:
    """Start a bot folder, run the compliance kit for each variant it plays, stop it; exit 1
    on any fault (or a bot that cannot be started), printing why."""
    from referee.hosting.config import LaunchError
    from referee.hosting.launcher import launch, load_bot_config, resolve_bot

    folder = Path(resolve_bot(args.bot))
    if folder.is_file():
        raise UserError(f"{folder} is a file, not a bot folder (a folder holding bot.toml)")
    if not folder.is_dir():
        raise UserError(f"{folder}: not a bot folder (no such directory)")
    if not (folder / "bot.toml").is_file():
        raise UserError(f"{folder}: not a bot folder (no bot.toml in it)")
    sandbox = sandbox_of(args)
    try:
        config = load_bot_config(folder, sandbox)
    except LaunchError as e:
        print(f"FAIL: {e}")
        return 1
    declared = config.variants or variants()
    for name in config.variants:
        try:
            known_variant(name)
        except argparse.ArgumentTypeError as e:
            print(f"FAIL: {folder / 'bot.toml'}: key `variants`: {e}")
            return 1
    chosen = args.variant or list(declared)
    names = {variant_name(v) for v in declared}
    for name in chosen:
        if variant_name(name) not in names:
            raise UserError(
                f"--variant {name}: {folder / 'bot.toml'} declares only {', '.join(declared)}"
            )
    rulesets = [load_ruleset(name) for name in chosen]
    for ruleset in rulesets:
        if not ruleset.min_players <= args.players <= ruleset.max_players:
            raise UserError(
                f"--players {args.players}: {ruleset.name} is for "
                f"{ruleset.min_players}-{ruleset.max_players} players"
            )
    label = bot_label(config.name, config.version)
    print(
        f"ttr check: {label} ({folder}): {args.games} game(s) per variant, {args.players} "
        f"seats, {args.move_ms} ms per move + {args.bank_ms} ms bank per game",
        flush=True,
    )
    try:
        with launch(folder, startup_s=args.startup_s, sandbox=sandbox) as bot:
            failed = _check_each(args, bot, rulesets)
    except LaunchError as e:
        print(f"FAIL: {e}")
        return 1
    if failed:
        print(f"FAIL: {label}: {', '.join(failed)}")
        return 1
    print(f"PASS: {label}: {', '.join(r.ident for r in rulesets)}")
    return 0


def _check_each(
    args: argparse.Namespace, bot: LaunchedBot, rulesets: list[AnyRuleset]
) -> list[str]:
    """Run the compliance kit on the started bot for each ruleset in turn, printing each
    report; the idents that failed (or, once the bot has died, were not checked)."""
    from sdk.compliance import check_bot

    failed: list[str] = []
    for i, ruleset in enumerate(rulesets):
        report = check_bot(
            bot.address,
            args.games,
            ruleset.ident,
            args.players,
            args.seed,
            args.move_ms,
            args.bank_ms,
        )
        faults = f"{len(report.faults)} fault(s)" if report.faults else "no fault"
        print(
            f"{ruleset.ident}: {'PASS' if report.ok else 'FAIL'}: {report.games} "
            f"game(s), {report.decisions} decisions, {faults}"
        )
        for line in report.details():
            print(f"  {line}")
        if not report.ok:
            failed.append(ruleset.ident)
        # death() waits a moment for a bot that is still running: only when it is gone
        death = bot.death() if report.gone else ""
        if death:
            tail = bot.stderr_tail()
            print(f"  the bot {death}" + ("; the end of its stderr:" if tail else ""))
            for line in tail.splitlines():
                print(f"  | {line}")
            rest = [r.ident for r in rulesets[i + 1 :]]
            if rest:
                print(f"not checked: {', '.join(rest)}")
                failed.extend(rest)
            break
    return failed


# new-bot -------------------------------------------------------------------------------------


def _add_new_bot(sub: Subcommands) -> None:
    p = sub.add_parser(
        "new-bot",
        help="make a new bot folder from a starter kit (python, node, go, cpp)",
        description=(
            "Make the folder PARENT/NAME holding a bot that plays uniformly random legal "
            "moves in every variant and logs what it does: bot.toml, the source, a README on "
            "building, playing and testing it and, for Node, Go and C++, a copy of the "
            "contract (proto/) and a bot.toml `build` the launcher runs before the first "
            "game. `ttr play NAME random` plays it at once against the random sample bot."
        ),
    )
    p.add_argument("name", metavar="NAME", help="the bot's name and folder name")
    p.add_argument(
        "--lang",
        choices=["python", "node", "go", "cpp"],
        default="python",
        help="language of the starter kit (default python)",
    )
    p.add_argument(
        "--dir",
        type=Path,
        default=Path(),
        metavar="PARENT",
        help="folder to create it in (default: the current one)",
    )
    p.set_defaults(func=cmd_new_bot)


def cmd_new_bot(args: argparse.Namespace) -> int:
    from referee.hosting.newbot import LANGUAGES, NewBotError, missing_tools, new_bot

    try:
        folder = new_bot(args.name, args.lang, args.dir)
    except NewBotError as e:
        raise UserError(str(e)) from None
    except OSError as e:
        raise UserError(f"cannot create the bot folder: {e.strerror or e}") from None
    language = LANGUAGES[args.lang]
    print(f"created {folder}/: a {language.title} bot named {args.name!r}")
    if language.needs_proto:
        print(f"  it builds before its first game (bot.toml `build`; log {folder}/.ttr-build.log)")
    print(f"  play it:  ttr play {folder} random")
    print(f"  read:     {folder}/README.md")
    missing = missing_tools(args.lang)
    if missing:
        print(
            f"ttr: warning: not found on PATH: {', '.join(missing)}; install them first "
            f"(Debian: tools/ensure_toolchains.sh; see {folder}/README.md)",
            file=sys.stderr,
        )
    return 0


# sandbox -------------------------------------------------------------------------------------


def _add_sandbox(sub: Subcommands) -> None:
    p = sub.add_parser(
        "sandbox",
        help="check that bots can be sandboxed on this machine, and how",
        description=(
            "Try the bot sandbox on this machine and say how each defence is enforced here "
            "(namespaces, the bots' user, which limits a cgroup or only rlimits can set). "
            "Exit 0 when bots can be sandboxed, 1 when not (with the reason). The limit "
            "options show the figures a league night would use."
        ),
    )
    add_sandbox_options(p, switch=False)
    p.set_defaults(func=cmd_sandbox)


def cmd_sandbox(args: argparse.Namespace) -> int:
    args.no_sandbox = True  # only the limits are wanted; the check is report()'s own
    ok, lines = sandbox_report(sandbox_of(args, quiet=True).limits)
    for line in lines:
        print(line)
    return 0 if ok else 1
