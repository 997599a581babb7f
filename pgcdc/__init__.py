"""pgcdc: PostgreSQL change data capture emitting Debezium-format events."""

__version__ = "0.1.0"
