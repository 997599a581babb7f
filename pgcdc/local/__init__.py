"""Throwaway local servers for the embedded demo and for tests: PostgreSQL and a Kafka-protocol broker."""

from pgcdc.local.postgres import PostgresCluster, find_pg_bindir
from pgcdc.local.tansu import TansuBroker, find_tansu

__all__ = ["PostgresCluster", "TansuBroker", "find_pg_bindir", "find_tansu"]
