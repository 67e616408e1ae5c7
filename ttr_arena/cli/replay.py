"""``ttr replay verify|show|view|ask``: the commands that read game records. Each replays the
record through the engine; the replay, text and page code is imported only when one of them
runs, so that building the parser stays cheap."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ttr_arena.cli.options import (
    STARTUP_S,
    Subcommands,
    UserError,
    add_sandbox_options,
    float_in,
    nonnegative,
    positive,
    positive_float,
    sandbox_of,
)


def register(sub: Subcommands) -> None:
    """Add ``replay`` and its actions ``verify``, ``show``, ``view`` and ``ask``, in that
    order."""
    p = sub.add_parser("replay", help="game records", description="Work with game records.")
    replay_sub = p.add_subparsers(dest="replay_command", metavar="ACTION", required=True)
    _add_verify(replay_sub)
    _add_show(replay_sub)
    _add_view(replay_sub)
    _add_ask(replay_sub)


# verify --------------------------------------------------------------------------------------


def _add_verify(sub: Subcommands) -> None:
    p = sub.add_parser(
        "verify",
        help="replay records through the engine and compare events and final scores",
        description=(
            "Replay each record's actions from the recorded seed and compare every event and "
            "the final scores. One line per record: OK, or the first difference with the "
            "record's field and both values (e.g. 'turn 37, final scores: "
            "outcome.seats[2].total: record 112, replay 110'). Exit 0 when every record "
            "replays exactly, 1 when any differs, 2 when a file is not a game record. "
            "The format: docs/records.md."
        ),
    )
    p.add_argument(
        "records", metavar="RECORD", type=Path, nargs="+", help="game records (JSON files)"
    )
    p.set_defaults(func=cmd_replay_verify)


def cmd_replay_verify(args: argparse.Namespace) -> int:
    """One line per record; exit 2 if any file is no record (after checking the others),
    else 1 if any record differs from its replay."""
    from referee.replay import RecordError, verify

    unreadable = differs = 0
    for record in args.records:
        try:
            difference = verify(record)
        except RecordError as e:
            if len(args.records) == 1:
                raise UserError(str(e)) from None
            print(f"ttr: error: {e}", file=sys.stderr)
            unreadable += 1
            continue
        if difference is not None:
            print(f"ttr: {record}: DIFFERS at {difference}", file=sys.stderr)
            differs += 1
        else:
            print(f"OK: {record} replays exactly")
    if len(args.records) > 1:
        ok = len(args.records) - unreadable - differs
        print(
            f"{len(args.records)} records: {ok} replay exactly, {differs} differ, "
            f"{unreadable} unreadable"
        )
    if unreadable:
        raise SystemExit(2)
    return 1 if differs else 0


# show ----------------------------------------------------------------------------------------


def _add_show(sub: Subcommands) -> None:
    p = sub.add_parser(
        "show",
        help="print a recorded game turn by turn, or what one seat saw",
        description=(
            "Replay the record through the engine and print the game turn by turn with "
            "names: who did what, the face-up row, running scores, every fault with the rule "
            "and message the bot was sent, and the final score table. With --seat N, only "
            "what seat N saw: its view (hand, tickets, offered tickets, the others' public "
            "facts) at each of its decisions and the events as they reached it. Turns are "
            "numbered as in the record (the first turn is turn 0; setup is shown before it)."
        ),
    )
    p.add_argument("record", metavar="RECORD", type=Path, help="the game record (JSON)")
    p.add_argument(
        "--seat",
        type=nonnegative,
        default=None,
        metavar="N",
        help="show only what seat N saw (0-based)",
    )
    p.add_argument(
        "--from",
        dest="first",
        type=nonnegative,
        default=None,
        metavar="TURN",
        help="start at this turn (default: the setup)",
    )
    p.add_argument(
        "--to",
        dest="last",
        type=nonnegative,
        default=None,
        metavar="TURN",
        help="stop after this turn (default: the end, then the final scores)",
    )
    p.set_defaults(func=cmd_replay_show)


def cmd_replay_show(args: argparse.Namespace) -> int:
    from referee.replay import RecordError
    from ttr_arena.pages.show import ShowError, show

    try:
        lines = show(args.record, seat=args.seat, first=args.first, last=args.last)
        for line in lines:
            print(line)
        sys.stdout.flush()
    except (RecordError, ShowError) as e:
        raise UserError(str(e)) from None
    except BrokenPipeError:
        # The reader (`| head`) has gone: stop quietly. Python would report the failed flush
        # of stdout at exit, so stdout goes to /dev/null first.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


# view ----------------------------------------------------------------------------------------


def _add_view(sub: Subcommands) -> None:
    p = sub.add_parser(
        "view",
        help="write a recorded game as one HTML page that replays it (board, hands, scores)",
        description=(
            "Replay the record through the engine and write one self-contained HTML file "
            "(no network needed to open it) that replays the game: the board with the claimed "
            "routes (or, in the card game, the hands, Railyards and On-the-Track stacks), each "
            "step's events in words, every seat's score as a chart, the faults where they "
            "happened, and the final scores. Step with the buttons, the slider or the keys "
            "(Left/Right, Home/End, Space plays). A perspective selector shows the whole truth "
            "or exactly what one seat saw (its engine view at each step). With --seat N the "
            "file holds only seat N's perspective: nothing hidden from that seat is in it, so "
            "it can be shared. The page: docs/viewer.md."
        ),
    )
    p.add_argument("record", metavar="RECORD", type=Path, help="the game record (JSON)")
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="FILE.html",
        help="where to write the page (default: the record's path with .html)",
    )
    p.add_argument(
        "--seat",
        type=nonnegative,
        default=None,
        metavar="N",
        help="write only what seat N saw (0-based); default: the truth and every seat",
    )
    p.add_argument("--open", action="store_true", help="open the page in the system's web browser")
    p.set_defaults(func=cmd_replay_view)


def cmd_replay_view(args: argparse.Namespace) -> int:
    """Write the replay page (atomically: a refused or failed command leaves no file), then
    say where it is; --open hands it to the system's browser, if there is one."""
    import webbrowser  # here: only --open needs it, and it loads shlex

    from referee.match import write_text_atomic
    from referee.replay import RecordError
    from ttr_arena.pages.show import ShowError
    from ttr_arena.pages.viewer import render_html

    record: Path = args.record
    out: Path = args.out if args.out is not None else record.with_suffix(".html")
    if out.resolve() == record.resolve():
        raise UserError(f"--out {out}: that is the record itself (give another --out)")
    try:
        page = render_html(record, seat=args.seat)
    except (RecordError, ShowError) as e:
        raise UserError(str(e)) from None
    try:
        write_text_atomic(out, page)
    except OSError as e:
        raise UserError(f"--out {out}: cannot write it: {e.strerror or e}") from None
    uri = out.resolve().as_uri()
    print(f"wrote {out} ({out.stat().st_size:,} bytes)")
    print(uri)
    if args.open:
        try:
            opened = webbrowser.open(uri)
        except webbrowser.Error:
            opened = False
        if not opened:
            print(f"ttr: no browser could be opened; open {uri} yourself", file=sys.stderr)
    return 0


