"""Delta targets compared: delta-rs (`deltalake`, pgcdc's `fmt="delta"`) and delta-spark (Spark's own Delta,
`MERGE INTO` in the JVM) applying the same change stream on local[2].

The events are spark_apply.py's (creates, then updates and deletes over `--keys` keys, Debezium JSON with
schemas), split into `--batches` micro-batches by offset, as a stream arrives. Each batch is decoded once and
cached; every target then folds the same decoded rows with the same rule (the higher `__pgcdc_pos` wins,
delete markers kept), so the timing is the apply alone. The tables are compared at the end.

delta-spark must match PySpark's minor version (pgcdc.spark.session.DELTA_FOR_SPARK); its jar comes from Maven
Central through spark.jars.packages. Prints `target  events/s  seconds  rows`.
Run: `python benchmarks/spark_delta.py [--events N] [--keys N] [--batches N]`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

sys.path.insert(0, str(Path(__file__).parent))
from spark_apply import TOPIC, generate

from pgcdc.spark.apply import (
    _batch_rows, _load_state, _plan, _save_state, apply_delta, table_path)
from pgcdc.spark.changes import DELETED, POS, TableChanges, decode_changes
from pgcdc.spark.session import delta_package, ivy_home


def apply_delta_spark(spark: SparkSession, changes: TableChanges, path: Path) -> None:
    """The rule of pgcdc.spark.apply.apply_delta, with delta-spark's MERGE (no schema change or truncate in
    this stream)."""
    state = _load_state(path)
    schema, new, _changed = _plan(changes, state)
    batch = _batch_rows(changes, schema, new, {})  # no TOAST placeholders among these events
    if not (path / "_delta_log").exists():
        batch.write.format("delta").save(str(path))
    else:
        batch.createOrReplaceTempView("pgcdc_batch")
        on = " AND ".join(f"t.`{k}` = s.`{k}`" for k in new.keys)
        spark.sql(f"MERGE INTO delta.`{path}` t USING pgcdc_batch s ON {on} "
                  f"WHEN MATCHED AND s.{POS} > t.{POS} THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
    _save_state(path, new)


def session(memory: str) -> SparkSession:
    # Built here rather than with local_session(): the Python Kafka source it registers needs PySpark 4.2,
    # and the newest delta-spark on Maven Central is for Spark 4.1.
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    ivy = ivy_home()
    ivy.mkdir(parents=True, exist_ok=True)
    return (SparkSession.builder.master("local[2]").appName("pgcdc-delta-bench")
            .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
            .config("spark.sql.session.timeZone", "UTC").config("spark.driver.memory", memory)
            .config("spark.jars.packages", delta_package()).config("spark.jars.ivy", str(ivy))
            .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
            .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
            .getOrCreate())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--keys", type=int, default=40_000)
    parser.add_argument("--batches", type=int, default=4)
    parser.add_argument("--memory", default="3g")
    args = parser.parse_args()
    started = time.perf_counter()
    spark = session(args.memory)
    print(f"session with {delta_package()}: {time.perf_counter() - started:.0f} s", flush=True)
    spark.sparkContext.setLogLevel("ERROR")
    work = Path(tempfile.mkdtemp(prefix="pgcdc-delta-bench-"))
    try:
        generate(spark, args.events, args.keys, str(work / "raw"))
        raw = spark.read.parquet(str(work / "raw"))
        step = -(-args.events // args.batches)
        decoded: list[TableChanges] = []
        for b in range(args.batches):
            part = raw.filter((F.col("offset") >= b * step) & (F.col("offset") < (b + 1) * step))
            changes = decode_changes(part).tables[TOPIC]
            changes.rows = changes.rows.persist()
            changes.rows.count()
            decoded.append(changes)
        targets = {"delta-rs (deltalake)": apply_delta, "delta-spark": apply_delta_spark}
        print("target  events/s  seconds  rows", flush=True)
        for name, apply in targets.items():
            path = table_path(work / name.split()[0], TOPIC)
            started = time.perf_counter()
            for changes in decoded:
                apply(spark, changes, path)
            elapsed = time.perf_counter() - started
            rows = spark.read.format("delta").load(str(path)).filter(~F.col(DELETED)).count()
            print(f"{name}  {args.events / elapsed:,.0f}  {elapsed:.1f}  {rows:,}", flush=True)
        a, b = (spark.read.format("delta").load(str(table_path(work / n, TOPIC))) for n in ("delta-rs", "delta-spark"))
        assert a.exceptAll(b).count() == 0 and b.exceptAll(a).count() == 0, "the two targets differ"
        print("tables identical", flush=True)
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
