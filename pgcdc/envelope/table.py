"""Per-table event building: schemas, topic and converters precomputed when a Relation arrives.

The hot path (`row`, `key`, `value`) does one converter call per non-null value and one orjson.dumps per
record; everything named, formatted or validated is done here in the constructor.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pgcdc.codegen import define
from pgcdc.envelope import connect
from pgcdc.envelope.columns import ColumnRules, declared_length
from pgcdc.envelope.naming import SCHEMA_STRATEGY, adjust_name, data_topic
from pgcdc.envelope.placeholders import FIXED_LENGTH, placeholder_value
from pgcdc.envelope.propagate import source_parameters, with_parameters
from pgcdc.envelope.source import SOURCE_SCHEMA, TRANSACTION_SCHEMA
from pgcdc.envelope.template import TableTemplate
from pgcdc.errors import ConversionError, ValueConversionError
from pgcdc.lsn import format_lsn
from pgcdc.pgtypes import Converter, Modes, converter_for
from pgcdc.pgtypes.defaults import default_value, fallback
from pgcdc.protocol import UNCHANGED_TOAST

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class EnvelopeSettings:
    """The config values events depend on (a slice of ConnectorConfig, so envelope/ stays config-agnostic)."""

    topic_prefix: str
    modes: Modes
    key_schemas: bool = True
    value_schemas: bool = True
    placeholder: str = "__debezium_unavailable_value"
    message_key_columns: str = ""
    propagate_columns: tuple[str, ...] = ()  # column.propagate.source.type
    propagate_datatypes: tuple[str, ...] = ()  # datatype.propagate.source.type
    column_rules: ColumnRules | None = None  # column.include/exclude.list, mask, hash, truncate
    topic_delimiter: str = "."
    topic_strategy: str = SCHEMA_STRATEGY  # topic.naming.strategy
    schema_name_mode: str = "none"  # schema.name.adjustment.mode
    field_name_mode: str = "none"  # field.name.adjustment.mode
    # JsonConverter's replace.null.with.default per side (KIP-581, default true): a null field whose schema
    # has a default is written as that default.
    value_null_defaults: bool = True
    key_null_defaults: bool = True

    @property
    def source_snapshot(self) -> str | None:
        """source.snapshot of streamed events: Debezium leaves it unset there, and JsonConverter writes the
        field's default, "false", only when it replaces nulls (measured on 3.6)."""
        return "false" if self.value_null_defaults else None


@dataclass(frozen=True, slots=True)
class ColumnSpec:
    name: str
    type_name: str
    base_type_name: str
    type_modifier: int
    not_null: bool
    default: str | None = None  # the DEFAULT expression's text
    enum_labels: str | None = None  # for enum columns (and enum arrays): the labels, comma-separated
    domain: bool = False  # a domain over base_type_name


def key_columns_override(spec: str, schema: str, table: str) -> tuple[str, ...] | None:
    """message.key.columns: `<fully-qualified table regex>:<col>,<col>;…` (Debezium's syntax)."""
    import re

    for entry in filter(None, (e.strip() for e in spec.split(";"))):
        pattern, _, cols = entry.rpartition(":")
        if pattern and re.fullmatch(pattern, f"{schema}.{table}"):
            return tuple(c.strip() for c in cols.split(",") if c.strip())
    return None


