"""A Kafka Connect schema (in JsonConverter's JSON form) as the Avro schema Confluent's AvroConverter derives
from it, and the function that turns a value in JsonConverter's JSON form into the datum fastavro writes.

Follows io.confluent.connect.avro.AvroData.fromConnectSchema (Confluent 7.x; enhanced.avro.schema.support changes
nothing in the schemas Debezium writes, measured): int8/int16 become Avro int with `connect.type`; every schema carries
`connect.doc`, `connect.version`, `connect.parameters`, `connect.default` and `connect.name` where Connect has
them; Connect's Decimal, Date, Time and Timestamp add Avro's logical type; an optional schema is a union with
null, null last when the schema has a default; a map whose keys are not required strings is an array of
`MapEntry` records; a struct field's Avro default is its Connect default (bytes as ISO-8859-1 text), or null
when optional. Structurally equal Connect schemas map to the same Avro schema, so a record type used twice
(`before` and `after`) is written out once and then named, as Avro's Schema.toString does.
With connect.meta.data=false no `connect.*` property is written; with scrub.invalid.names=true names are
scrubbed (`scrub_name`) instead of refused. Both measured against Confluent's converter 7.0.16.
"""

from __future__ import annotations

import re
from binascii import a2b_base64
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from pgcdc.pgtypes.java_float import double_text, float32_text

NAMESPACE = "io.confluent.connect.avro"
DEFAULT_NAME = "ConnectDefault"
MAP_ENTRY = "MapEntry"
_LOGICAL = {"org.apache.kafka.connect.data.Time": "time-millis",
            "org.apache.kafka.connect.data.Timestamp": "timestamp-millis",
            "org.apache.kafka.connect.data.Date": "date"}
DECIMAL = "org.apache.kafka.connect.data.Decimal"
# JsonConverter's names of Connect's types (FLOAT32 is "float", FLOAT64 "double") -> Avro's.
_PRIMITIVE = {"int8": "int", "int16": "int", "int32": "int", "int64": "long", "float": "float",
              "double": "double", "boolean": "boolean", "string": "string", "bytes": "bytes"}
_NO_DEFAULT = object()

Datum = Callable[[Any], Any]


@dataclass(eq=False)
class _Avro:
    """One Avro schema node. kind: a primitive name, 'record', 'array', 'map' or 'union'."""

    kind: str
    props: dict[str, Any] = field(default_factory=dict)
    name: str | None = None
    space: str | None = None
    doc: str | None = None
    fields: list[tuple[str, _Avro, Any]] = field(default_factory=list)  # (name, schema, default)
    items: _Avro | None = None  # array items, map values
    branches: list[_Avro] = field(default_factory=list)


def _is_letter(c: str) -> bool:
    return c.isalpha() and ord(c) < 0x10000  # Java's Character.isLetter on a UTF-16 unit: no astral letters


def avro_name(name: str) -> str:
    """The name, if Avro (1.11, Schema.validateName) accepts it for a record or field; else ValueError with
    Avro's own message (Confluent's converter fails the same way: field.name.adjustment.mode=avro fixes it)."""
    if not name:
        raise ValueError("Empty name")
    if not (_is_letter(name[0]) or name[0] == "_"):
        raise ValueError(f"Illegal initial character: {name}")
    for c in name[1:]:
        if not (_is_letter(c) or c == "_" or (c.isdigit() and unicodedata.category(c) == "Nd")):
            raise ValueError(f"Illegal character in: {name}")
    return name


_KEPT = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")


def scrub_name(name: str) -> str:
    """AvroData's scrubbed name (scrub.invalid.names=true): the name URL-encoded as Java's URLEncoder does (UTF-8
    bytes as %XX, a space as +), every character but [A-Za-z0-9_] then `_`, and an `x` in front of a name that
    does not start with a letter or `_` (measured: `c🎉` -> c_F0_9F_8E_89, `é` -> _C3_A9, `1st` -> x1st, `a-b`,
    `a b` and `x.y` -> a_b, a_b, x_y). The %XX of a character that is not ASCII keeps its two hex digits."""
    out = []
    for c in name:
        if c in _KEPT:
            out.append(c)
        elif c in ".-* " or ord(c) < 0x80:  # kept or `+` by URLEncoder, or one %XX: one `_` and the hex digits
            out.append("_" if c in ".-* " else f"_{ord(c):02X}")
        else:
            out.append("".join(f"_{b:02X}" for b in c.encode("utf-8", "surrogatepass")))
    scrubbed = "".join(out)
    return scrubbed if scrubbed[:1] in _START and scrubbed else "x" + scrubbed


