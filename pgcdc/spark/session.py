"""A local SparkSession set up as pgcdc's Spark side expects, and the streaming job that feeds the tables."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyspark
from pyspark.sql import SparkSession

from pgcdc.errors import ConfigError
from pgcdc.spark.schema import DecodeOptions

# delta-spark's release built for each Spark minor (the spark-sql version in its POM; Delta's PyPI package
# states the same range). Delta 4.4 (Spark 4.2) is not on Maven Central yet. Used by benchmarks/spark_delta.py;
# pgcdc's Delta target is delta-rs (docs/spark.md, "Targets").
DELTA_FOR_SPARK = {"4.0": "4.0.1", "4.1": "4.3.1"}


def kafka_package() -> str:
    """Spark's built-in `kafka` source, the build matching the installed PySpark."""
    return f"org.apache.spark:spark-sql-kafka-0-10_2.13:{pyspark.__version__}"


def delta_package() -> str:
    minor = ".".join(pyspark.__version__.split(".")[:2])
    if minor not in DELTA_FOR_SPARK:
        raise ConfigError(f"no delta-spark release is known for PySpark {pyspark.__version__} "
                          f"(known: Spark {', '.join(DELTA_FOR_SPARK)})")
    return f"io.delta:delta-spark_2.13:{DELTA_FOR_SPARK[minor]}"


def ivy_home() -> Path:
    """Where Spark's Ivy keeps what it fetched from Maven Central: fetched once, then read from disk."""
    return Path(os.environ.get("PGCDC_PG_CACHE", "/var/tmp/pgcdc")) / "ivy"


def local_session(master: str = "local[2]", packages: Sequence[str] = (), **conf: str) -> SparkSession:
    """local[N] with the settings of NOTES (loopback, this interpreter for workers, no UI, UTC, 2 shuffle
    partitions) and the `pgcdc_kafka` source registered.

    `packages`: Maven coordinates for spark.jars.packages (e.g. `kafka_package()`), resolved by Spark's Ivy
    into `ivy_home()`. A session is one JVM: packages only take effect in the first session of a process."""
    if packages:
        ivy = ivy_home()
        ivy.mkdir(parents=True, exist_ok=True)
        conf = {"spark.jars.packages": ",".join(packages), "spark.jars.ivy": str(ivy), **conf}
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = (SparkSession.builder.master(master).appName("pgcdc")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.driver.memory", "1g")
               # Parquet timestamps as TIMESTAMP_MICROS (not INT96) so other readers see UTC instants.
               .config("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS"))
    for k, v in conf.items():
        builder = builder.config(k, v)
    try:
        spark = builder.getOrCreate()
    except Exception:
        if not packages:
            raise
        # Spark's Ivy prints what it could not resolve; the launcher only says the JVM exited.
        raise ConfigError(f"spark.jars.packages: cannot fetch {', '.join(packages)} from Maven Central into "
                          f"{ivy_home()} (offline, or no such release for PySpark {pyspark.__version__}; "
                          f"Ivy's report is above)") from None
    # Imported here: the Python streaming source needs PySpark 4.2; the package helpers above do not.
    from pgcdc.spark.reader import KafkaDataSource

    spark.dataSource.register(KafkaDataSource)
    return spark


def stream_to_tables(spark: SparkSession, reader_options: dict[str, str], root: str, checkpoint: str,
                     fmt: str = "parquet", source: str = "pgcdc_kafka", options: DecodeOptions | None = None,
                     topics: set[str] | None = None, available_now: bool = True, record_format: Any = None,
                     placeholder: str = "__debezium_unavailable_value") -> Any:
    """Structured Streaming: the topics -> foreachBatch(decode, apply) -> tables under `root`.

    `source` is "kafka" in production (Spark's built-in source, its jar on the classpath) and "pgcdc_kafka"
    offline; both give the same rows. With available_now the query drains what is there and stops.
    `record_format`: decode_changes' `fmt` (pgcdc.spark.avro.AvroFormat for Confluent's Avro), reused by every
    micro-batch so that each schema is fetched from the registry once. `placeholder`: the connector's
    `unavailable.value.placeholder` (apply_changes)."""
    from pgcdc.spark.apply import apply_changes
    from pgcdc.spark.changes import decode_changes

    stream = spark.readStream.format(source)
    for k, v in reader_options.items():
        stream = stream.option(k, v)

    def each(batch: Any, batch_id: int) -> None:
        apply_changes(spark, decode_changes(batch, options, topics, record_format), root, fmt,
                      placeholder=placeholder)

    writer = stream.load().writeStream.foreachBatch(each).option("checkpointLocation", checkpoint)
    writer = writer.trigger(availableNow=True) if available_now else writer.trigger(processingTime="2 seconds")
    return writer.start()