class TableEvents:
    def __init__(self, schema: str, table: str, columns: Sequence[ColumnSpec], primary_key: Sequence[str],
                 settings: EnvelopeSettings) -> None:
        self.schema = schema
        self.table = table
        self.topic = data_topic(settings.topic_prefix, schema, table, delimiter=settings.topic_delimiter,
                                strategy=settings.topic_strategy)
        self.collection = f"{schema}.{table}"
        converters: list[Converter] = []
        for c in columns:
            try:
                converters.append(converter_for(c, settings.modes))
            except ConversionError as exc:
                raise ConversionError(f"table {schema}.{table}: {exc}") from None
        # Columns Debezium leaves out (geometric types without include.unknown.datatypes, point[]): pgoutput
        # still sends them, so `row` picks the kept positions; the snapshot selects only `names`.
        rules = settings.column_rules
        excluded = {i for i, c in enumerate(columns)
                    if rules is not None and rules.excluded(f"{schema}.{table}.{c.name}")}
        for i in excluded:
            converters[i] = dataclasses.replace(converters[i], dropped=True)
        kept = [i for i, conv in enumerate(converters) if not conv.dropped]
        self.keep: tuple[int, ...] | None = None
        if len(kept) < len(columns):
            for i, (c, conv) in enumerate(zip(columns, converters)):
                if conv.dropped and i not in excluded:
                    log.warning("%s.%s: column %s (%s) is left out of the events, as Debezium does", schema,
                                table, c.name, c.type_name)
            self.keep = tuple(kept)
            columns = [columns[i] for i in kept]
            converters = [converters[i] for i in kept]
        self.names = tuple(c.name for c in columns)
        # The events' field names (field.name.adjustment.mode); `names` stay the columns' for SQL and lookups.
        self.fields = tuple(adjust_name(n, settings.field_name_mode, field=True) for n in self.names)
        # A NOT NULL column whose value Debezium converts to null, which the required field refuses: it stops
        # (DataException, measured on 3.6): NaN or an infinity in a numeric column (a Connect decimal cannot carry
        # it), a numeric[] with such an element, an unknown type's array with a null element (include.unknown.
        # datatypes: the whole array is null then).
        converters = [dataclasses.replace(conv, fn=_required(conv.fn, said))
                      if c.not_null and (said := _nulled(c, conv)) else conv for c, conv in zip(columns, converters)]
        self.converters = tuple(converters)
        self.fns = tuple(c.fn for c in converters)
        self.placeholders = tuple(placeholder_value(conv, c.base_type_name, bool(c.domain), settings.placeholder,
                                                    settings.modes.binary) for c, conv in zip(columns, converters))
        # A NOT NULL column whose placeholder is null (a float8[], numeric as a double ...): Debezium puts the
        # placeholder text in the required field, which refuses it, and stops (DataException, measured on 3.6).
        # There is no value to write: the event fails (event.processing.failure.handling.mode), naming the fix.
        self.refused = {i: (f"an update left the TOASTed value of NOT NULL column {schema}.{table}.{c.name} "
                            f"({c.type_name}) unchanged, so PostgreSQL did not send it, and its type has no "
                            f"placeholder (Debezium stops here too); ALTER TABLE {schema}.{table} REPLICA IDENTITY "
                            "FULL has PostgreSQL send the old value")
                        for i, (c, ph) in enumerate(zip(columns, self.placeholders))
                        if c.not_null and ph is None and c.base_type_name not in FIXED_LENGTH}
        # Debezium finds a default's parser by the column's type name: a domain's has none.
        scales = [settings.modes.money_digits if c.base_type_name == "money"
                  else (c.type_modifier - 4) & 0xFFFF if c.type_modifier >= 4 else None for c in columns]
        defaults = [default_value(c.default, conv, None if c.domain else c.base_type_name, scale)
                    for c, conv, scale in zip(columns, converters, scales)]
        fallbacks = [fallback(conv, c.base_type_name, scale) if c.not_null else None
                     for c, conv, scale in zip(columns, converters, scales)]
        # A null in a full tuple stays null (a NOT NULL column cannot be null there: fallback is harmless).
        self.nulls = tuple(fallbacks)
        # The non-key columns of a key-only old tuple are absent, and Debezium fills them with the schema
        # default, else the type's fallback for NOT NULL columns, else null (measured on 3.6).
        self.absent = tuple(d if d is not None else f for d, f in zip(defaults, fallbacks))
        if rules is not None:  # masks, hashes, truncation: the values change, the schema's defaults do not
            nulls, absent, placeholders = list(self.nulls), list(self.absent), list(self.placeholders)
            for i, c in enumerate(columns):
                converters[i], fill = rules.apply(f"{schema}.{table}.{c.name}", converters[i],
                                                  declared_length(c.base_type_name, c.type_modifier))
                if fill is not None:
                    # An unchanged TOASTed value is masked, hashed or cut too: Debezium applies the rule to the
                    # placeholder it puts there (measured on 3.6).
                    nulls[i], absent[i], placeholders[i] = fill(nulls[i]), fill(absent[i]), fill(placeholders[i])
            self.converters = tuple(converters)
            self.fns = tuple(c.fn for c in converters)
            self.nulls, self.absent, self.placeholders = tuple(nulls), tuple(absent), tuple(placeholders)
        # replace.null.with.default: JsonConverter writes a null field as its schema's default — the unmasked
        # default, after the column rules left the value null (hash, truncate). Putting the default in `nulls`
        # does it with the row builders' existing None check, nothing more per value. Without it, a
        # key-only old tuple's absent nullable columns stay null: Debezium leaves them unset and only
        # Struct.get, which JsonConverter then does not use, would read the default (measured on 3.6).
        if settings.value_null_defaults:
            self.nulls = tuple(d if n is None else n for n, d in zip(self.nulls, defaults))
        else:
            self.absent = tuple(None if not c.not_null and d is not None else a
                                for c, a, d in zip(columns, self.absent, defaults))
        self.type_names = tuple(c.type_name for c in columns)

        key_cols = (key_columns_override(settings.message_key_columns, schema, table)
                    or tuple(k for k in primary_key if k in self.names))
        missing = [k for k in key_cols if k not in self.names]
        if missing:
            raise ConversionError(f"message.key.columns: table {schema}.{table} has no column {missing[0]!r}")
        self.key_index = tuple(self.names.index(k) for k in key_cols)
        # The key is taken from the row, whose nulls follow the value converter's replace.null.with.default;
        # a key converter that replaces where the value's does not puts the default back per key column.
        key_defaults = {self.fields[i]: defaults[i] for i in self.key_index
                        if not columns[i].not_null and defaults[i] is not None}
        if key_defaults and settings.value_null_defaults and not settings.key_null_defaults:
            name = next(iter(key_defaults))
            raise ConversionError(f"table {schema}.{table}: key column {name} is nullable with a default: "
                                  "key.converter.replace.null.with.default=false with the value converter's true "
                                  "is not supported yet")
        if settings.value_null_defaults or not settings.key_null_defaults:
            key_defaults = {}
        base = self.topic  # Debezium names the record schemas after the topic

        def schema_name(suffix: str) -> str:
            return adjust_name(f"{base}.{suffix}", settings.schema_name_mode, field=False)

        value_fields = [
            connect.field(f, with_parameters(conv.schema, source_parameters(
                schema, table, c.name, c.base_type_name, c.type_modifier, settings.propagate_columns,
                settings.propagate_datatypes)), not c.not_null, d)
            for f, c, conv, d in zip(self.fields, columns, converters, defaults)]
        row_schema = connect.struct(schema_name("Value"), value_fields, True)
        if self.key_index:
            key_fields = [connect.field(self.fields[i], converters[i].schema, not columns[i].not_null, defaults[i])
                          for i in self.key_index]
            key_schema: dict[str, Any] | None = connect.struct(schema_name("Key"), key_fields, False)
        else:
            key_schema = None
        envelope = connect.struct(schema_name("Envelope"), [
            connect.as_field("before", row_schema),
            connect.as_field("after", row_schema),
            connect.as_field("source", SOURCE_SCHEMA),
            connect.as_field("transaction", TRANSACTION_SCHEMA),
            {"type": "string", "optional": False, "field": "op"},
            {"type": "int64", "optional": True, "field": "ts_ms"},
            {"type": "int64", "optional": True, "field": "ts_us"},
            {"type": "int64", "optional": True, "field": "ts_ns"},
        ], False, version=2)
        self.key_wrap = connect.Wrapper(key_schema, settings.key_schemas)
        self.value_wrap = connect.Wrapper(envelope, settings.value_schemas)
        self.has_key = bool(self.key_index)
        self._row = _row_function(self.fields, self.fns, self.placeholders, self.refused)
        self.key_payload = _key_function(tuple(self.fields[i] for i in self.key_index), key_defaults)

    def row(self, values: Sequence[Any], lsn: int, key_only: bool = False) -> dict[str, Any]:
        """Column name -> converted value for one pgoutput tuple (`key_only`: an old tuple of kind 'K')."""
        nulls = self.absent if key_only else self.nulls
        if self.keep is not None and len(values) != len(self.names):  # a pgoutput tuple: every column
            values = [values[i] for i in self.keep]
        try:
            if len(values) == len(self.names):
                row: dict[str, Any] = self._row(values, nulls)
                return row
            return {
                name: (null if v is None else ph if v is UNCHANGED_TOAST else v if fn is None else fn(v))
                for name, fn, ph, null, v in zip(self.fields, self.fns, self.placeholders, nulls, values)
            }
        except Exception as exc:  # find the column on the cold path, to name it in the error
            raise self._conversion_error(values, lsn, exc) from None

    def _conversion_error(self, values: Sequence[Any], lsn: int, exc: Exception) -> ConversionError:
        return self.failing_value(values, lsn) or ValueConversionError(
            f"cannot convert a row of {self.schema}.{self.table} at LSN {format_lsn(lsn)}: {exc}")

    def located(self, values: Sequence[Any], where: str) -> str:
        """`where` and the row's key as PostgreSQL writes one (`row (id)=(2)`), for a row read from a table (a
        snapshot's: it has no LSN of its own). The cold path, after a value failed."""
        if not self.key_index:
            return where
        names = ", ".join(self.names[i] for i in self.key_index)
        shown = ", ".join("null" if values[i] is None else str(values[i])[:60] for i in self.key_index)
        return f"{where}, row ({names})=({shown})"

    def failing_value(self, values: Sequence[Any], lsn: int, where: str | None = None) -> ConversionError | None:
        """The error naming the first value of a tuple (pgoutput's or COPY's) that does not convert, or whose
        converted value JSON cannot carry (an integer beyond 64 bits); None if every value does. The cold path
        after a row failed: each value is converted and serialized alone. `where` replaces "at LSN …" where the
        row has no LSN of its own (a snapshot's)."""
        if self.keep is not None and len(values) != len(self.names):
            values = [values[i] for i in self.keep]
        where = where or f"at LSN {format_lsn(lsn)}"
        for i, (name, fn, type_name, v) in enumerate(zip(self.names, self.fns, self.type_names, values)):
            if v is UNCHANGED_TOAST and i in self.refused:
                return ValueConversionError(f"cannot write an event of {self.schema}.{self.table} {where}: "
                                            f"{self.refused[i]}")
            if v is None or v is UNCHANGED_TOAST:
                continue
            try:
                connect.dumps(v if fn is None else fn(v))
            except Exception as inner:
                return ValueConversionError(
                    f"cannot convert {self.schema}.{self.table}.{name} ({type_name}) value {str(v)[:60]!r} "
                    f"{where}: {inner}")
        return None

    def update_rows(self, new: Sequence[Any], old: Sequence[Any] | None, old_kind: str | None,
                    lsn: int) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """(after, before) of an Update. With a full old tuple (REPLICA IDENTITY FULL) Debezium fills the
        new tuple's unchanged TOASTed values from it instead of writing placeholders (measured on 3.6)."""
        if old is not None and old_kind == "O" and any(v is UNCHANGED_TOAST for v in new):
            new = [o if v is UNCHANGED_TOAST else v for v, o in zip(new, old)]
        after = self.row(new, lsn)
        return after, (self.row(old, lsn, old_kind == "K") if old is not None else None)

    def key(self, row: dict[str, Any]) -> bytes | None:
        if not self.key_index:
            return None
        return self.key_wrap(self.key_payload(row))

    def value(self, payload: dict[str, Any]) -> bytes:
        return self.value_wrap(payload)

    def value_template(self, source: dict[str, Any], with_transaction: bool) -> TableTemplate:
        """The bytes `value` writes for this table's events, as a template (envelope/template.py); `source`
        holds the template's markers."""
        return TableTemplate(self.value_wrap, source, with_transaction)


