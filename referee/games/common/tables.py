"""Strict reading of data files (TOML rulesets, JSON maps and tickets), shared by both
families' loaders: every key is asked for by name and typed, and a key nobody asked for is an
error, so a typo in a data file names itself instead of being silently ignored."""

from __future__ import annotations

from typing import Any


class RulesetError(ValueError):
    """A map, ticket or ruleset file is malformed; the message names the file and the key."""


class Table:
    """A TOML/JSON table read key by key; ``done()`` rejects any key nobody asked for."""

    def __init__(self, data: object, where: str) -> None:
        if not isinstance(data, dict):
            raise RulesetError(f"{where}: expected a table, got {type(data).__name__}")
        self._data: dict[str, Any] = data
        self._where = where
        self._seen: set[str] = set()

    def _get(self, key: str) -> Any:
        if key not in self._data:
            raise RulesetError(f"{self._where}: missing key {key!r}")
        self._seen.add(key)
        return self._data[key]

    def get_str(self, key: str) -> str:
        value = self._get(key)
        if not isinstance(value, str) or not value:
            raise RulesetError(f"{self._where}.{key}: expected a non-empty string, got {value!r}")
        return value

    def get_int(self, key: str, lo: int, hi: int) -> int:
        value = self._get(key)
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise RulesetError(
                f"{self._where}.{key}: expected an integer in [{lo}, {hi}], got {value!r}"
            )
        return value

    def get_float(self, key: str) -> float:
        value = self._get(key)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise RulesetError(f"{self._where}.{key}: expected a number, got {value!r}")
        return float(value)

    def get_optional_int(self, key: str) -> int | None:
        value = self._get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise RulesetError(f"{self._where}.{key}: expected an integer or null, got {value!r}")
        return value

    def get_bool(self, key: str, default: bool) -> bool:
        if key not in self._data:
            return default
        value = self._get(key)
        if not isinstance(value, bool):
            raise RulesetError(f"{self._where}.{key}: expected true or false, got {value!r}")
        return value

    def has(self, key: str) -> bool:
        return key in self._data

    def get_list(self, key: str) -> list[Any]:
        value = self._get(key)
        if not isinstance(value, list):
            raise RulesetError(f"{self._where}.{key}: expected a list, got {value!r}")
        return value

    def get_table(self, key: str) -> Table:
        return Table(self._get(key), f"{self._where}.{key}")

    def done(self) -> None:
        extra = sorted(set(self._data) - self._seen)
        if extra:
            raise RulesetError(f"{self._where}: unknown key(s) {', '.join(map(repr, extra))}")
