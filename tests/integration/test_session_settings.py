"""Values do not depend on the captured database's output settings. pgcdc reads every value as text: a database
(or role) whose DateStyle, IntervalStyle, bytea_output, extra_float_digits, client_encoding or lc_monetary
differs from the defaults printed texts the converters do not read (or bytes that are no UTF-8). pgcdc's
sessions set them (the first four as PgJDBC's do for Debezium); the same rows, snapshotted and streamed, give
the same events as in a database with the defaults. Other settings a database may carry change nothing either:
a time zone with local mean time offsets, an empty search_path, standard_conforming_strings off, serializable
transactions. (The test's own statements take values in forms no setting changes: decode() for bytea, a numeric
cast for money.)"""

from __future__ import annotations

from typing import Any

from pgcdc.local import PostgresCluster
from pgcdc.sink.memory import MemorySink
from tests.harness import Running, make_config, payload, wait_records

TABLE = ("CREATE TABLE public.s (id int PRIMARY KEY, d date, ts timestamp, tz timestamptz, tm time, iv interval, "
         "by bytea, f8 float8, f4 real, ad date[], ats timestamp[], aiv interval[], aby bytea[], t text, at text[], "
         "m money, atz timestamptz[], h public.hstore, e public.mood, ci public.citext)")
ROWS = ("({id}, '2026-11-27', '0001-01-01 00:00:00.000001', '1800-02-03 04:05:06.789+00', '23:59:59.999999', "
        "'-1 year 2 mons -3 days 04:05:06.5', decode('00ff5c27', 'hex'), '0.30000000000000004', '0.1', "
        "'{{2026-01-31,infinity,NULL}}', '{{\"1999-12-31 23:59:59\"}}', '{{\"1 day\",\"-00:00:01\"}}', "
        "ARRAY[decode('00', 'hex'), decode('ff', 'hex')], 'é€', '{{é,€}}', -1234567.89::numeric, "
        "'{{\"2026-02-03 04:05:06.789+05:30\",\"0001-01-01 00:00:00+00\",NULL}}', 'a=>1', 'ok', 'X'), "
        "({id2}, '4713-01-01 BC', 'infinity', '-infinity', '00:00:00', '0', decode('', 'hex'), "
        "'-1.7976931348623157e308', '3.4028235e38', '{{}}', '{{}}', '{{}}', '{{}}', '', '{{}}', 0::numeric, '{{}}', "
        "'', 'sad', '')")
ODD = {"DateStyle": "'SQL, DMY'", "IntervalStyle": "'sql_standard'", "bytea_output": "'escape'",
       "extra_float_digits": "0", "TimeZone": "'Asia/Kathmandu'", "search_path": "''",
       "standard_conforming_strings": "off", "default_transaction_isolation": "'serializable'",
       "client_encoding": "'LATIN9'"}


def _events(pg: PostgresCluster, dbname: str, run: str) -> list[dict[str, Any]]:
    pg.execute(f"DROP TABLE IF EXISTS public.s; {TABLE}", dbname)
    pg.execute(f"INSERT INTO public.s VALUES {ROWS.format(id=1, id2=2)}", dbname)
    sink = MemorySink()
    config = make_config(pg, dbname, **{"snapshot.mode": "initial", "slot.name": f"slot_{run}_{dbname}",
                                        "publication.name": f"pub_{run}_{dbname}",
                                        "datatype.propagate.source.type": ".+"})
    with Running(config, sink=sink):
        wait_records(sink, 2)
        pg.execute(f"INSERT INTO public.s VALUES {ROWS.format(id=3, id2=4)}", dbname)
        pg.execute("UPDATE public.s SET id = id + 10 WHERE id = 3", dbname)
        records = wait_records(sink, 7)
    return [{"key": r["key"], "op": payload(r)["op"] if r["value"] else None,
             "before": payload(r)["before"] if r["value"] else None,
             "after": payload(r)["after"] if r["value"] else None,
             "schema": r["value"]["schema"] if r["value"] else None} for r in records]


def _monetary_locale(pg: PostgresCluster) -> str:
    """A locale of the machine whose money text is not C's ('-1.234.567,89 €' in de_DE), else C: the locales
    initdb found are the server's libc collations."""
    rows = pg.execute("SELECT collcollate FROM pg_collation WHERE collprovider = 'c' AND collcollate NOT IN "
                      "('C', 'POSIX') AND collcollate NOT ILIKE 'C.%' AND collcollate NOT ILIKE 'en%' "
                      "ORDER BY collcollate ILIKE 'de%' DESC, collcollate LIMIT 1")
    return rows[0][0] if rows else "C"


def test_database_output_settings_do_not_change_events(pg: PostgresCluster, dbname: str) -> None:
    pg.execute("CREATE EXTENSION hstore; CREATE EXTENSION citext; CREATE TYPE mood AS ENUM ('sad', 'ok')", dbname)
    expected = _events(pg, dbname, "defaults")
    for name, value in {**ODD, "lc_monetary": f"'{_monetary_locale(pg)}'"}.items():
        pg.execute(f"ALTER DATABASE {dbname} SET {name} = {value}")
    assert pg.execute("SHOW DateStyle", dbname) == [("SQL, DMY",)]  # new sessions take them
    got = _events(pg, dbname, "odd")
    assert len(got) == len(expected) == 7
    assert got == expected
