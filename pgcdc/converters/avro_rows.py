"""A row as the capture holds it -> the datum spavro writes, for the Avro parts path (avro_events.py).

The capture's row is JsonConverter's form before serialization: a double is an `orjson.Fragment` holding Java's
text of it (so the JSON shows JDK 17's digits), bytes are base64 text; a table whose every event takes the parts
path has its doubles and floats as Python floats and its decimals and bytea as bytes instead
(envelope/native.py). The general path serializes the row and parses it back (`orjson.loads(orjson.dumps(row))`)
before `avro_schema.datum_function`; here one function, compiled per table version, reads each column once into
a new dict: a float or bytes as they are, a double's text parsed, base64 decoded, everything else (ints,
strings, booleans, nulls) as it is; the arrays of doubles or floats in one serialize-and-parse. A column of any
other shape (another array, a map, a struct such as a variable-scale decimal or a geometry) goes the general way
on its own. The row is not changed, so a caller can always fall back to the general path (which it does on any
error).
"""

from __future__ import annotations

from binascii import a2b_base64
from collections.abc import Callable, Collection
from typing import Any

import orjson

from pgcdc.codegen import define
from pgcdc.converters.avro_schema import datum_function

_dumps = orjson.dumps
_loads = orjson.loads


def _bytes(x: Any) -> Any:
    return None if x is None else a2b_base64(x)  # base64.b64decode's own call, without its Python wrapper


def _double(x: Any) -> Any:
    """A double in JsonConverter's form (Java's text as an orjson.Fragment, "NaN" and the like), or null."""
    if x is None:
        return None
    x = _loads(_dumps(x))
    return float(x) if type(x) is str else x


def _general(fn: Callable[[Any], Any] | None) -> Callable[[Any], Any]:
    """A column of another shape: serialized and parsed, then the general datum function."""
    if fn is None:
        return lambda x: None if x is None else _loads(_dumps(x))
    return lambda x: None if x is None else fn(_loads(_dumps(x)))


_PLAIN = {"int8", "int16", "int32", "int64", "boolean", "string"}


def rows_are_datums(struct: dict[str, Any], native: Collection[str] = ()) -> bool:
    """Whether spavro writes a row of `struct` as the capture holds it: every column plain, or a double, a float
    or bytes in `native` (columns whose every value, fills included, the row holds as Avro writes them:
    envelope/native.py). A bytes column's value in JsonConverter's form, base64 text, must never get here:
    spavro writes a str given for bytes as its UTF-8 bytes instead of failing."""
    return all(f["type"] in _PLAIN or (f["type"] in ("float", "double", "bytes") and f["field"] in native)
               for f in struct["fields"])


def row_datum(struct: dict[str, Any]) -> Callable[[dict[str, Any]], dict[str, Any]] | None:
    """`struct` (a row's Connect schema, JsonConverter's JSON form) -> f(row) -> a new dict, the datum; None when
    every column is one spavro writes as the row holds it (ints, strings, booleans: the row is the datum)."""
    if rows_are_datums(struct):
        return None
    scope: dict[str, Any] = {"B": _bytes, "L": _loads, "J": _dumps, "S": str, "F": float, "D": _double, "Y": bytes}
    items, doubles = [], []
    for i, f in enumerate(struct["fields"]):
        name, kind = f["field"], f["type"]
        read = f"v[{name!r}]"
        if kind in _PLAIN:
            items.append(f"{name!r}: {read}")
        elif kind in ("float", "double"):
            # A float as it is (native rows: envelope/native.py; a parsed snapshot row); Java's text read
            items.append(f"{name!r}: (x if type(x := {read}) is F else D(x))")
        elif kind == "array" and f["items"]["type"] in ("float", "double"):
            # All of a row's arrays of doubles read in one serialize-and-parse: Java's text becomes a float,
            # and "NaN"/"Infinity"/"-Infinity" a string, made a float here; or null.
            items.append(f"{name!r}: (None if (a := d[{len(doubles)}]) is None else "
                         f"[x if type(x) is not S else float(x) for x in a])")
            doubles.append(read)
        elif kind == "bytes":  # bytes as they are (native rows), base64 decoded
            items.append(f"{name!r}: (x if type(x := {read}) is Y else B(x))")
        else:
            scope[f"g{i}"] = _general(datum_function(f, tuples=False))
            items.append(f"{name!r}: g{i}({read})")
    head = f"    d = L(J([{', '.join(doubles)}]))\n" if doubles else ""
    source = "def row(v):\n" + head + "    return {" + ", ".join(items) + "}\n"
    # names enter only as repr() literals
    row: Callable[[dict[str, Any]], dict[str, Any]] = define(source, "<pgcdc avro row>", scope, "row")
    return row
