"""A zoo of values compared with the real Debezium 3.6 in every decimal, binary and hstore handling mode, in a
snapshot and streaming: empty and null-element arrays of every array type, unconstrained numeric values whose
scale depends on how they are read, domains over every type with a type modifier (and domains over domains,
arrays of domains), and the schema defaults of NOT NULL columns of every type.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pgcdc.local import PostgresCluster
from tests.conformance.compare import SNAPSHOT_FIELDS, compare
from tests.conformance.test_debezium_streaming import run_both

EXTENSIONS = "CREATE EXTENSION hstore; CREATE EXTENSION ltree; CREATE EXTENSION citext;"

# Array types with the element type each one holds (the arrays Debezium leaves out are not here: they are
# compared in test_types_more.py).
ARRAY_TYPES = {
    "a_i2": "int2", "a_i4": "int4", "a_i8": "int8", "a_f4": "float4", "a_f8": "float8", "a_num": "numeric",
    "a_num52": "numeric(5,2)", "a_bool": "bool", "a_text": "text", "a_vc": "varchar(4)", "a_vcu": "varchar",
    "a_ch": "char(2)", "a_qc": '"char"', "a_by": "bytea", "a_date": "date", "a_time": "time",
    "a_time3": "time(3)", "a_ttz": "timetz", "a_ts": "timestamp", "a_ts3": "timestamp(3)", "a_tz": "timestamptz",
    "a_tz3": "timestamptz(3)", "a_uuid": "uuid", "a_json": "json", "a_jsonb": "jsonb", "a_inet": "inet",
    "a_cidr": "cidr", "a_mac": "macaddr", "a_mac8": "macaddr8", "a_oid": "oid", "a_r4": "int4range",
    "a_r8": "int8range", "a_rn": "numrange", "a_rts": "tsrange", "a_rtz": "tstzrange", "a_rd": "daterange",
    "a_bit1": "bit(1)", "a_bit3": "bit(3)", "a_hs": "hstore", "a_lt": "ltree", "a_ci": "citext",
    "a_tsv": "tsvector", "a_enum": "mood",
}
# One value of each element type (array literal text, quoted where needed).
ELEMENT = {
    "a_i2": "-2", "a_i4": "7", "a_i8": "9007199254740993", "a_f4": "1.5", "a_f8": "-0.25", "a_num": "1.50",
    "a_num52": "1.5", "a_bool": "t", "a_text": '"a b"', "a_vc": "abcd", "a_vcu": "xyz", "a_ch": "x",
    "a_qc": "c", "a_by": '"\\\\x00ff"', "a_date": "2024-01-02", "a_time": "12:34:56.789012",
    "a_time3": "12:34:56.789", "a_ttz": "12:34:56+02", "a_ts": '"2024-01-02 03:04:05.123456"',
    "a_ts3": '"2024-01-02 03:04:05.123"', "a_tz": '"2024-01-02 03:04:05.5+00"', "a_tz3": '"2024-01-02 03:04:05+00"',
    "a_uuid": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "a_json": '"{\\"a\\": 1}"', "a_jsonb": '"[1, 2]"',
    "a_inet": "10.0.0.1", "a_cidr": "10.0.0.0/8", "a_mac": "08:00:2b:01:02:03", "a_mac8": "08:00:2b:01:02:03:04:05",
    "a_oid": "42", "a_r4": '"[1,5)"', "a_r8": '"[1,2)"', "a_rn": '"(1.5,2]"', "a_rts": '"[2024-01-01 00:00,)"',
    "a_rtz": '"[2024-01-01 00:00+00,)"', "a_rd": '"[2024-01-01,2024-02-01)"', "a_bit1": "1", "a_bit3": "101",
    "a_hs": '"a=>1"', "a_lt": "top.sub", "a_ci": "MiXeD", "a_tsv": '"a fat cat"', "a_enum": "happy",
}
ARRAYS_SETUP = (
    "CREATE TABLE arrs (id int PRIMARY KEY, "
    + ", ".join(f"{c} {t}[]" for c, t in ARRAY_TYPES.items()) + ")"
)


def _row(id_: int, literal: str | None) -> str:
    values = ", ".join("NULL" if literal is None else f"'{literal.format(v=ELEMENT[c])}'" for c in ARRAY_TYPES)
    return f"INSERT INTO arrs VALUES ({id_}, {values})"


ARRAYS_ROWS = [
    _row(1, "{{}}"),  # empty arrays
    _row(2, "{{NULL}}"),  # one null element
    _row(3, "{{{v},NULL}}"),  # a value and a null
    _row(4, "{{NULL,{v},NULL}}"),
    _row(5, None),  # null arrays
    _row(6, "{{{v}}}"),
]

# Unconstrained numeric values whose scale a JDBC BigDecimal and PostgreSQL's text may disagree on.
NUMERIC_VALUES = ["1.000", "1e3", "0.000", "0", "100", "1.5e20", "-0.00100", "123.4500", "1e-20", "0.1",
                  "12345678901234567890.123456789", "-1", "NaN", "1000000", "0.000001", "2.50"]
NUMERIC_SETUP = (
    "CREATE TABLE nums (id int PRIMARY KEY, n numeric, n52 numeric(5,2), n200 numeric(30,0), an numeric[],"
    " an52 numeric(5,2)[])"
)
NUMERIC_ROWS = [
    f"INSERT INTO nums VALUES ({i}, '{v}', NULL, NULL, '{{{v},NULL}}', NULL)" for i, v in enumerate(NUMERIC_VALUES, 1)
] + [
    "INSERT INTO nums VALUES (100, NULL, 1.5, 123, '{}', '{}')",
    "INSERT INTO nums VALUES (101, NULL, '-0.01', 0, '{NULL}', '{NULL}')",
    "INSERT INTO nums VALUES (102, NULL, NULL, NULL, '{1.000,1e3,0.000,100,1.5e20,-0.00100}', '{1.5,NULL,-2}')",
    "INSERT INTO nums VALUES (103, NULL, 'NaN', NULL, '{1.5,NaN}', '{NaN,1}')",
    "INSERT INTO nums VALUES (104, NULL, NULL, NULL, '{Infinity}', NULL)",
    "UPDATE nums SET n = '10.10', an = '{10.10,NULL}' WHERE id = 1",
]

# Domains over every type with a type modifier, a domain over a domain, arrays of domains.
DOMAINS = {
    "d_num": "numeric(7,2)", "d_numu": "numeric", "d_vc": "varchar(5)", "d_ch": "char(3)", "d_bit": "bit(4)",
    "d_bit1": "bit(1)", "d_vb": "varbit(6)", "d_tm": "time(3)", "d_tm0": "time(0)", "d_ts": "timestamp(3)",
    "d_ts0": "timestamp(0)", "d_tz": "timestamptz(3)", "d_tz0": "timestamptz(0)", "d_ttz": "timetz(2)",
    "d_iv": "interval(3)", "d_int": "int4", "d_text": "text", "d_dnum": "d_num", "d_dvc": "d_vc", "d_dts": "d_ts",
    "d_ddnum": "d_dnum",
}
DOMAIN_VALUES = {
    "d_num": "12345.678", "d_numu": "1.000", "d_vc": "abc", "d_ch": "x", "d_bit": "1010", "d_bit1": "1",
    "d_vb": "101", "d_tm": "12:34:56.789", "d_tm0": "12:34:56", "d_ts": "2024-01-02 03:04:05.123",
    "d_ts0": "2024-01-02 03:04:05", "d_tz": "2024-01-02 03:04:05.123+00", "d_tz0": "2024-01-02 03:04:05+00",
    "d_ttz": "12:34:56.78+02", "d_iv": "1 day 00:00:01.5", "d_int": "5", "d_text": "t", "d_dnum": "-1.5",
    "d_dvc": "ab", "d_dts": "2000-01-01 00:00:00.5", "d_ddnum": "7",
}
DOMAIN_ARRAYS = ["d_num", "d_vc", "d_ts", "d_int", "d_dnum"]
DOMAINS_SETUP = (
    "".join(f"CREATE DOMAIN {d} AS {t};" for d, t in DOMAINS.items())
    + "CREATE TABLE doms (id int PRIMARY KEY, " + ", ".join(f"c_{d} {d}" for d in DOMAINS) + ", "
    + ", ".join(f"ca_{d} {d}[]" for d in DOMAIN_ARRAYS) + ")"
)
DOMAINS_ROWS = [
    "INSERT INTO doms VALUES (1, " + ", ".join(f"'{v}'" for v in DOMAIN_VALUES.values()) + ", "
    + ", ".join(f"ARRAY['{DOMAIN_VALUES[d]}'::{d}, NULL]" for d in DOMAIN_ARRAYS) + ")",
    "INSERT INTO doms (id) VALUES (2)",
    "INSERT INTO doms (id, " + ", ".join(f"ca_{d}" for d in DOMAIN_ARRAYS) + ") VALUES (3, "
    + ", ".join("'{}'" for _ in DOMAIN_ARRAYS) + ")",
]

# Columns of every type with a DEFAULT: a function call (f_<column>(), like gen_random_uuid() or now(): Debezium
# puts its type's placeholder), another expression, a constant; NOT NULL and nullable.
DEFAULT_TYPES = {
    "i2": ("int2", "7"), "i4": ("int4", "7"), "i8": ("int8", "7"), "f4": ("float4", "1.5"), "f8": ("float8", "1.5"),
    "num": ("numeric", "1.50"), "num52": ("numeric(5,2)", "1.5"), "bool": ("bool", "true"), "txt": ("text", "'x'"),
    "vc": ("varchar(4)", "'ab'"), "ch": ("char(2)", "'a'"), "qc": ('"char"', "'c'"), "by": ("bytea", "'\\x01'"),
    "date": ("date", "'2024-01-02'"), "time": ("time", "'12:00:00'"), "time3": ("time(3)", "'12:00:00.5'"),
    "ttz": ("timetz", "'12:00:00+02'"), "ts": ("timestamp", "'2024-01-02 03:04:05'"),
    "ts3": ("timestamp(3)", "'2024-01-02 03:04:05.5'"), "tz": ("timestamptz", "'2024-01-02 03:04:05+00'"),
    "uuid": ("uuid", "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'"), "json": ("json", "'{}'"), "jsonb": ("jsonb", "'[]'"),
    "xml": ("xml", "'<a/>'"), "inet": ("inet", "'10.0.0.1'"), "cidr": ("cidr", "'10.0.0.0/8'"),
    "mac": ("macaddr", "'08:00:2b:01:02:03'"), "mac8": ("macaddr8", "'08:00:2b:01:02:03:04:05'"),
    "oid": ("oid", "42"), "r4": ("int4range", "'[1,5)'"), "rn": ("numrange", "'(1.5,2]'"),
    "rtz": ("tstzrange", "'empty'"), "iv": ("interval", "'1 day'"), "bit1": ("bit(1)", "B'1'"),
    "bit3": ("bit(3)", "B'101'"), "vb": ("varbit", "B'11'"), "money": ("money", "1.25"), "pt": ("point", "'(1,2)'"),
    "hs": ("hstore", "'a=>1'"), "lt": ("ltree", "'a.b'"), "ci": ("citext", "'X'"), "tsv": ("tsvector", "'a b'"),
    "enum": ("mood", "'ok'"), "ai": ("int4[]", "'{1}'"), "at": ("text[]", "'{x}'"), "an": ("numeric[]", "'{1.5}'"),
    "dnum": ("d_num2", "2.5"),
}
# An expression of each type PostgreSQL cannot fold into a constant when the table is created.
_EXPR = "(CASE WHEN random() < 2 THEN {v} END)::{t}"
DEFAULTS_SETUP = (
    "CREATE DOMAIN d_num2 AS numeric(6,2);"
    + "".join(f"CREATE FUNCTION f_{c}() RETURNS {t} LANGUAGE sql AS $$ SELECT {v}::{t} $$;"
              for c, (t, v) in DEFAULT_TYPES.items())
    + "CREATE TABLE defs (id int PRIMARY KEY, "
    + ", ".join(f"f_{c} {t} NOT NULL DEFAULT f_{c}()" for c, (t, v) in DEFAULT_TYPES.items())
    + ", " + ", ".join(f"n_{c} {t} DEFAULT f_{c}()" for c, (t, v) in DEFAULT_TYPES.items())
    + ", " + ", ".join(f"e_{c} {t} NOT NULL DEFAULT {_EXPR.format(v=v, t=t)}" for c, (t, v) in DEFAULT_TYPES.items())
    + ", " + ", ".join(f"k_{c} {t} NOT NULL DEFAULT {v}" for c, (t, v) in DEFAULT_TYPES.items())
    + ", " + ", ".join(f"o_{c} {t} DEFAULT {v}" for c, (t, v) in DEFAULT_TYPES.items())
    + ", g_uuid uuid NOT NULL DEFAULT gen_random_uuid(), g_ts timestamptz NOT NULL DEFAULT now(),"
    " g_ts3 timestamptz(3) DEFAULT now(), g_date date NOT NULL DEFAULT current_date,"
    " g_time time DEFAULT current_time, g_lts timestamp DEFAULT localtimestamp,"
    " g_txt text NOT NULL DEFAULT current_user,"
    " g_nul int DEFAULT NULL, g_nulc text DEFAULT NULL::text, g_neg int DEFAULT -7, g_negn numeric(5,2) DEFAULT -1.5,"
    " g_big int8 DEFAULT 9223372036854775807, g_f8 float8 DEFAULT 'NaN', g_str text DEFAULT 'it''s',"
    " g_ts_lit timestamptz DEFAULT '2024-01-02 03:04:05.5+02', s serial, bs bigserial)"
)
# The function-default columns are given values: the record compares the schemas, not the functions' results.
DEFAULTS_ROWS = ["INSERT INTO defs (id, g_uuid, g_ts, g_ts3, g_date, g_time, g_lts, g_txt) VALUES (1,"
                 " 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '2024-01-01 00:00:00+00', '2024-01-01 00:00:00+00',"
                 " '2024-01-01', '12:00:00', '2024-01-01 00:00:00', 'u')",
                 # A key-only old tuple: its NOT NULL columns are filled with the schema default or a fallback.
                 "DELETE FROM defs"]

# One database holds every table: one run of each connector per mode and phase.
SETUP = ";".join([EXTENSIONS + "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')", ARRAYS_SETUP, NUMERIC_SETUP,
                  DOMAINS_SETUP, DEFAULTS_SETUP])
ROWS = [*ARRAYS_ROWS, *NUMERIC_ROWS, *DOMAINS_ROWS, *DEFAULTS_ROWS]
MODES = {
    "precise_bytes_json": {},
    "double_hex_map": {"decimal.handling.mode": "double", "binary.handling.mode": "hex",
                       "hstore.handling.mode": "map"},
    "string_base64_json": {"decimal.handling.mode": "string", "binary.handling.mode": "base64"},
    "precise_urlsafe_map": {"binary.handling.mode": "base64-url-safe", "hstore.handling.mode": "map",
                            "interval.handling.mode": "string"},
}


@pytest.mark.parametrize("phase", ["streaming", "snapshot"])
@pytest.mark.parametrize("mode", sorted(MODES))
def test_zoo_matches_debezium(pg: PostgresCluster, dbname: str, tmp_path: Path, mode: str, phase: str) -> None:
    if phase == "snapshot":
        inserts = [row for row in ROWS if row.startswith("INSERT")]
        ours, theirs = run_both(pg, dbname, tmp_path, ";".join([SETUP, *inserts]), MODES[mode], [], snapshot=True)
    else:
        ours, theirs = run_both(pg, dbname, tmp_path, SETUP, MODES[mode], ROWS)
    problems = compare(ours, theirs, snapshot_fields=SNAPSHOT_FIELDS if phase == "snapshot" else ())
    differing = {p.split(":", 1)[0] for p in problems}
    print(f"zoo {mode} {phase}: {len(theirs)} Debezium records, {len(ours)} pgcdc records, "
          f"{len(differing)} differing records")
    (tmp_path / "problems.txt").write_text("\n".join(problems))
    assert theirs, "Debezium emitted nothing"
    assert not problems, "\n".join(problems[:60])
