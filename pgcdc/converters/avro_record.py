"""spavro's writer of a record, its fields called in one compiled function instead of spavro's loop over them.

spavro writes a record by looping over its fields in Python-level calls, and each optional field (a union of
null and one type, most of a change event's columns) through two more: a lookup of the branch by the value's
type, then the branch's writer after the branch's index. Measured on a 41-column row, that is about half of the
row's cost. Here one function per record schema, compiled once, does per field what spavro's union writer does
for a value of the branch's own type: the null branch's bytes or the other branch's index bytes (both written by
spavro once, when the function is built) and then spavro's writer of that branch. Every other value (another
type, which spavro may promote or refuse; a field that is not such a union) goes to spavro's own writer of the
field, and a union of null and a record to this module's writer of that record.

So every byte is still spavro's, in the order its record writer writes them (Avro specification, "Binary
Encoding": a record is its fields' encodings in order, a union the branch's index then the value). On any
error the whole datum is written again by spavro's record writer, so the error raised is spavro's own.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Hashable
from typing import Any

import orjson
from spavro.fast_binary import get_writer

from pgcdc.codegen import define, kept

Write = Callable[[Any, Any], None]  # spavro: (file, datum)

# The Python type spavro's union writer takes for a branch as that branch without promotion (its avro_to_py).
_TYPES: dict[str, type] = {"string": str, "int": int, "long": int, "boolean": bool, "float": float,
                           "double": float, "bytes": bytes}


_KNOWN: dict[Hashable, Write] = {}  # schema document -> its writer (at most 256 kept)
_UNNAMED: dict[Hashable, Write] = {}  # schema of no named type -> spavro's writer of it (at most 1024 kept)
_PRIMITIVES = frozenset(("null", "boolean", "int", "long", "float", "double", "bytes", "string"))


def record_writer(schema: Any) -> Write:
    """The writer of `schema` (spavro's JSON form of a schema, a whole document: a named type it uses by name is
    defined in it, before): for a record or a union of null and a record, the compiled one; anything else
    spavro's. A document met again (a change event's `before` and `after` are the same row schema) is not
    compiled again."""
    return kept(_KNOWN, orjson.dumps(schema), 256, lambda: _writer(schema))


def unnamed_writer(schema: Any) -> Write:
    """spavro's writer of `schema`, one per schema text where it names no type (a primitive, with or without
    parameters such as `connect.name`; an array, map or union of such): spavro builds a tree of closures per
    call, and the columns of every table that have one type share one writer instead. Kept per table, those
    trees are objects each full garbage collection walks again (measured on 1,000 snapshotted tables of eight
    columns: 551 objects kept per table before, 459 after; a full collection of all 545k took 0.29 s). A schema
    that names a type, or uses one by name, depends on the names spavro knows when it is built: built each
    time."""
    if not _unnamed(schema):
        return get_writer(schema)
    return kept(_UNNAMED, orjson.dumps(schema), 1024, lambda: get_writer(schema))


def _unnamed(schema: Any) -> bool:
    if isinstance(schema, str):
        return schema in _PRIMITIVES
    if isinstance(schema, list):
        return all(_unnamed(branch) for branch in schema)
    if isinstance(schema, dict):
        t = schema.get("type")
        if t == "array":
            return _unnamed(schema.get("items"))
        if t == "map":
            return _unnamed(schema.get("values"))
        return isinstance(t, str) and t in _PRIMITIVES
    return False


def _writer(schema: Any) -> Write:
    whole = get_writer(schema)  # first: it names the schema's named types for the writers below
    if _record(schema):
        return _compiled(schema, whole)
    record = _optional(schema, _record)
    if record is None:
        return whole
    null_bytes, prefix, other = _branches(schema, record)
    inner = _compiled(schema[other], get_writer(schema[other]))

    def write(out: Any, datum: Any) -> None:
        if datum is None:
            out.write(null_bytes)
        elif type(datum) is dict:
            out.write(prefix)
            inner(out, datum)
        else:
            whole(out, datum)
    return write


def _compiled(schema: dict[str, Any], whole: Write) -> Write:
    """`whole` (spavro's writer of the record `schema`) as one compiled function; field names enter its source
    only as repr() literals."""
    scope: dict[str, Any] = {"whole": whole, "BytesIO": io.BytesIO}
    # The body in a `try`, so a record is one call: on any error spavro writes the datum again, raising its own.
    lines = ["def write(out, r):", "  try:", "    write = out.write", "    get = r.get"]
    for i, field in enumerate(schema["fields"]):
        t = field["type"]
        scope[f"u{i}"] = unnamed_writer(t)
        lines.append(f"    v = get({field['name']!r})")
        branch = _optional(t, lambda b: _primitive(b) is not None)
        nested = _optional(t, _record) if branch is None else None
        if branch is None and nested is None:
            lines.append(f"    u{i}(out, v)")
            continue
        null_bytes, prefix, other = _branches(t, branch if branch is not None else nested)
        scope[f"n{i}"], scope[f"p{i}"] = null_bytes, prefix
        lines += ["    if v is None:", f"        write(n{i})", f"    elif type(v) is t{i}:"]
        kind = _primitive(t[other]) if branch is not None else "record"
        if kind == "boolean":  # two values: spavro's bytes of each, kept
            scope[f"t{i}"], scope[f"b{i}"] = bool, {b: spavro_bytes(scope[f"u{i}"], b) for b in (False, True)}
            lines.append(f"        write(b{i}[v])")
        else:
            scope[f"t{i}"] = _TYPES[kind] if kind != "record" else dict
            scope[f"w{i}"] = (unnamed_writer(t[other]) if kind != "record"
                              else _compiled(t[other], get_writer(t[other])))
            lines += [f"        write(p{i})", f"        w{i}(out, v)"]
        lines += ["    else:", f"        u{i}(out, v)"]
    lines += ["  except Exception:", "    whole(BytesIO(), r)", "    raise"]
    write: Write = define("\n".join(lines) + "\n", "<pgcdc avro record>", scope, "write")
    return write


def _primitive(schema: Any) -> str | None:
    """The name of the primitive type `schema` is (a name or a dict with parameters such as `connect.name`, which
    spavro's writers do not read), where it is one of `_TYPES`."""
    name = schema if isinstance(schema, str) else schema.get("type") if isinstance(schema, dict) else None
    return name if isinstance(name, str) and name in _TYPES else None


def _record(schema: Any) -> bool:
    return isinstance(schema, dict) and schema.get("type") == "record"


def _optional(schema: Any, branch: Callable[[Any], bool]) -> Any:
    """The non-null branch of a union of null and one branch for which `branch` holds, or None."""
    if not isinstance(schema, list) or len(schema) != 2 or "null" not in schema:
        return None
    other = schema[1 - schema.index("null")]
    return other if branch(other) else None


def _branches(union: list[Any], other: Any) -> tuple[bytes, bytes, int]:
    """spavro's bytes of the union's null value, of the other branch's index, and that index."""
    index = union.index(other)
    return spavro_bytes(unnamed_writer(union), None), spavro_bytes(unnamed_writer("long"), index), index


def spavro_bytes(write: Write, datum: Any) -> bytes:
    """The bytes spavro's `write` writes for `datum`."""
    out = io.BytesIO()
    write(out, datum)
    return out.getvalue()
