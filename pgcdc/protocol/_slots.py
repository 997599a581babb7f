"""The slot setters of a frozen slotted dataclass, to fill its slots directly.

A dataclass with `frozen=True` sets each field in `__init__` through `object.__setattr__`; a constructor that
calls the slot descriptors instead makes the same instance for a third to a half of the cost, which counts for
an object made once per transaction (capture/position.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from typing import Any


def slot_setters(cls: type) -> tuple[Callable[[Any, Any], None], ...]:
    return tuple(cls.__dict__[f.name].__set__ for f in fields(cls))
