"""A Kafka Connect schema (in JsonConverter's JSON form) as the Protobuf schema Confluent's ProtobufConverter
derives from it: the text it registers and the descriptor (built at run time) pgcdc encodes with.

Follows io.confluent.connect.protobuf.ProtobufData.fromConnectSchema and ProtobufSchemaUtils.toString of
Confluent 7.0.16: proto3; the schema name's namespace is the package and its last part the root message; struct
fields are numbered 1, 2, … in order; a struct type is a message nested in the message that first uses it (named
after the struct's last name part, `ConnectDefault<n>` when unnamed, `<name>Message` when it equals the field's
name); an array is a `repeated` field of its items; a map is a `repeated <name>Entry` of a nested message with
`key = 1` and `value = 2`; Connect's Decimal, Date, Time and Timestamp are confluent.type.Decimal, google.type.Date,
google.type.TimeOfDay and google.protobuf.Timestamp (imported); int8/int16 are int32 with a `connect.type`
parameter, a decimal carries `precision`/`scale` parameters, both as `(confluent.field_meta)`. Docs, defaults,
versions, schema names and other parameters are not written.

The converter's options (ProtobufOptions): wrapper.for.nullables makes an optional scalar field (an array's
optional items, a map's optional key or value too) a google.protobuf wrapper message (`Int32Value` for
int8/int16/int32, …; wrappers.proto imported where first used); optional.for.nullables labels an optional field
that is neither an array nor a map `optional` (proto3 presence: a synthetic oneof `_<name>` in the descriptor,
not in the text; a map entry's key or value keeps no label, as DynamicSchema adds it as a plain field);
scrub.invalid.names scrubs field names, message names and the package's parts (scrub_name).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote_plus

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

DEFAULT_NAME = "ConnectDefault"
DECIMAL = "org.apache.kafka.connect.data.Decimal"
LOGICAL = {DECIMAL: "confluent.type.Decimal", "org.apache.kafka.connect.data.Date": "google.type.Date",
            "org.apache.kafka.connect.data.Time": "google.type.TimeOfDay",
            "org.apache.kafka.connect.data.Timestamp": "google.protobuf.Timestamp"}
# The file each logical type's message is imported from, and the Python module that holds its descriptor.
_IMPORTS = {"confluent.type.Decimal": ("confluent/type/decimal.proto",
                                       "confluent_kafka.schema_registry.confluent.type.decimal_pb2"),
            "google.type.Date": ("google/type/date.proto", "google.type.date_pb2"),
            "google.type.TimeOfDay": ("google/type/timeofday.proto", "google.type.timeofday_pb2"),
            "google.protobuf.Timestamp": ("google/protobuf/timestamp.proto", "google.protobuf.timestamp_pb2")}
# wrapper.for.nullables: Connect's type of an optional scalar -> the google.protobuf wrapper it is written as.
WRAPPERS = {"int8": "google.protobuf.Int32Value", "int16": "google.protobuf.Int32Value",
            "int32": "google.protobuf.Int32Value", "int64": "google.protobuf.Int64Value",
            "float": "google.protobuf.FloatValue", "double": "google.protobuf.DoubleValue",
            "boolean": "google.protobuf.BoolValue", "string": "google.protobuf.StringValue",
            "bytes": "google.protobuf.BytesValue"}
_IMPORTS.update({w: ("google/protobuf/wrappers.proto", "google.protobuf.wrappers_pb2") for w in WRAPPERS.values()})
# JsonConverter's names of Connect's types -> Protobuf's scalar types.
_SCALAR = {"int8": "int32", "int16": "int32", "int32": "int32", "int64": "int64", "float": "float",
           "double": "double", "boolean": "bool", "string": "string", "bytes": "bytes"}
_FD = descriptor_pb2.FieldDescriptorProto
_TYPE = {"int32": _FD.TYPE_INT32, "int64": _FD.TYPE_INT64, "float": _FD.TYPE_FLOAT, "double": _FD.TYPE_DOUBLE,
         "bool": _FD.TYPE_BOOL, "string": _FD.TYPE_STRING, "bytes": _FD.TYPE_BYTES}
PROTOBUF_TAG = "io.confluent.connect.protobuf.Tag"
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


@dataclass(frozen=True)
class ProtobufOptions:
    """ProtobufDataConfig's options that change what the converter writes (all false by default)."""

    wrapper_for_nullables: bool = False
    optional_for_nullables: bool = False
    scrub_invalid_names: bool = False


DEFAULTS = ProtobufOptions()


def scrub_name(name: str) -> str:
    """ProtobufData.doScrubName (scrub.invalid.names=true): a name of only [A-Za-z0-9_] not starting with a digit or
    `_` is kept; else it is URL-encoded as Java's URLEncoder does (UTF-8 bytes as %XX, a space as +; `.-*_` kept),
    prefixed with `x` when that starts with a digit or `_`, and every character but [A-Za-z0-9_] becomes `_`."""
    if not name or (all(c in _NAME_CHARS for c in name) and not name[0].isdigit() and name[0] != "_"):
        return name
    encoded = quote_plus(name, safe=".-*_").replace("~", "%7E")  # URLEncoder encodes `~`; quote_plus keeps it
    if encoded[0].isdigit() or encoded[0] == "_":
        encoded = "x" + encoded
    return "".join(c if c in _NAME_CHARS else "_" for c in encoded)


