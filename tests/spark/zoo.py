"""The type zoo: one keyed table per family of PostgreSQL types, with the values at the edges (infinite dates
and timestamps, NaN and 50-digit numerics, bit strings, points, addresses, ranges, arrays), inserted before
pgcdc starts (snapshot) and again while it streams, then updated, deleted and truncated.

Each table's VALUES are given once; the snapshot inserts them with ids 1..n, the stream with ids 101..100+n.
"""

from __future__ import annotations

ZOO: dict[str, tuple[str, list[str]]] = {
    # table: (columns after `id int PRIMARY KEY`, rows of values for them)
    "z_int": ("a smallint, b int, c bigint, d oid",
              ["-32768, -2147483648, -9223372036854775808, 0", "32767, 2147483647, 9223372036854775807, 4294967295",
               "NULL, NULL, NULL, NULL"]),
    "z_numeric": ("fixed numeric(12,3), var numeric, wide numeric(60,10), small numeric(5,0)",
                  ["1.5, 2.25, 12345678901234567890.0123456789, 99999",
                   "'NaN', 'NaN', 'NaN', 'NaN'",
                   "-0.001, 12345678901234567890123456789012345678901234567890, "
                   "12345678901234567890123456789012345678901234567890, -99999",
                   "0, 0.000000000000000001, -1e-10, 0", "NULL, NULL, NULL, NULL"]),
    "z_float": ("r real, d float8",
                ["1.5, 2.5", "'NaN', 'NaN'", "'Infinity', '-Infinity'", "-0, 1e308", "1e-38, 5e-324",
                 "NULL, NULL"]),
    "z_text": ("t text, v varchar(10), c char(5), ci citext, n name",
               ["'plain', 'v', 'c', 'MiXeD', 'nm'", "'ü ✓ \"q\" \\\\', '', '', '', ''",
                "NULL, NULL, NULL, NULL, NULL"]),
    "z_bytea": ("b bytea", ["'\\x00ff7f80'", "''", "NULL"]),
    "z_bits": ("b1 bit(1), b8 bit(8), vb varbit, vb16 varbit(16)",
               ["B'1', B'10100001', B'1', B'0001'", "B'0', B'00000000', B'', B'1111000011110000'",
                "B'1', B'00000001', B'0000000000000000000000000000000000001', B'0'", "NULL, NULL, NULL, NULL"]),
    "z_date": ("d date, d2 date",
               ["'2020-02-29', '0001-01-01'", "'infinity', '9999-12-31'", "'1970-01-02', '1970-01-01'",
                "'50000-06-07', '1969-12-31'", "NULL, NULL"]),
    "z_time": ("t time, t3 time(3), tz timetz",
               ["'00:00:00', '23:59:59.999', '12:34:56.789012+05:30'", "'23:59:59.999999', '12:00:00', '00:00:00-08'",
                "'24:00:00', '00:00:00.001', '23:59:59+00'", "NULL, NULL, NULL"]),
    "z_timestamp": ("ts timestamp, ts3 timestamp(3), tstz timestamptz",
                    ["'2020-02-29 12:34:56.789012', '2020-02-29 12:34:56.789', '2021-06-01 12:00:00.654321+02'",
                     "'infinity', '-infinity', 'infinity'", "'-infinity', 'infinity', '-infinity'",
                     "'12345-06-07 00:00:00', '0001-01-01 00:00:00', '0001-01-01 00:00:00+00'",
                     "'0044-03-15 12:00:00 BC', '9999-12-31 23:59:59.999', '9999-12-31 23:59:59.999999+00'",
                     "NULL, NULL, NULL"]),
    "z_interval": ("i interval",
                   ["'1 year 2 mons 3 days 04:05:06.789'", "'-1 days -00:00:01.5'", "'1 mon'", "'0'",
                    "'-178 years -0.000001 s'", "NULL"]),
    "z_money": ("m money", ["12.34", "-1234567.89", "0", "'92233720368547758.07'", "NULL"]),
    "z_net": ("ip inet, net cidr, mac macaddr, mac8 macaddr8",
              ["'192.168.0.1', '10.0.0.0/8', '08:00:2b:01:02:03', '08:00:2b:01:02:03:04:05'",
               "'10.1.2.3/16', '192.168.100.128/25', '00:00:00:00:00:00', '00:00:00:00:00:00:00:00'",
               "'::1', '2001:db8::/32', NULL, NULL", "'2001:db8::1/64', '::/0', NULL, NULL",
               "NULL, NULL, NULL, NULL"]),
    "z_geo": ("p point, g geometry, gg geography",
              ["'(1,2)', 'SRID=4326;POINT(1 2)', 'POINT(13.4 52.5)'",
               "'(-1.5,1e10)', 'LINESTRING(0 0, 1 1)', 'SRID=4326;LINESTRING(0 0, 1 1)'",
               "'(0,-0)', 'POINT Z (1 2 3)', NULL", "NULL, NULL, NULL"]),
    "z_json": ("j json, jb jsonb",
               ["'{\"a\": 1, \"b\": [1, 2.50, null]}', '{\"a\": 1, \"b\": [1, 2.50, null]}'",
                "'{\"a\": 1, \"a\": 2}', '{\"a\": 1, \"a\": 2}'",
                "'[1e400, -0, 1.0E+2]', '[1e300, -0, 1.0E+2]'", "'\"\\u00fc\"', '\"\\u00fc\"'",
                "'  {\"sp\" : true}  ', 'null'",
                # deeper than Python's json parser goes
                "(repeat('[', 3000) || repeat(']', 3000))::json, '[]'", "NULL, NULL"]),
    "z_misc": ("u uuid, e mood, x xml, tv tsvector, lt ltree, hs hstore",
               ["'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'happy', '<a b=\"1\">t</a>', 'a fat cat', 'Top.Science', "
                "'a=>1, \"b c\"=>NULL'",
                "'00000000-0000-0000-0000-000000000000', 'sad', '', '', '', ''", "NULL, NULL, NULL, NULL, NULL, NULL"]),
    "z_range": ("i4 int4range, i8 int8range, n numrange, d daterange, ts tsrange, tz tstzrange",
                ["'[1,10)', '(,5]', '[1.5,2.5]', '[2020-01-01,2020-02-01)', '[2020-01-01 10:00,2020-01-02 10:00)', "
                 "'[2020-01-01 10:00+02,)'", "'empty', 'empty', '(,)', '[2020-01-01,infinity)', 'empty', 'empty'",
                 "NULL, NULL, NULL, NULL, NULL, NULL"]),
    "z_array": ("ia int[], ta text[], ua uuid[], na numeric(8,2)[], da date[], tsa timestamp[], ba bool[], "
                "fa float8[], ja jsonb[], inets inet[], ma money[], pa point[], bits bit(4)[]",
                ["'{1,NULL,-3}', '{a,NULL,\"b c\"}', '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}', '{1.25,NULL}', "
                 "'{2020-01-01,NULL}', '{\"2020-01-01 00:00:00\"}', '{t,f,NULL}', '{1.5,NaN}', "
                 "ARRAY['{\"a\":1}']::jsonb[], '{192.168.0.1,::1/128}', '{1.00}', '{\"(1,2)\"}', '{1010}'",
                 "'{}', '{}', '{}', '{}', '{}', '{\"12345-06-07 00:00:00\",\"2020-01-01 00:00:00\"}', "
                 "'{}', '{}', '{}', "
                 "'{}', '{}', '{}', '{}'",
                 "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL"]),
}

