"""The error tree. Each error is one line for the user; context lives in its fields."""

from __future__ import annotations


class PgcdcError(Exception):
    """Base of every error pgcdc raises on purpose."""


class ConfigError(PgcdcError):
    """A property is missing, unknown or has a bad value. The message names the property.

    `problems` holds every problem found (one line each), so that one run lists them all; the message is the
    first of them."""

    def __init__(self, *problems: str) -> None:
        super().__init__(*problems[:1])
        self.problems: tuple[str, ...] = problems


class SourceError(PgcdcError):
    """PostgreSQL refused or lost us: connection, privileges, slot, publication, wal_level."""


class SlotInUse(SourceError):
    """Another process streams from the slot (a standby waits for it)."""


class SlotLost(SourceError):
    """The slot disappeared while pgcdc used it: creating a new one would silently skip changes."""


class ProtocolError(PgcdcError):
    """Bytes from the replication stream that do not decode as pgoutput."""


class UnsupportedMessage(ProtocolError):
    """A well-formed pgoutput message that this version of pgcdc does not handle."""


class ConversionError(PgcdcError):
    """A column value that cannot be converted; names table, column, type and LSN."""


class ValueConversionError(ConversionError):
    """A change's column value the connector cannot write (Debezium's dispatcher fails on the same values):
    `event.processing.failure.handling.mode` decides whether it stops the connector or the change is left out."""


class SinkError(PgcdcError):
    """The sink (Kafka, file) refused or lost records."""


class RecordTooLarge(SinkError):
    """A record Kafka will never take: retrying cannot help."""


class OffsetError(PgcdcError):
    """The offset store cannot be read or written."""


class LocalServiceError(PgcdcError):
    """A throwaway local server (PostgreSQL, Tansu) could not be started."""
