"""Errors raised by the rules engine.

Like python-chess, two kinds: a value that is not an action at all (``MalformedActionError``),
and a well-formed action that the rules forbid here (``IllegalActionError``). Both carry a
short ``rule`` id (e.g. ``claim.double_route``) so the referee can name the broken rule on the
wire and in the game record.
"""

from __future__ import annotations


class RulesError(Exception):
    """Base class: ``rule`` is a stable id, the message is for people."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(f"{message} [{rule}]")
        self.rule = rule
        self.message = message


class MalformedActionError(RulesError):
    """The value does not describe any action (unknown type, index out of range, bad payment)."""


class IllegalActionError(RulesError):
    """A real action, but the rules forbid it in this state."""
