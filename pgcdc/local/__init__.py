"""Throwaway local servers for the embedded demo and for tests: PostgreSQL, a Kafka-protocol broker and a schema
registry."""

from pgcdc.local.postgres import PostgresCluster, find_pg_bindir
from pgcdc.local.registry import ApicurioRegistry, find_apicurio
from pgcdc.local.s3 import S3Server, find_s3rver
from pgcdc.local.tansu import TansuBroker, find_tansu

__all__ = ["ApicurioRegistry", "PostgresCluster", "S3Server", "TansuBroker", "find_apicurio", "find_pg_bindir",
           "find_s3rver", "find_tansu"]
