"""Unchanged TOASTed values of every type that can be stored out of line, compared with the real Debezium 3.6 in
each handling mode. Under REPLICA IDENTITY DEFAULT an update that leaves such a value alone does not send it;
Debezium writes `unavailable.value.placeholder` in a form that depends on the column's type and mode, or null
where its converter does not take that form (a numeric as a double, a float8[] ...)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pgcdc.errors import ValueConversionError
from pgcdc.local import PostgresCluster
from pgcdc.sink.file import FileSink
from tests.conformance.compare import assert_same
from tests.conformance.oracle import start_oracle
from tests.conformance.test_debezium_streaming import lines, run_both, slot_active
from tests.harness import Running, make_config, wait_for

# (column, type, an expression of about 8 KB of that type, built from the text `s`)
COLUMNS = [
    ("i2a", "int2[]", "(SELECT array_agg(g::int2) FROM generate_series(1, 4000) g)"),
    ("i4a", "int4[]", "(SELECT array_agg(g) FROM generate_series(1, 4000) g)"),
    ("i8a", "int8[]", "(SELECT array_agg(g::int8 * 100000000000) FROM generate_series(1, 2000) g)"),
    ("oa", "oid[]", "(SELECT array_agg(g::oid) FROM generate_series(1, 4000) g)"),
    ("da", "date[]", "(SELECT array_agg(date '2020-01-01' + g) FROM generate_series(1, 4000) g)"),
    ("ua", "uuid[]", "(SELECT array_agg(md5(g::text)::uuid) FROM generate_series(1, 600) g)"),
    ("ta", "text[]", "ARRAY[s, 'x']"),
    ("vca", "varchar(9000)[]", "ARRAY[s::varchar]"),
    ("bca", "char(3)[]", "(SELECT array_agg('abc'::char(3)) FROM generate_series(1, 4000) g)"),
    ("jsa", "json[]", "ARRAY[json_build_object('k', s)]"),
    ("jba", "jsonb[]", "ARRAY[jsonb_build_object('k', s)]"),
    ("bya", "bytea[]", "ARRAY[convert_to(s, 'UTF8')]"),
    ("nua", "numeric[]", "(SELECT array_agg(g * 1.25) FROM generate_series(1, 2000) g)"),
    ("f8a", "float8[]", "(SELECT array_agg(g * 0.25) FROM generate_series(1, 2000) g)"),
    ("f4a", "float4[]", "(SELECT array_agg((g * 0.5)::float4) FROM generate_series(1, 4000) g)"),
    ("boa", "bool[]", "(SELECT array_agg(g % 2 = 0) FROM generate_series(1, 9000) g)"),
    ("tsa", "timestamp[]",
     "(SELECT array_agg(timestamp '2020-01-01' + g * interval '1 s') FROM generate_series(1, 2000) g)"),
    ("tza", "timestamptz[]",
     "(SELECT array_agg(timestamptz '2020-01-01Z' + g * interval '1 s') FROM generate_series(1, 2000) g)"),
    ("tma", "time[]", "(SELECT array_agg(time '00:00' + g * interval '1 s') FROM generate_series(1, 2000) g)"),
    ("iva", "interval[]", "(SELECT array_agg(g * interval '1 s') FROM generate_series(1, 1000) g)"),
    ("ina", "inet[]", "(SELECT array_agg(('10.0.' || (g % 250) || '.1')::inet) FROM generate_series(1, 2000) g)"),
    ("ea", "mood[]", "(SELECT array_agg('ok'::mood) FROM generate_series(1, 4000) g)"),
    ("nr", "numrange", "numrange(0, (repeat('9', 9000) || '.5')::numeric)"),
    ("nu", "numeric", "(repeat('7', 9000) || '.25')::numeric"),
    ("by", "bytea", "convert_to(s, 'UTF8')"),
    ("js", "json", "json_build_object('k', s)"),
    ("x", "xml", "xmlelement(name a, s)"),
    ("tv", "tsvector", "to_tsvector('simple', s || ' ' || reverse(s))"),
    ("hs", "hstore", "hstore('k', s)"),
    ("ci", "citext", "s::citext"),
    ("nf", "numeric(1000, 2)", "(repeat('3', 990) || '.25')::numeric"),
    ("dia", "ints", "(SELECT array_agg(g) FROM generate_series(1, 4000) g)"),
    ("dt", "words", "s"),
    ("vb", "varbit", "(SELECT string_agg((g % 2)::text, '')::varbit FROM generate_series(1, 80000) g)"),
]
SETUP = (
    "CREATE EXTENSION hstore; CREATE EXTENSION citext; CREATE TYPE mood AS ENUM ('ok', 'sad');"
    "CREATE DOMAIN ints AS int[]; CREATE DOMAIN words AS text;"
    "CREATE TABLE tp (id int PRIMARY KEY, n int, " + ", ".join(f"{c} {t}" for c, t, _ in COLUMNS)
    + ") WITH (toast_tuple_target = 128);"  # every value out of line
    "ALTER TABLE tp " + ", ".join(f"ALTER COLUMN {c} SET STORAGE EXTERNAL" for c, _, _ in COLUMNS)
)
WORKLOAD = [
    "INSERT INTO tp SELECT 1, 0, " + ", ".join(e for _, _, e in COLUMNS)
    + " FROM (SELECT string_agg(md5(g::text), '') AS s FROM generate_series(1, 256) g) src",
    "UPDATE tp SET n = 1",  # every TOASTed value unchanged
    "UPDATE tp SET n = 2, nu = 0.5, ta = '{a}', i4a = '{1}'",  # some changed
    "DELETE FROM tp",
]
MODES = {
    "defaults": {},
    "double_base64": {"decimal.handling.mode": "double", "binary.handling.mode": "base64"},
    "string_hex": {"decimal.handling.mode": "string", "binary.handling.mode": "hex", "hstore.handling.mode": "map",
                   "interval.handling.mode": "string"},
    "base64_url_connect": {"binary.handling.mode": "base64-url-safe", "time.precision.mode": "connect",
                           "unavailable.value.placeholder": "hex:00ff7f"},
}


@pytest.mark.parametrize("mode", sorted(MODES))
def test_unchanged_toasted_values_of_every_type(pg: PostgresCluster, dbname: str, tmp_path: Path, mode: str) -> None:
    ours, theirs = run_both(pg, dbname, tmp_path, SETUP, {"include.unknown.datatypes": "true", **MODES[mode]},
                            WORKLOAD)
    assert_same(f"unchanged TOAST, {mode}", ours, theirs)


# A NOT NULL column whose placeholder is null: Debezium cannot put the placeholder in the field and leaves it null
# (a warning says why), the required field refuses the null, and Debezium stops; pgcdc stops too, naming the column and
# REPLICA IDENTITY FULL (tests/integration/test_toast_not_null.py). One Debezium run per case, as it stops on the
# first such field: (case, column type, a value of it, connector properties, Debezium's warning, the field's schema
# type in its stop).
NOT_NULL_CASES = [
    ("float8_array", "float8[]", "(SELECT array_agg(g * 0.5) FROM generate_series(1, 3000) g)", {},
     'DataException: Invalid Java object for schema with type ARRAY: class java.lang.String for field: "v"', "ARRAY"),
    ("int2_array", "int2[]", "(SELECT array_agg(g::int2) FROM generate_series(1, 4000) g)", {},
     'DataException: Invalid Java object for schema with type ARRAY: class java.lang.String for field: "v"', "ARRAY"),
    ("varbit", "varbit", "(SELECT string_agg((g % 2)::text, '')::varbit FROM generate_series(1, 80000) g)", {},
     'DataException: Invalid Java object for schema "io.debezium.data.Bits" with type BYTES: class java.lang.String '
     'for field: "v"', "BYTES"),
    ("numeric_double", "numeric", "('0.' || repeat('7', 9000))::numeric", {"decimal.handling.mode": "double"},
     'DataException: Invalid Java object for schema with type FLOAT64: class java.lang.String for field: "v"',
     "FLOAT64"),
    ("numeric_variable_scale", "numeric", "('0.' || repeat('7', 9000))::numeric", {},
     'DataException: Invalid Java object for schema "io.debezium.data.VariableScaleDecimal" with type STRUCT: '
     'class java.lang.String for field: "v"', "STRUCT"),
    ("numeric_decimal", "numeric(1000, 2)", "(repeat('3', 990) || '.25')::numeric", {},
     'DataException: Invalid Java object for schema "org.apache.kafka.connect.data.Decimal" with type BYTES: '
     'class java.lang.String for field: "v"', "BYTES"),
    ("bytea_base64", "bytea", "convert_to(repeat('x', 9000), 'UTF8')", {"binary.handling.mode": "base64"},
     "Unexpected JDBC BINARY value for field v with schema Schema{STRING}", "STRING"),
]


@pytest.mark.parametrize(("column_type", "value", "props", "warning", "schema_type"),
                         [c[1:] for c in NOT_NULL_CASES], ids=[c[0] for c in NOT_NULL_CASES])
def test_debezium_stops_on_an_unchanged_toasted_not_null_value(pg: PostgresCluster, dbname: str, tmp_path: Path,
                                                                column_type: str, value: str, props: dict[str, str],
                                                                warning: str, schema_type: str) -> None:
    # `pad` makes the row long enough to be TOASTed at all (a numeric(1000, 2) alone is at most ~500 bytes).
    pg.execute(f"CREATE TABLE tn (id int PRIMARY KEY, n int, pad text, v {column_type} NOT NULL) "
               "WITH (toast_tuple_target = 128);"  # every value out of line
               "ALTER TABLE tn ALTER COLUMN pad SET STORAGE EXTERNAL, ALTER COLUMN v SET STORAGE EXTERNAL", dbname)
    theirs, ours = tmp_path / "debezium.jsonl", tmp_path / "pgcdc.jsonl"
    common = {"topic.prefix": "dbserver1", "snapshot.mode": "no_data", **props}
    oracle = start_oracle({"name": "oracle", "config": {**pg.connection_properties(dbname), **common,
                                                        "slot.name": f"dbz_{dbname}",
                                                        "publication.name": f"dbzpub_{dbname}"}}, theirs)
    try:
        wait_for(lambda: slot_active(pg, f"dbz_{dbname}") or oracle.poll() is not None, 120, "Debezium to stream")
        config = make_config(pg, dbname, **{**common, "name": "pgcdc", "slot.name": f"pgcdc_{dbname}",
                                            "publication.name": f"pgcdcpub_{dbname}"})
        with pytest.raises(ValueConversionError, match=r"an update left the TOASTed value of NOT NULL column "
                           r"public\.tn\.v \(") as stopped, Running(config, sink=FileSink(str(ours))) as running:
            pg.execute(f"INSERT INTO tn VALUES (1, 0, repeat('p', 3000), {value})", dbname)
            # Both write the insert before the update comes (else Debezium may stop before writing it).
            wait_for(lambda: lines(theirs) == 1 and lines(ours) == 1, 60, "the insert")
            pg.execute("UPDATE tn SET n = 1", dbname)
            wait_for(lambda: oracle.poll() is not None and running.error is not None, 60, "both to stop")
    finally:
        theirs.with_suffix(".stop").touch()
        code = oracle.wait(90)
    assert code == 1 and lines(theirs) == 1 and lines(ours) == 1, "only the insert is written"
    log = (tmp_path / "debezium.jvm.log").read_text()
    assert warning in log
    assert ('Caused by: org.apache.kafka.connect.errors.DataException: Invalid value: null used for required '
            f'field: "v", schema type: {schema_type}') in log
    print(f"Debezium: {warning} / {schema_type}\npgcdc: {stopped.value}")