def _nulled(c: ColumnSpec, conv: Converter) -> str | None:
    """Why Debezium may write null for a non-null value of the column (None: it does not)."""
    schema = conv.schema
    decimal = ("bytes", "struct")  # decimal.handling.mode=precise
    if schema.get("type") == "array":
        items = schema["items"]
        if items.get("optional") is False:
            return "a NOT NULL array with a null element of a type Debezium requires (Debezium stops too)"
        if c.base_type_name == "_numeric":  # in every decimal.handling.mode: measured on 3.6
            return "a NOT NULL numeric array with a NaN or infinite element, which Debezium writes null (it stops too)"
        return None
    if c.base_type_name == "numeric" and schema.get("type") in decimal:
        return ("a NOT NULL column whose value a Connect decimal cannot carry (Debezium stops too; "
                "decimal.handling.mode=double or string carries it)")
    return None


def _required(fn: Any, said: str) -> Any:
    def convert(text: str) -> Any:
        value = fn(text)
        if value is None:
            raise ValueError(said)
        return value
    return convert


# `row` and `key_payload` are compiled per table when the Relation arrives: one dict display with a constant
# key and one expression per column, instead of a comprehension zipping five sequences per row (about half
# the cost per row; a 40-column row went from ~11 to ~5 us on our machines). Column names enter the source only
# as repr() literals; converters, placeholders and nulls are passed in, never formatted into it.
def _row_function(names: Sequence[str], fns: Sequence[Any], placeholders: Sequence[Any],
                  refused: dict[int, str] | None = None) -> Any:
    """`f(values, nulls) -> {name: value}`: a value that is None becomes `nulls[i]`, UNCHANGED_TOAST the
    placeholder (a column in `refused`: ValueError with its text), any other goes through the column's
    converter (none: kept as is), as `row` always did."""
    scope: dict[str, Any] = {"T": UNCHANGED_TOAST, "P": tuple(placeholders), "R": _refuse}
    items = []
    for i, (name, fn) in enumerate(zip(names, fns)):
        converted = f"v{i}" if fn is None else f"f{i}(v{i})"
        if fn is not None:
            scope[f"f{i}"] = fn
        placeholder = f"P[{i}]"
        if refused and i in refused:
            scope[f"r{i}"] = refused[i]
            placeholder = f"R(r{i})"
        items.append(f"{name!r}: (N[{i}] if v{i} is None else {placeholder} if v{i} is T else {converted})")
    unpack = "".join(f"v{i}, " for i in range(len(names)))
    source = (f"def row(values, N):\n    {unpack} = values\n    return {{{', '.join(items)}}}\n"
              if names else "def row(values, N):\n    return {}\n")
    return define(source, "<pgcdc row>", scope, "row")


def _refuse(said: str) -> Any:
    raise ValueError(said)


def _key_function(names: tuple[str, ...], defaults: dict[str, Any] | None = None) -> Any:
    """`f(row) -> {key column: value}`; a column in `defaults` has its null replaced by its default there."""
    scope: dict[str, Any] = {"D": defaults or {}}

    def item(n: str) -> str:
        if defaults and n in defaults:
            return f"{n!r}: (D[{n!r}] if row[{n!r}] is None else row[{n!r}])"
        return f"{n!r}: row[{n!r}]"

    source = f"def key(row):\n    return {{{', '.join(item(n) for n in names)}}}\n"
    return define(source, "<pgcdc key>", scope, "key")
