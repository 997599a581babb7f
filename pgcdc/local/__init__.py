"""Throwaway local servers for the embedded demo and for tests: PostgreSQL, Apache Kafka (one broker or a cluster
of three), Tansu (the Kafka-protocol broker the demo runs) and a schema registry (Apicurio)."""

from pgcdc.local.kafka import KAFKA_VERSION, KafkaBroker, KafkaCluster, find_kafka
from pgcdc.local.postgres import PostgresCluster, find_pg_bindir
from pgcdc.local.registry import ApicurioRegistry, find_apicurio
from pgcdc.local.s3 import S3Server, find_s3rver
from pgcdc.local.tansu import TansuBroker, find_tansu

__all__ = ["KAFKA_VERSION", "ApicurioRegistry", "KafkaBroker", "KafkaCluster", "PostgresCluster", "S3Server",
           "TansuBroker", "find_apicurio", "find_kafka", "find_pg_bindir", "find_s3rver", "find_tansu"]
