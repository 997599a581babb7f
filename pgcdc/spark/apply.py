"""Fold change rows into current-state tables: Parquet (rewritten per batch) and Delta Lake (MERGE).

A target table holds the data columns plus `__pgcdc_pos` (the position of the event that set the row) and
`__pgcdc_deleted` (a delete marker). Markers stay so that a replayed older event for a deleted key cannot bring
the row back: a row changes only when an event with a higher position arrives, which makes applying the
at-least-once stream idempotent, in any batch split, twice over or from the middle. `read_table` hides both.

Per table the target also keeps a small state file (`_pgcdc_state.json`, ignored by Parquet and Delta readers
since it starts with `_`): the position of the newest truncate (rows and events below it are gone for good)
and the position of the event whose schema the table follows (a replayed batch in an older schema does not
bring dropped columns back).
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from pgcdc.spark.changes import DELETED, OP, POS, QUARANTINE_SCHEMA, Decoded, TableChanges
from pgcdc.spark.toast import PLACEHOLDER, Test, placeholder_tests

STATE = "_pgcdc_state.json"


@dataclass
class TableState:
    version: int = 0  # Parquet: current data folder v<version>
    truncate_pos: str = ""
    schema_pos: str = ""
    schema: str = ""  # the data columns' Spark schema (JSON)
    keys: tuple[str, ...] = ()


def _load_state(path: Path) -> TableState:
    f = path / STATE
    if not f.exists():
        return TableState()
    data = json.loads(f.read_text())
    data["keys"] = tuple(data.get("keys", ()))
    return TableState(**data)


def _save_state(path: Path, state: TableState) -> None:
    path.mkdir(parents=True, exist_ok=True)
    tmp = path / (STATE + ".tmp")
    tmp.write_text(json.dumps(asdict(state)))
    os.replace(tmp, path / STATE)


def table_path(root: str | os.PathLike[str], topic: str) -> Path:
    """Where a topic's table lives under a target root: one folder per topic."""
    return Path(root) / topic


def _align(df: DataFrame, schema: T.StructType) -> DataFrame:
    """The data columns of `schema` (missing ones null, others cast), then the meta columns."""
    have = {f.name: f.dataType for f in df.schema.fields}
    cols = []
    for f in schema.fields:
        if f.name not in have:
            cols.append(F.lit(None).cast(f.dataType).alias(f.name))
        elif have[f.name] != f.dataType:
            cols.append(F.col(f"`{f.name}`").try_cast(f.dataType).alias(f.name))
        else:
            cols.append(F.col(f"`{f.name}`"))
    return df.select(*cols, F.col(POS), F.col(DELETED))


def _latest_per_key(df: DataFrame, keys: tuple[str, ...], unavailable: dict[str, Test]) -> DataFrame:
    """Each key's newest row. A value that is the unchanged-TOAST placeholder is the key's newest real value of
    that column instead, when one is there from after the key's last delete (toast.py)."""
    others = [c for c in df.columns if c not in keys]
    known_of = {c: f"__known{i}" for i, c in enumerate(unavailable)}  # the column's newest real value
    aggs = [F.max_by(F.struct(*[F.col(f"`{c}`") for c in others]), F.col(POS)).alias("__row")]
    if unavailable:
        live = ~F.col(DELETED)
        aggs.append(F.max(F.when(F.col(DELETED), F.col(POS))).alias("__gone"))
        aggs += [F.max_by(F.struct(F.col(POS).alias("p"), F.col(f"`{c}`").alias("v")),
                          F.when(live & ~test(F.col(f"`{c}`")), F.col(POS))).alias(known_of[c])
                 for c, test in unavailable.items()]
    folded = df.groupBy(*[F.col(f"`{k}`") for k in keys]).agg(*aggs)
    cols = []
    for c in others:
        value = F.col("__row").getField(c)
        if c in unavailable:
            known = F.col(known_of[c])
            usable = known.isNotNull() & (F.col("__gone").isNull() | (known.getField("p") > F.col("__gone")))
            value = F.when(unavailable[c](value) & usable, known.getField("v")).otherwise(value)
        cols.append(value.alias(c))
    return folded.select(*[F.col(f"`{k}`") for k in keys], *cols)