# ask -----------------------------------------------------------------------------------------


def _turn(text: str) -> int | str:
    if text == "setup":
        return text
    try:
        return nonnegative(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is neither a turn number (0, 1, ...) nor 'setup'"
        ) from None


def _add_ask(sub: Subcommands) -> None:
    p = sub.add_parser(
        "ask",
        help="send one recorded decision's request to a bot again and judge its answer",
        description=(
            "Rebuild, from the record, the exact request a seat received at one decision (its "
            "view, the legal actions, the events since its previous request, the referee's "
            "request id) and send it to BOT: a bot folder, started fresh (sandboxed unless "
            "--no-sandbox), or the address of a bot you run yourself, e.g. under a debugger "
            "(host:port or unix:/path). The bot gets StartGame for that seat first, as in the "
            "game. The clock is off: no deadline (Ctrl-C stops waiting), unless --timeout. "
            "Prints the seat's view, the bot's answer in names and whether the referee would "
            "accept it, and what the seat played in the record. Turns are numbered as "
            "`ttr replay show` prints them (the first turn is 0; 'setup' is the ticket choice "
            "dealt before it); a turn with two decisions of the seat (a second card, tickets "
            "to keep) takes --nth 2 for the second. Exit 0 when the answer is legal, 1 when "
            "the referee would reject it."
        ),
    )
    p.add_argument("record", metavar="RECORD", type=Path, help="the game record (JSON)")
    p.add_argument("bot", metavar="BOT", help="a bot folder, a sample bot's name, or an address")
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument(
        "--turn",
        type=_turn,
        default=None,
        metavar="T",
        help="the turn as `ttr replay show` numbers it, or 'setup' (with --seat)",
    )
    where.add_argument(
        "--decision",
        type=nonnegative,
        default=None,
        metavar="N",
        help="the record's decision index instead (as `ttr replay verify` names it)",
    )
    p.add_argument("--seat", type=nonnegative, default=None, metavar="S", help="the seat (0-based)")
    p.add_argument(
        "--nth",
        type=positive,
        default=1,
        metavar="K",
        help="the seat's K-th decision in that turn (default 1)",
    )
    p.add_argument(
        "--timeout",
        type=positive_float,
        default=None,
        metavar="S",
        help="give up on each call after S seconds (default: wait as long as it takes)",
    )
    p.add_argument(
        "--startup-s",
        type=float_in(*STARTUP_S),
        default=10.0,
        help="how long a bot folder may take to become healthy (default 10)",
    )
    add_sandbox_options(p)
    p.set_defaults(func=cmd_replay_ask)