def _unchecked(name: str) -> str:
    return name


def _split(full: str) -> tuple[str | None, str]:
    space, dot, name = full.rpartition(".")
    return (space, name) if dot else (None, full)


def _default_node(schema: dict[str, Any], value: Any) -> Any:
    """AvroData.defaultValueFromConnect for a default in JsonConverter's JSON form."""
    t = schema["type"]
    if value is None:
        return None
    if t == "bytes":
        return a2b_base64(value).decode("latin-1")
    if t in ("float", "double"):
        if isinstance(value, str):  # NaN and the infinities are JSON strings in JsonConverter's form
            return value
        return orjson.Fragment((float32_text(value) if t == "float" else double_text(value)).encode())
    if t == "array":
        return [_default_node(schema["items"], v) for v in value]
    if t == "map":
        if _string_keys(schema):
            return {k: _default_node(schema["values"], v) for k, v in value.items()}
        return [{"key": _default_node(schema["keys"], k), "value": _default_node(schema["values"], v)}
                for k, v in value]
    if t == "struct":
        return {f["field"]: _default_node(f, value.get(f["field"])) for f in schema["fields"]}
    return value


def _string_keys(schema: dict[str, Any]) -> bool:
    keys = schema["keys"]
    return bool(keys["type"] == "string" and not keys.get("optional", False))


class _Builder:
    """AvroData.fromConnectSchema over one top-level schema: equal Connect schemas share one Avro node. `meta`:
    connect.meta.data; `names`: a record's or field's name as written (checked, scrubbed, or as it is)."""

    def __init__(self, meta: bool = True, names: Callable[[str], str] = avro_name) -> None:
        self.cache: dict[bytes, _Avro] = {}
        self.meta = meta
        self.names = names
        self.spaces = names is scrub_name  # a namespace is scrubbed part by part (measured), else kept as it is

    def build(self, s: dict[str, Any]) -> _Avro:
        key = orjson.dumps({k: v for k, v in s.items() if k != "field"})
        cached = self.cache.get(key)
        if cached is not None:
            return cached
        t = s["type"]
        name = s.get("name")
        space, short = _split(name) if name is not None else (NAMESPACE, DEFAULT_NAME)
        if self.spaces and space is not None:
            space = ".".join(map(scrub_name, space.split(".")))
        if t in _PRIMITIVE:
            base = _Avro(_PRIMITIVE[t])
            if name == DECIMAL:
                params = s.get("parameters") or {}
                base.props["scale"] = int(params["scale"])
                base.props["precision"] = int(params.get("connect.decimal.precision", 64))
        elif t == "array":
            base = _Avro("array", items=self.build(s["items"]))
        elif t == "map":
            if _string_keys(s):
                base = _Avro("map", items=self.build(s["values"]))
            else:
                entry = _Avro("record", name=MAP_ENTRY if name is None else self.names(short), space=space)
                if name is not None:
                    entry.props["connect.internal.type"] = MAP_ENTRY
                entry.fields = [self._field("key", s["keys"]), self._field("value", s["values"])]
                base = _Avro("array", items=entry)
        elif t == "struct":
            base = _Avro("record", name=self.names(short), space=space)  # the doc goes to connect.doc only (measured)
            base.fields = [self._field(f["field"], f) for f in s["fields"]]
            _unique(base)
        else:
            raise ValueError(f"Connect type {t!r} has no Avro form")
        props = base.props if self.meta else {}  # connect.meta.data=false: the connect.* properties are dropped
        if s.get("doc") is not None:
            props["connect.doc"] = s["doc"]
        if s.get("version") is not None:
            props["connect.version"] = s["version"]
        if s.get("parameters") is not None:
            props["connect.parameters"] = s["parameters"]
        if s.get("default") is not None:
            props["connect.default"] = _default_node(s, s["default"])
        if name is not None:
            props["connect.name"] = name
        if t in ("int8", "int16"):
            props["connect.type"] = t
        props = base.props
        if name == DECIMAL:
            params = s.get("parameters") or {}
            scale, precision = int(params.get("scale", 0)), int(params.get("connect.decimal.precision", 64))
            if 0 <= scale <= precision:  # otherwise Confluent keeps the legacy (logical-type-less) decimal
                props["logicalType"] = "decimal"
        elif name in _LOGICAL:
            props["logicalType"] = _LOGICAL[name]
        for k, v in (s.get("parameters") or {}).items():
            if k.startswith("avro."):
                props[k[5:]] = v
        out = base
        if s.get("optional"):
            null = _Avro("null")
            out = _Avro("union", branches=[base, null] if s.get("default") is not None else [null, base])
        self.cache[key] = out
        return out

    def _field(self, name: str, s: dict[str, Any]) -> tuple[str, _Avro, Any]:
        if s.get("default") is not None:
            default = _default_node(s, s["default"])
        elif s.get("optional"):
            default = None
        else:
            default = _NO_DEFAULT
        return self.names(name), self.build(s), default


