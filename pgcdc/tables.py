"""What each captured table's events are built from: the envelope settings the configuration gives, the
TableEvents of a table as a Relation describes it, and a Relation read from the catalog for snapshots."""

from __future__ import annotations

from collections.abc import Callable

from pgcdc.config import ConnectorConfig
from pgcdc.envelope.columns import ColumnRules
from pgcdc.envelope.table import ColumnSpec, EnvelopeSettings, TableEvents
from pgcdc.pgtypes import Modes
from pgcdc.protocol import messages as m
from pgcdc.source.catalog import Catalog

Lookup = Callable[[m.Relation], TableEvents | None]


def envelope_settings(config: ConnectorConfig, column_rules: ColumnRules | None, *, server_version: int,
                      snapshot: bool = False) -> EnvelopeSettings:
    """`server_version`: the captured server's server_version_num (which float texts it prints); `snapshot`:
    values as Debezium reads them in a snapshot (through JDBC, which renders a few differently)."""
    c = config
    return EnvelopeSettings(
        topic_prefix=c.topic_prefix,
        modes=Modes(decimal=c.decimal_handling_mode, time=c.time_precision_mode,
                    binary=c.binary_handling_mode, interval=c.interval_handling_mode,
                    hstore=c.hstore_handling_mode, money_digits=c.money_fraction_digits,
                    include_unknown=c.include_unknown_datatypes, snapshot=snapshot,
                    shortest_floats=server_version >= 120000),
        key_schemas=c.key_converter_schemas_enable, value_schemas=c.value_converter_schemas_enable,
        placeholder=c.unavailable_value_placeholder, message_key_columns=c.message_key_columns,
        propagate_columns=c.column_propagate_source_type, propagate_datatypes=c.datatype_propagate_source_type,
        column_rules=column_rules, topic_delimiter=c.topic_delimiter,
        topic_strategy=c.topic_naming_strategy, schema_name_mode=c.schema_name_adjustment_mode,
        field_name_mode=c.field_name_adjustment_mode,
        value_null_defaults=_replaces_nulls(c, "value"), key_null_defaults=_replaces_nulls(c, "key"),
    )


def _replaces_nulls(config: ConnectorConfig, side: str) -> bool:
    spec = config.converter_specs.get(side)
    return True if spec is None else bool(spec.replace_null_with_default)


def table_lookup(config: ConnectorConfig, catalog: Catalog, settings: EnvelopeSettings) -> Lookup:
    """A Relation -> its table's events (None: not captured). Column types come from the catalog while it
    agrees with the Relation, otherwise from the Relation's type OIDs."""

    def lookup(rel: m.Relation) -> TableEvents | None:
        if not config.captures(rel.namespace, rel.name):
            return None
        info = catalog.table(rel.oid)
        by_name = {c.name: c for c in info.columns} if info is not None else {}
        cols = []
        for c in rel.columns:
            ci = by_name.get(c.name)
            if ci is not None and ci.type_oid == c.type_oid:
                # (the catalog's modifier: pgoutput sends -1 for a domain column, whose modifier is the domain's)
                cols.append(ColumnSpec(c.name, ci.type_name, ci.base_type_name, ci.type_modifier, ci.not_null,
                                       ci.default, ci.enum_labels, ci.domain))
            else:  # the catalog moved on since this change was written: the type comes from the Relation
                base, type_name, labels, typmod = catalog.type_of(c.type_oid, c.type_modifier)
                cols.append(ColumnSpec(c.name, type_name, base, typmod, ci.not_null if ci else False,
                                       ci.default if ci else None, labels))
        pk = info.key if info is not None else tuple(c.name for c in rel.columns if c.is_key)
        return TableEvents(rel.namespace, rel.name, cols, pk, settings)

    return lookup


def catalog_relation(catalog: Catalog, schema: str, table: str) -> m.Relation | None:
    """The Relation message pgoutput would send for a table as the catalog has it now (None: no such table)."""
    oid = catalog.table_oid(schema, table)
    info = catalog.table(oid) if oid is not None else None
    if info is None:
        return None
    return m.Relation(None, info.oid, schema, table, info.replica_identity, tuple(
        m.Column(1 if col.name in info.primary_key else 0, col.name, col.type_oid, col.type_modifier)
        for col in info.columns))


def snapshot_lookup(config: ConnectorConfig, catalog: Catalog, column_rules: ColumnRules | None
                    ) -> Callable[[str, str], TableEvents | None]:
    """(schema, table) -> the events of a snapshot of that table (None: gone or not captured)."""
    settings = envelope_settings(config, column_rules, server_version=catalog.server_version, snapshot=True)
    lookup = table_lookup(config, catalog, settings)

    def build(schema: str, table: str) -> TableEvents | None:
        rel = catalog_relation(catalog, schema, table)
        return lookup(rel) if rel is not None else None

    return build

