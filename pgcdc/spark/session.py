"""A local SparkSession set up as pgcdc's Spark side expects, and the streaming job that feeds the tables."""

from __future__ import annotations

import os
import sys
from typing import Any

from pyspark.sql import SparkSession

from pgcdc.spark.reader import KafkaDataSource
from pgcdc.spark.schema import DecodeOptions


def local_session(master: str = "local[2]", **conf: str) -> SparkSession:
    """local[N] with the settings of NOTES (loopback, this interpreter for workers, no UI, UTC, 2 shuffle
    partitions) and the `pgcdc_kafka` source registered."""
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
    spark = builder.getOrCreate()
    spark.dataSource.register(KafkaDataSource)
    return spark


def stream_to_tables(spark: SparkSession, reader_options: dict[str, str], root: str, checkpoint: str,
                     fmt: str = "parquet", source: str = "pgcdc_kafka", options: DecodeOptions | None = None,
                     topics: set[str] | None = None, available_now: bool = True) -> Any:
    """Structured Streaming: the topics -> foreachBatch(decode, apply) -> tables under `root`.

    `source` is "kafka" in production (Spark's built-in source, its jar on the classpath) and "pgcdc_kafka"
    offline; both give the same rows. With available_now the query drains what is there and stops."""
    from pgcdc.spark.apply import apply_changes
    from pgcdc.spark.changes import decode_changes

    stream = spark.readStream.format(source)
    for k, v in reader_options.items():
        stream = stream.option(k, v)

    def each(batch: Any, batch_id: int) -> None:
        apply_changes(spark, decode_changes(batch, options, topics), root, fmt)

    writer = stream.load().writeStream.foreachBatch(each).option("checkpointLocation", checkpoint)
    writer = writer.trigger(availableNow=True) if available_now else writer.trigger(processingTime="2 seconds")
    return writer.start()