def _json(node: _Avro, names: set[tuple[str | None, str]], space: list[str | None]) -> Any:
    """Avro's Schema.toJson: a named type after its first appearance is its name (short in its namespace)."""
    k = node.kind
    if k == "union":
        return [_json(b, names, space) for b in node.branches]
    if k == "record":
        assert node.name is not None
        full = (node.space, node.name)
        if full in names:
            return node.name if node.space == space[0] else f"{node.space}.{node.name}"
        names.add(full)
        out: dict[str, Any] = {"type": "record", "name": node.name}
        if node.space is not None:
            if node.space != space[0]:
                out["namespace"] = node.space
        elif space[0] is not None:
            out["namespace"] = ""
        saved, space[0] = space[0], node.space
        if node.doc is not None:
            out["doc"] = node.doc
        fields = []
        for fname, fschema, default in node.fields:
            f: dict[str, Any] = {"name": fname, "type": _json(fschema, names, space)}
            if default is not _NO_DEFAULT:
                f["default"] = default
            fields.append(f)
        out["fields"] = fields
        out.update(node.props)
        space[0] = saved
        return out
    if k == "array":
        assert node.items is not None
        return {"type": "array", "items": _json(node.items, names, space), **node.props}
    if k == "map":
        assert node.items is not None
        return {"type": "map", "values": _json(node.items, names, space), **node.props}
    return {"type": k, **node.props} if node.props else k


_ESCAPE = re.compile(rb"\\(?:u00([01][a-f])|.)")


def _upper(m: re.Match[bytes]) -> bytes:
    return m.group(0) if m.group(1) is None else b"\\u00" + m.group(1).upper()


def _unique(record: _Avro) -> None:
    """Avro's refusal of two fields of one name (scrubbed names can meet: `a-b` and `a b`), in its words."""
    seen: dict[str, int] = {}
    for pos, (name, schema, _) in enumerate(record.fields):
        if name in seen:
            full = f"{record.space}.{record.name}" if record.space else record.name
            kind = schema.kind.upper()
            first = record.fields[seen[name]][1].kind.upper()
            raise ValueError(f"Duplicate field {name} in record {full}: {name} type:{kind} pos:{pos} and "
                             f"{name} type:{first} pos:{seen[name]}.")
        seen[name] = pos


def avro_schema_text(connect_schema: dict[str, Any], meta: bool = True, scrub: bool = False) -> str:
    """The Avro schema text Confluent's AvroConverter registers for `connect_schema` (`meta`: connect.meta.data,
    `scrub`: scrub.invalid.names)."""
    return schema_json(_json(_Builder(meta, scrub_name if scrub else avro_name).build(connect_schema), set(), [None]))


