"""Per-seat values as tuples: states are frozen, so a transition builds the one tuple that
changed. One spelling for both engines."""

from __future__ import annotations

from typing import TypeVar

T = TypeVar("T")


def replaced(values: tuple[T, ...], index: int, value: T) -> tuple[T, ...]:
    """``values`` with ``values[index]`` replaced by ``value``."""
    return (*values[:index], value, *values[index + 1 :])
