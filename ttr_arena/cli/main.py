"""The ``ttr`` command line: the top parser and the one place where a command's errors become
exit statuses. User errors get one line naming the problem and exit status 2; no tracebacks
for things a user can fix. Each command group declares its own commands, options and
handlers in its module; this one only assembles them, in the order ``ttr --help`` lists them."""

from __future__ import annotations

import argparse
import os
import select
import sys

from ttr_arena.cli import bots, leaderboard, play, replay, server, submit, tournament
from ttr_arena.cli.options import Parser, UserError, fail


def build_parser() -> argparse.ArgumentParser:
    """The whole ``ttr`` parser; each command's handler is its ``func`` default."""
    parser = Parser(
        prog="ttr",
        description="TTR Arena: the referee, bot tools and league tools for Ticket to Ride.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    play.register(sub)  # variants, selfplay, play
    bots.register(sub)  # check, new-bot, sandbox
    replay.register(sub)
    tournament.register(sub)
    leaderboard.register(sub)
    server.register(sub)  # the competition server, for its organiser
    submit.register(sub)  # submit, submissions: a competitor's side of the competition server
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run ``ttr`` with ``argv`` (default: the process's arguments); the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        result: int = args.func(args)
        sys.stdout.flush()  # here, where a closed pipe can still be told apart
    except UserError as e:
        fail(str(e))
    except KeyboardInterrupt:
        print("ttr: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        if not _stdout_reader_gone():
            raise  # some other pipe (a bot's): a real error
        # `ttr ... | head`: the reader has what it wanted. Stop quietly, as replay show does:
        # stdout goes to /dev/null so that Python's own flush at exit cannot fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return result


def _stdout_reader_gone() -> bool:
    """Whether stdout is a pipe nobody reads any more (poll reports an error on it)."""
    try:
        poll = select.poll()
        poll.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poll.poll(0))
    except (OSError, ValueError, AttributeError):  # no fileno (captured), no poll (Windows)
        return False
