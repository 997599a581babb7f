"""Functions compiled from generated source (a table's row, key and Avro writers), one code object per text.

A table's generated functions are compiled when its schema is first met: about 0.15 ms per function, ten of
them for an Avro table, measured. Tables of one shape (partitions published on their own, one schema per
tenant) and every table's source block give the same source text, so its code object is kept and only
`exec`uted again, into the new function's own scope: what differs between two tables (converters, spavro's
writers, bytes) is in the scope, never in the text.
"""

from __future__ import annotations

from types import CodeType
from typing import Any

_CODE: dict[tuple[str, str], CodeType] = {}  # (source, filename) -> its code object (at most 1024 kept)


def define(source: str, filename: str, scope: dict[str, Any], name: str) -> Any:
    """Run `source` (compiled under `filename`, as tracebacks show it) in `scope`; the object it names `name`."""
    key = (source, filename)
    code = _CODE.get(key)
    if code is None:
        if len(_CODE) >= 1024:
            _CODE.clear()
        code = _CODE[key] = compile(source, filename, "exec")
    exec(code, scope)
    return scope[name]
