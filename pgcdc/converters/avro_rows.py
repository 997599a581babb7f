"""A row as the capture holds it -> the datum spavro writes, for the Avro parts path (avro_events.py).

The capture's row is JsonConverter's form before serialization: a double is an `orjson.Fragment` holding Java's
text of it (so the JSON shows JDK 17's digits), bytes are base64 text. The general path serializes the row and
parses it back (`orjson.loads(orjson.dumps(row))`) before `avro_schema.datum_function`; here one function,
compiled per table version, reads each column once into a new dict: doubles and floats from their text, bytes
decoded, everything else (ints, strings, booleans, nulls) as it is. A column of any other shape (an array, a map, a
struct such as a variable-scale decimal or a geometry) goes the general way on its own. The row is not changed,
so a caller can always fall back to the general path (which it does on any error).
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import orjson

from pgcdc.converters.avro_schema import datum_function

_dumps = orjson.dumps
_loads = orjson.loads


def _bytes(x: Any) -> Any:
    return None if x is None else base64.b64decode(x)


def _general(fn: Callable[[Any], Any] | None) -> Callable[[Any], Any]:
    """A column of another shape: serialized and parsed, then the general datum function."""
    if fn is None:
        return lambda x: None if x is None else _loads(_dumps(x))
    return lambda x: None if x is None else fn(_loads(_dumps(x)))


_PLAIN = {"int8", "int16", "int32", "int64", "boolean", "string"}


def row_datum(struct: dict[str, Any]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """`struct` (a row's Connect schema, JsonConverter's JSON form) -> f(row) -> a new dict, the datum."""
    scope: dict[str, Any] = {"B": _bytes, "L": _loads, "J": _dumps, "S": str}
    items, doubles = [], []
    for i, f in enumerate(struct["fields"]):
        name, kind = f["field"], f["type"]
        read = f"v[{name!r}]"
        if kind in _PLAIN:
            items.append(f"{name!r}: {read}")
        elif kind in ("float", "double"):
            # All of a row's doubles read in one serialize-and-parse: Java's text becomes a float, and
            # "NaN"/"Infinity"/"-Infinity" a string, made a float here.
            items.append(f"{name!r}: (x if type(x := d[{len(doubles)}]) is not S else float(x))")
            doubles.append(read)
        elif kind == "bytes":
            items.append(f"{name!r}: B({read})")
        else:
            scope[f"g{i}"] = _general(datum_function(f, tuples=False))
            items.append(f"{name!r}: g{i}({read})")
    head = f"    d = L(J([{', '.join(doubles)}]))\n" if doubles else ""
    source = "def row(v):\n" + head + "    return {" + ", ".join(items) + "}\n"
    exec(compile(source, "<pgcdc avro row>", "exec"), scope)  # names enter only as repr() literals
    row: Callable[[dict[str, Any]], dict[str, Any]] = scope["row"]
    return row