def _same(name: str) -> str:
    return name


def _java_hash(s: str) -> int:
    h = 0
    for unit in s.encode("utf-16-be").hex(" ", 2).split():
        h = (31 * h + int(unit, 16)) & 0xFFFFFFFF
    return h


def _hashmap_order(keys: list[str]) -> list[str]:
    """The iteration order of a java.util.HashMap (16 buckets, under 13 entries) holding `keys`: ProtobufData
    collects a field's parameters in one, and the registered text lists them in that order."""
    def bucket(k: str) -> int:
        h = _java_hash(k)
        return (h ^ (h >> 16)) & 15
    return sorted(keys, key=bucket)  # stable: keys in one bucket stay in insertion order


@dataclass
class _Field:
    label: str | None  # "repeated", "optional" (proto3 presence) or None
    type: str  # as written: a scalar, a nested message's name or a logical type's full name
    name: str
    number: int
    params: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class _Message:
    name: str
    fields: list[_Field] = field(default_factory=list)
    nested: list[_Message] = field(default_factory=list)
    children: set[str] = field(default_factory=set)


class _Builder:
    """ProtobufData.fromConnectSchema over one top-level schema."""

    def __init__(self, options: ProtobufOptions = DEFAULTS) -> None:
        self.default_index = 0
        self.imports: list[str] = []
        self.options = options
        self.names = scrub_name if options.scrub_invalid_names else _same

    def name_or_default(self, name: str | None) -> str:
        if name:
            return name
        self.default_index += 1
        return f"{DEFAULT_NAME}{self.default_index}"

    def unqualified(self, name: str | None) -> str:
        return self.names(self.name_or_default(name).rpartition(".")[2])

    def message(self, name: str, s: dict[str, Any]) -> _Message:
        msg = _Message(name)
        index = 1
        for f in s["fields"]:
            tag_param = (f.get("parameters") or {}).get(PROTOBUF_TAG)
            if tag_param is not None:
                tag = int(tag_param)
            else:
                tag, index = index, index + 1
            msg.fields.append(self.field(msg, f, self.names(f["field"]), tag))
        return msg

    def field(self, msg: _Message, s: dict[str, Any], name: str, tag: int) -> _Field:
        label = None
        t = s["type"]
        if t == "array":
            label, s = "repeated", s["items"]
            t = s["type"]
        elif t == "map":
            label = "repeated"
        elif self.options.optional_for_nullables and s.get("optional", False):
            label = "optional"
        params: dict[str, str] = {}
        type_ = self.data_type(s, name, params)
        if t == "struct" and s.get("name") not in LOGICAL:
            if (s.get("name") or "").startswith("io.confluent.connect.protobuf.Union."):
                raise ValueError(f"field {name}: Protobuf unions are not supported")
            if type_ != msg.name and type_ not in msg.children:
                msg.children.add(type_)
                msg.nested.append(self.message(type_, s))
        elif t == "map":
            entry = _Message(type_)
            for fname, fs, ftag in (("key", s["keys"], 1), ("value", s["values"], 2)):
                f = self.field(entry, fs, fname, ftag)
                f.params = []  # ProtobufData drops a map entry's field parameters
                if f.label == "optional":  # added to the entry as a plain field: no proto3 presence
                    f.label = None
                entry.fields.append(f)
            msg.nested.append(entry)
        elif type_ in _IMPORTS and _IMPORTS[type_][0] not in self.imports:
            self.imports.append(_IMPORTS[type_][0])
        return _Field(label, type_, name, tag, [(k, params[k]) for k in _hashmap_order(list(params))])

    def data_type(self, s: dict[str, Any], field_name: str, params: dict[str, str]) -> str:
        name = s.get("name")
        if name in LOGICAL:
            if name == DECIMAL:
                p = s.get("parameters") or {}
                if "connect.decimal.precision" in p:
                    params["precision"] = p["connect.decimal.precision"]
                if "scale" in p:
                    params["scale"] = p["scale"]
            return LOGICAL[name]
        t = s["type"]
        if t in ("int8", "int16"):
            params["connect.type"] = t
        if t in _SCALAR:
            if self.options.wrapper_for_nullables and s.get("optional", False):
                return WRAPPERS[t]
            if "io.confluent.connect.protobuf.Enum" in (s.get("parameters") or {}) or \
                    "io.confluent.connect.protobuf.Type" in (s.get("parameters") or {}):
                raise ValueError(f"field {field_name}: Protobuf enum and type parameters are not supported")
            return _SCALAR[t]
        if t == "array":
            raise ValueError(f"field {field_name}: Array cannot be nested")
        if t == "map":
            return self.unqualified(name) + "Entry"
        if t == "struct":
            short = self.unqualified(name)
            return short + "Message" if short == field_name else short
        raise ValueError(f"Connect type {t!r} has no Protobuf form")