def schema_json(tree: Any) -> str:
    """An Avro schema's JSON as Avro's Schema.toString writes it (Jackson escapes U+0000..U+001F as \\u00XX, hex
    upper case)."""
    return _ESCAPE.sub(_upper, orjson.dumps(tree)).decode()


def names_schema_text(connect_schema: dict[str, Any]) -> str:
    """The same schema's text with Connect's own names, unchecked: what a writer of scrubbed schemas compiles, so
    that the datum (keyed by Connect's names) finds its fields. Avro's binary encoding has no names: the bytes
    are those of the scrubbed schema."""
    return schema_json(_json(_Builder(True, _unchecked).build(connect_schema), set(), [None]))


def writer_schema(text: str) -> Any:
    """The schema fastavro and spavro write (and this process reads) with: the registered one without logical
    types, since the datum already holds their underlying values (days, milliseconds, unscaled decimal bytes) as
    JsonConverter's form does, and without fields' defaults (`reader_schema`)."""
    return _strip(orjson.loads(text), logical=True)


def reader_schema(text: str) -> Any:
    """A registered schema as fastavro takes it to read the records written with it: without fields' defaults,
    which only a reader resolving another schema uses, and which fastavro refuses where Avro's Java library
    takes them (a double's or float's "NaN" or "Infinity": a float8 DEFAULT 'NaN' column)."""
    return _strip(orjson.loads(text), logical=False)


def _strip(node: Any, logical: bool) -> Any:
    if isinstance(node, dict):
        field = "name" in node and "type" in node and node.get("type") not in ("record", "enum", "fixed")
        return {k: _strip(v, logical) for k, v in node.items()
                if not (logical and k == "logicalType") and not (field and k == "default")}
    if isinstance(node, list):
        return [_strip(v, logical) for v in node]
    return node


def _float(v: Any) -> Any:
    return float(v) if type(v) is str else v  # "NaN", "Infinity", "-Infinity"


def datum_function(s: dict[str, Any], tuples: bool = True) -> Datum | None:
    """JsonConverter's JSON form of a value of `s` -> the datum an Avro writer takes (None: the value as it is).
    A struct's fields are changed in place: the value is the caller's own, freshly parsed. `tuples`: an optional
    struct as fastavro's (name, datum) union notation (spavro, avro_writer.py, takes the plain dict)."""
    t = s["type"]
    if t in ("float", "double"):
        return _float
    if t == "bytes":
        return lambda v: None if v is None else a2b_base64(v)  # base64.b64decode without its Python wrapper
    if t == "array":
        item = datum_function(s["items"], tuples)
        if item is None:
            return None
        return lambda v: None if v is None else [None if x is None else item(x) for x in v]
    if t == "map":
        kf, vf = datum_function(s["keys"], tuples), datum_function(s["values"], tuples)
        if _string_keys(s):
            if vf is None:
                return None
            return lambda v: None if v is None else {k: None if x is None else vf(x) for k, x in v.items()}
        kc: Datum = kf or (lambda x: x)
        vc: Datum = vf or (lambda x: x)
        return lambda v: None if v is None else [
            {"key": None if k is None else kc(k), "value": None if x is None else vc(x)} for k, x in v]
    if t == "struct":
        work = [(f["field"], fn) for f in s["fields"] if (fn := datum_function(f, tuples)) is not None]
        # An optional struct is a union with null: fastavro takes the branch named in a (name, datum) tuple
        # instead of validating the datum against each branch (half the cost of a change event).
        union_name = (s.get("name") or f"{NAMESPACE}.{DEFAULT_NAME}") if s.get("optional") and tuples else None
        if not work and union_name is None:
            return None

        def struct_datum(v: Any) -> Any:
            if v is None:
                return None
            if work:  # in place: the value is the sink's own, parsed from the record's JSON for this call
                for name, fn in work:
                    x = v.get(name)
                    if x is not None:
                        v[name] = fn(x)
            return v if union_name is None else (union_name, v)

        return struct_datum
    return None