def _plan(changes: TableChanges, state: TableState) -> tuple[T.StructType, TableState, bool]:
    """The table's schema after this batch, the new state, and whether the schema changed."""
    current = T.StructType.fromJson(json.loads(state.schema)) if state.schema else None
    new = TableState(**asdict(state))
    new.keys = changes.keys or state.keys
    if not changes.schema.fields:  # a truncate-only batch
        schema = current or changes.schema
    elif current is None or changes.schema_pos > state.schema_pos:
        new.schema, new.schema_pos = json.dumps(changes.schema.jsonValue()), changes.schema_pos
        schema = changes.schema
    else:
        schema = current
    if changes.truncate_pos and changes.truncate_pos > state.truncate_pos:
        new.truncate_pos = changes.truncate_pos
    return schema, new, current is not None and current != schema


def _batch_rows(changes: TableChanges, schema: T.StructType, state: TableState,
                unavailable: dict[str, Test]) -> DataFrame:
    rows = _align(changes.rows.drop(OP), schema)
    if state.truncate_pos:
        rows = rows.filter(F.col(POS) > F.lit(state.truncate_pos))
    return _latest_per_key(rows, state.keys, unavailable)


def apply_parquet(spark: SparkSession, changes: TableChanges, path: str | os.PathLike[str],
                  placeholder: str = PLACEHOLDER) -> None:
    """Fold one batch into a Parquet table: read the current version, merge, write the next version."""
    path = Path(path)
    state = _load_state(path)
    schema, new, _changed = _plan(changes, state)
    if not schema.fields:  # a truncate of a table not seen yet: remember it
        _save_state(path, new)
        return
    unavailable = placeholder_tests(schema, new.keys, placeholder)
    batch = _batch_rows(changes, schema, new, unavailable)
    if state.version:
        existing = _align(spark.read.parquet(str(path / f"v{state.version}")), schema)
        if new.truncate_pos:
            existing = existing.filter(F.col(POS) > F.lit(new.truncate_pos))
        batch = _latest_per_key(existing.unionByName(batch), new.keys, unavailable)
    new.version = state.version + 1
    out = path / f"v{new.version}"
    if out.exists():
        shutil.rmtree(out)  # left by a batch that failed before its state was saved
    batch.write.mode("overwrite").parquet(str(out))
    _save_state(path, new)
    if state.version:
        shutil.rmtree(path / f"v{state.version}", ignore_errors=True)


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def apply_delta(spark: SparkSession, changes: TableChanges, path: str | os.PathLike[str],
                placeholder: str = PLACEHOLDER) -> None:
    """Fold one batch into a Delta table with the `deltalake` package: MERGE where the newer position wins."""
    from deltalake import DeltaTable, write_deltalake

    path = Path(path)
    state = _load_state(path)
    schema, new, changed = _plan(changes, state)
    if not schema.fields:
        _save_state(path, new)
        return
    unavailable = placeholder_tests(schema, new.keys, placeholder)
    rows = _batch_rows(changes, schema, new, unavailable)
    columns = rows.columns
    # A placeholder the batch could not replace takes the target's value in the MERGE: flagged per column.
    flags = {c: f"__pgcdc_unavailable{i}" for i, c in enumerate(unavailable)}
    batch = rows.select("*", *(unavailable[c](F.col(f"`{c}`")).alias(f) for c, f in flags.items())).toArrow()
    exists = DeltaTable.is_deltatable(str(path))
    if not exists:
        write_deltalake(str(path), batch.select(columns), mode="overwrite")
        _save_state(path, new)
        return
    table = DeltaTable(str(path))
    if new.truncate_pos and new.truncate_pos != state.truncate_pos:
        table.delete(f"{POS} <= '{new.truncate_pos}'")
    if changed:
        # Columns added, dropped or retyped: rewrite the table in the new schema (rare; Delta cannot drop or
        # retype a column in place without column mapping).
        current = _read_delta(spark, path, state)
        write_deltalake(str(path), _align(current, schema).toArrow(), mode="overwrite", schema_mode="overwrite")
        table = DeltaTable(str(path))
    predicate = " AND ".join(f"t.{_quote(k)} = s.{_quote(k)}" for k in new.keys)
    updates = {_quote(c): f"s.{_quote(c)}" for c in columns}
    for c, flag in flags.items():
        updates[_quote(c)] = f"CASE WHEN s.{flag} AND NOT t.{DELETED} THEN t.{_quote(c)} ELSE s.{_quote(c)} END"
    (table.merge(batch, predicate=predicate, source_alias="s", target_alias="t")
     .when_matched_update(updates, predicate=f"s.{POS} > t.{POS}")
     .when_not_matched_insert({_quote(c): f"s.{_quote(c)}" for c in columns})
     .execute())
    _save_state(path, new)