def _field_meta(params: list[tuple[str, str]]) -> str:
    """`(confluent.field_meta)` as ProtobufSchemaUtils writes it (decimal parameters value first, as it does)."""
    entries = []
    for k, v in params:
        pair = [("value", v), ("key", k)] if k in ("precision", "scale") else [("key", k), ("value", v)]
        entries.append("{\n" + "".join(_indent(f"{a}: {_quote(b)}" + ("," if i == 0 else ""))
                                       for i, (a, b) in enumerate(pair)) + "}")
    body = "[\n" + "".join(_indent(e + ("," if i < len(entries) - 1 else "")) for i, e in enumerate(entries)) + "]"
    return "(confluent.field_meta) = {\n" + _indent(f"params: {body}") + "}"


def _options(f: _Field) -> str:
    """A field's options as Wire's FieldElement writes them: one inline, several one per line. A proto3 `optional`
    field carries `deprecated = false`, which DynamicSchema's oneof builder sets on it (measured)."""
    options = (["deprecated = false"] if f.label == "optional" else []) + ([_field_meta(f.params)] if f.params else [])
    if len(options) <= 1:
        return "".join(f" [{o}]" for o in options)
    return " [\n" + "".join(_indent(o + ("," if i < len(options) - 1 else "")) for i, o in enumerate(options)) + "]"


_ESCAPES = {"\x07": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
            "\\": "\\\\", "'": "\\'", '"': '\\"'}


def _quote(s: str) -> str:
    return '"' + "".join(_ESCAPES.get(c, c) for c in s) + '"'


def _indent(text: str) -> str:
    """ProtobufSchemaUtils.appendIndented: two spaces before each line (a trailing newline adds none)."""
    lines = text.split("\n")
    while len(lines) > 1 and lines[-1] == "":  # Java's String.split drops trailing empty strings
        lines.pop()
    return "".join(f"  {line}\n" for line in lines)


def _message_text(msg: _Message) -> str:
    out = [f"message {msg.name} {{"]
    if msg.fields:
        out.append("\n")
        for f in msg.fields:
            label = f"{f.label} " if f.label else ""
            out.append(_indent(f"{label}{f.type} {f.name} = {f.number}{_options(f)};\n"))
    if msg.nested:
        out.append("\n")
        out.extend(_indent(_message_text(n)) for n in msg.nested)
    out.append("}\n")
    return "".join(out)


def _split(full: str) -> tuple[str | None, str]:
    space, dot, name = full.rpartition(".")
    return (space, name) if dot else (None, full)


def protobuf_schema(connect_schema: dict[str, Any], options: ProtobufOptions = DEFAULTS
                    ) -> tuple[str, str, Any]:
    """(the text Confluent's converter registers, the root message's full name, its message class)."""
    if connect_schema["type"] != "struct":
        raise ValueError(f"Unsupported root schema of type {connect_schema['type']}")
    builder = _Builder(options)
    package, name = _split(".".join(map(builder.names, builder.name_or_default(connect_schema.get("name"))
                                        .split("."))))
    root = builder.message(name, connect_schema)
    text = 'syntax = "proto3";\n'
    if package is not None:
        text += f"package {package};\n"
    if builder.imports:
        text += "\n" + "".join(f'import "{i}";\n' for i in builder.imports)
    text += "\n" + _message_text(root)
    full_name = f"{package}.{name}" if package else name
    return text, full_name, _message_class(package, root, builder.imports, full_name)


def _message_proto(msg: _Message, out: Any) -> None:
    out.name = msg.name
    for f in msg.fields:
        fd = out.field.add(name=f.name, number=f.number, json_name=f.name,
                           label=_FD.LABEL_REPEATED if f.label == "repeated" else _FD.LABEL_OPTIONAL)
        if f.label == "optional":  # proto3 presence, as protoc gives it: a synthetic oneof of the field alone
            fd.proto3_optional = True
            fd.oneof_index = len(out.oneof_decl)
            out.oneof_decl.add(name="_" + f.name)
        if f.type in _TYPE:
            fd.type = _TYPE[f.type]
        else:
            fd.type = _FD.TYPE_MESSAGE
            fd.type_name = f.type  # resolved by the pool as protoc would, from the innermost scope outwards
    for n in msg.nested:
        _message_proto(n, out.nested_type.add())


def _message_class(package: str | None, root: _Message, imports: list[str], full_name: str) -> Any:
    import importlib

    pool = descriptor_pool.DescriptorPool()
    for module in {f: m for f, m in _IMPORTS.values() if f in imports}.values():  # wrappers share one file
        dep = descriptor_pb2.FileDescriptorProto()
        importlib.import_module(module).DESCRIPTOR.CopyToProto(dep)
        pool.Add(dep)
    file = descriptor_pb2.FileDescriptorProto(name="connect.proto", syntax="proto3", dependency=imports)
    if package is not None:
        file.package = package
    _message_proto(root, file.message_type.add())
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(full_name))