def cmd_replay_ask(args: argparse.Namespace) -> int:
    from referee.hosting.ask import AskError, ask
    from referee.hosting.config import LaunchError
    from referee.hosting.launcher import is_address, launch
    from referee.hosting.sandbox import SandboxConfig
    from referee.replay import (
        Diverged,
        NoSuchDecision,
        RecordError,
        action_words,
        ask_request,
        find_decision,
        load_record,
        start,
    )
    from ttr_arena.pages.show import (
        BotLines,
        ShowError,
        default_line,
        output_lines,
        seat_names,
        shown,
    )

    try:
        data = load_record(args.record)
        game = start(data, args.record)
        if args.turn is not None:
            if args.seat is None:
                raise UserError("--turn needs --seat")
            decision = find_decision(data, args.seat, args.turn, args.nth)
        else:
            decision = args.decision
        asked = ask_request(game, data, args.record, decision)
    except (RecordError, NoSuchDecision, ShowError) as e:
        raise UserError(str(e)) from None
    except Diverged as e:
        raise UserError(f"{args.record}: cannot replay it that far: {e}") from None
    seat = asked.seat
    if args.seat is not None and args.seat != seat:
        raise UserError(f"--decision {decision} is seat {seat}'s, not seat {args.seat}'s")
    family, state = game.family, asked.step.before
    names, _ = seat_names(data, game.start.num_seats)
    describe = family.describer(game.ruleset, names)
    phase = state.phase.name.lower().replace("_", " ")
    # the game id is the record's, in the request id too: escaped, as every string from a record
    print(
        f"{game.ruleset.ident}, game {shown(data.get('game_id', '?'))}: decision {decision}, "
        f"turn {state.turn} ({phase}), seat {names[seat]}"
    )
    print(
        f"request {shown(asked.request.request_id)}: {len(asked.legal)} legal action(s), "
        f"{len(asked.request.events)} event(s) since the seat's previous request"
    )
    for line in describe.view_lines(family.view(state, seat)):
        print(f"  | {line}")
    # a bot at an address runs as its author started it: no sandbox to check or set up
    sandbox = SandboxConfig(enabled=False) if is_address(args.bot) else sandbox_of(args)
    try:
        with launch(args.bot, startup_s=args.startup_s, sandbox=sandbox) as bot:
            refusal = bot.config.refusal(game.ruleset.name) if bot.config is not None else None
            if refusal is not None:
                raise UserError(refusal)
            print(
                f"asking {bot.name} at {bot.address} (no deadline: Ctrl-C stops)"
                if args.timeout is None
                else f"asking {bot.name} at {bot.address}"
            )
            bot.log_to(None)  # from here on its lines are this decision's (none: an address)
            answer = ask(asked, bot.address, args.timeout)
            wrote = bot.take_lines()
    except LaunchError as e:
        raise UserError(str(e)) from None
    except AskError as e:
        raise UserError(f"{args.bot}: {e}") from None
    reply, verdict = answer.reply, answer.verdict
    if wrote:
        print("the bot wrote:")
        print("\n".join(output_lines(wrote, "> ")))
    if reply is not None and reply.WhichOneof("answer") == "legal_action_index":
        said = f"legal_action_index {reply.legal_action_index}"
    elif reply is not None and reply.WhichOneof("answer") == "action":
        said = "a full action"
    else:
        said = "no action"
    if verdict.accepted:
        print(f"answer ({said}): {action_words(game, state, verdict.action, names)}")
        print("legal: the referee accepts it")
    else:
        print(f"answer ({said}): illegal ({verdict.rule}): {verdict.message}")
    recorded = asked.step.entry
    played = action_words(game, state, asked.step.action, names)
    default = recorded.get("default")
    print(
        f"recorded: {played}" + (f" ({default_line(str(default), names[seat])})" if default else "")
    )
    if recorded.get("lines"):
        print("it wrote in the game:")
        print("\n".join(output_lines(BotLines().take(seat, recorded["lines"]), "> ")))
    same = verdict.accepted and verdict.action == asked.step.action
    print("same as recorded" if same else "differs from the record")
    return 0 if verdict.accepted else 1