SETUP = ["CREATE EXTENSION IF NOT EXISTS postgis", "CREATE EXTENSION IF NOT EXISTS hstore",
         "CREATE EXTENSION IF NOT EXISTS citext", "CREATE EXTENSION IF NOT EXISTS ltree",
         "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')",
         *(f"CREATE TABLE {t} (id int PRIMARY KEY, {cols})" for t, (cols, _) in ZOO.items()),
         "CREATE TABLE z_truncate (id int PRIMARY KEY, v text)",
         "CREATE TABLE sentinel (id int PRIMARY KEY)"]


def inserts(offset: int) -> list[str]:
    return [f"INSERT INTO {t} VALUES " + ", ".join(f"({offset + i}, {r})" for i, r in enumerate(rows, 1))
            for t, (_, rows) in ZOO.items()]


SNAPSHOT = [*inserts(0), "INSERT INTO z_truncate SELECT g, 't' || g FROM generate_series(1, 10) g"]
STREAM = [
    *inserts(100),
    # BC dates only while streaming: Debezium reads a snapshot's dates, and date[] elements always, through
    # JDBC, which drops the era (4713-01-01 BC arrives as 4713-01-01; docs/spark.md)
    "UPDATE z_date SET d = '4713-01-01 BC' WHERE id IN (3, 103)",
    # updates and deletes over both halves
    *(f"UPDATE {t} SET id = id + 1000 WHERE id = 1" for t in ZOO),
    *(f"DELETE FROM {t} WHERE id = 102" for t in ZOO),
    # a truncate between changes of the same table, in one transaction and across transactions
    "UPDATE z_truncate SET v = 'before' WHERE id <= 5",
    "BEGIN; INSERT INTO z_truncate VALUES (11, 'in tx before'); TRUNCATE z_truncate; "
    "INSERT INTO z_truncate VALUES (1, 'in tx after'); COMMIT",
    "INSERT INTO z_truncate VALUES (2, 'after'), (3, 'after')",
    "UPDATE z_truncate SET v = 'updated after' WHERE id = 2",
    "INSERT INTO sentinel VALUES (1)",
]
TABLES = (*ZOO, "z_truncate")
