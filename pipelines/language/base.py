"""What every rule set shares: the never-matching pattern and :func:`blank`, which turns a rule
set into its "off" twin (every pattern never matches, every word list is empty)."""

from __future__ import annotations

import dataclasses
import re
from typing import Any, TypeVar

#: A pattern that matches nothing: what every pattern becomes with the language rules off.
NEVER: re.Pattern[str] = re.compile(r"(?!)")
#: The same for a pattern that is handed to Neo4j as a string (Java regex syntax).
NEVER_SOURCE = "(?!)"

T = TypeVar("T")


def _blank_value(value: Any) -> Any:
    if isinstance(value, re.Pattern):
        return NEVER
    if isinstance(value, str):
        return NEVER_SOURCE  # a rule set's only strings are regex sources handed to Neo4j
    if isinstance(value, frozenset):
        return frozenset()
    if isinstance(value, tuple):
        return ()
    if isinstance(value, dict):
        return {}
    raise TypeError(f"no blank for a rule of type {type(value).__name__}")


def blank(rules: T) -> T:
    """``rules`` (a dataclass of patterns, regex sources, word sets, tuples and dicts) with every
    rule emptied: patterns never match, sets, tuples and dicts are empty."""
    assert dataclasses.is_dataclass(rules) and not isinstance(rules, type)
    changes = {f.name: _blank_value(getattr(rules, f.name)) for f in dataclasses.fields(rules)}
    return dataclasses.replace(rules, **changes)
