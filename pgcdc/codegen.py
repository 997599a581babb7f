"""Functions compiled from generated source (a table's row, key and Avro writers), one code object per text.

A table's generated functions are compiled when its schema is first met: about 0.15 ms per function, ten of
them for an Avro table, measured. Tables of one shape (partitions published on their own, one schema per
tenant) and every table's source block give the same source text, so its code object is kept and only
`exec`uted again, into the new function's own scope: what differs between two tables (converters, spavro's
writers, bytes) is in the scope, never in the text.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from types import CodeType
from typing import Any, TypeVar

T = TypeVar("T")

_CODE: dict[Hashable, CodeType] = {}  # (source, filename) -> its code object (at most 1024 kept)


def kept(store: dict[Hashable, T], key: Hashable, limit: int, make: Callable[[], T]) -> T:
    """`store[key]`, made by `make()` the first time; a store grown to `limit` entries is emptied first."""
    value = store.get(key)
    if value is None:
        if len(store) >= limit:
            store.clear()
        value = store[key] = make()
    return value


def define(source: str, filename: str, scope: dict[str, Any], name: str) -> Any:
    """Run `source` (compiled under `filename`, as tracebacks show it) in `scope`; the object it names `name`."""
    exec(kept(_CODE, (source, filename), 1024, lambda: compile(source, filename, "exec")), scope)
    return scope[name]