TARGETS = {"parquet": apply_parquet, "delta": apply_delta}


def apply_changes(spark: SparkSession, decoded: Decoded, root: str | os.PathLike[str],
                  fmt: str = "parquet", quarantine: str | os.PathLike[str] | None = None,
                  placeholder: str = PLACEHOLDER) -> dict[str, int]:
    """Apply every table of a decoded batch under `root` (one table per topic); quarantined records are
    appended to a Parquet table at `quarantine` (default `<root>/_quarantine`). Returns rows quarantined per
    reason. `placeholder`: the connector's `unavailable.value.placeholder` (an unchanged TOASTed value keeps
    the target's value). Usable as is from `foreachBatch`."""
    apply = TARGETS[fmt]
    for topic, changes in decoded.tables.items():
        changes.rows.persist()
        try:
            apply(spark, changes, table_path(root, topic), placeholder)
        finally:
            changes.rows.unpersist()
    counts: dict[str, int] = {}
    if decoded.quarantine is not None:
        q = decoded.quarantine.persist()
        counts = {r["reason"]: r["count"] for r in q.groupBy("reason").count().collect()}
        if counts:
            q.write.mode("append").parquet(str(quarantine or Path(root) / "_quarantine"))
        q.unpersist()
    return counts


def read_table(spark: SparkSession, path: str | os.PathLike[str], fmt: str = "parquet",
               meta: bool = False) -> DataFrame:
    """The current rows of a target table (delete markers and position columns hidden unless meta=True)."""
    path = Path(path)
    if fmt == "delta":
        df = _read_delta(spark, path)
    else:
        state = _load_state(path)
        df = spark.read.parquet(str(path / f"v{state.version}"))
    if meta:
        return df
    return df.filter(~F.col(DELETED)).drop(POS, DELETED)


def _read_delta(spark: SparkSession, path: Path, state: TableState | None = None) -> DataFrame:
    """A Delta table as a Spark DataFrame in the schema the table was written with (Arrow alone would turn
    TIMESTAMP_NTZ columns into TIMESTAMP)."""
    from deltalake import DeltaTable

    state = state or _load_state(path)
    data = T.StructType.fromJson(json.loads(state.schema))
    schema = T.StructType([*data.fields, T.StructField(POS, T.StringType()), T.StructField(DELETED, T.BooleanType())])
    table = DeltaTable(str(path)).to_pyarrow_table()
    return spark.createDataFrame(table.select(schema.names), schema=schema)


def read_quarantine(spark: SparkSession, path: str | os.PathLike[str]) -> DataFrame:
    p = Path(path)
    if not p.exists():
        return spark.createDataFrame([], QUARANTINE_SCHEMA)
    return spark.read.parquet(str(p))
