"""What a column's conversion is: its Connect schema and a function from pgoutput's text to the JSON value."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

Fn = Callable[[str], Any]


class ColumnLike(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def enum_labels(self) -> str | None: ...

    @property
    def type_name(self) -> str: ...

    @property
    def base_type_name(self) -> str: ...

    @property
    def type_modifier(self) -> int: ...


@dataclass(frozen=True, slots=True)
class Modes:
    decimal: str = "precise"  # decimal.handling.mode
    time: str = "adaptive"  # time.precision.mode
    binary: str = "bytes"  # binary.handling.mode
    interval: str = "numeric"  # interval.handling.mode
    hstore: str = "json"  # hstore.handling.mode
    money_digits: int = 2  # money.fraction.digits
    include_unknown: bool = False  # include.unknown.datatypes
    snapshot: bool = False  # Debezium reads snapshots through JDBC, which renders a few values differently
    # PostgreSQL 12+ prints real and double precision as their shortest text; older servers print 9 and 18
    # significant digits (extra_float_digits=3, as PgJDBC sets it), so their texts are never taken as Java's.
    shortest_floats: bool = True


@dataclass(frozen=True, slots=True)
class Converter:
    schema: dict[str, Any]  # Connect schema of the field, without optional/default/field
    fn: Fn | None  # None: the pgoutput text is the value
    dropped: bool = False  # Debezium leaves the column out of schema and values
    # For a writer taking values rather than JsonConverter's form (envelope/native.py): (`fn` as built, the
    # value from the text, that value back to `fn`'s form). Void once a column rule replaced `fn`.
    native: tuple[Fn, Callable[[str], Any], Callable[[Any], Any]] | None = None


DROPPED = Converter({}, None, True)


def connect_schema(type_: str, name: str | None = None, version: int | None = None, **params: str) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": type_}
    if name:
        schema["name"] = name
    if version is not None:
        schema["version"] = version
    if params:
        schema["parameters"] = params
    return schema


def items_schema(schema: dict[str, Any], optional: bool) -> dict[str, Any]:
    """An element schema as an array's items, in JsonConverter's member order."""
    items = {**schema}
    # JsonConverter writes a struct's fields and a map's keys and values before `optional`.
    nested: dict[str, Any] = {k: items.pop(k) for k in ("fields", "keys", "values") if k in items}
    return {"type": items.pop("type"), **nested, "optional": optional, **items}


def in_ms(f: Fn) -> Fn:
    """`f`'s microseconds as milliseconds (floor, like Java's)."""
    return lambda t: f(t) // 1000


def with_special(fn: Fn, values: dict[str, Any]) -> Fn:
    """`fn`, except for the texts in `values` (PostgreSQL's infinities), which give their own value."""
    def convert(t: str) -> Any:
        special = values.get(t)
        return fn(t) if special is None else special

    return convert
