"""Log output for the command line: human lines or JSON lines, with secrets redacted from every record.

The secrets are the values of the loaded configuration's secret properties (`config.is_secret_property`:
database.password, kafka.sasl.password, …). The redaction is a filter on the handler, so it sees the records of
every logger, including librdkafka's and psycopg's, after their arguments are merged and with their traceback.
"""

from __future__ import annotations

import datetime as dt
import logging
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING

import orjson

if TYPE_CHECKING:
    from pgcdc.config import ConnectorConfig

MASK = "***"
HUMAN_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class Redactor(logging.Filter):
    """Replaces every known secret value in a record's message and traceback by `***`."""

    def __init__(self) -> None:
        super().__init__()
        self.secrets: set[str] = set()
        self._formatter = logging.Formatter()

    def add(self, values: Iterable[str]) -> None:
        # Very short values would mask unrelated text (and tell what the secret is not); none are that short
        # in practice, but "" must never be added: it matches everywhere.
        self.secrets.update(v for v in values if v and len(v) >= 3)

    def redact(self, text: str) -> str:
        for secret in sorted(self.secrets, key=len, reverse=True):
            if secret in text:
                text = text.replace(secret, MASK)
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.secrets:
            return True
        message = record.getMessage()
        redacted = self.redact(message)
        if redacted != message:
            record.msg, record.args = redacted, None
        if record.exc_info and not record.exc_text:
            record.exc_text = self._formatter.formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redact(record.stack_info)
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts (UTC, ISO 8601), level, logger, message, and exc_info when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "ts": dt.datetime.fromtimestamp(record.created, dt.UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            entry["exc_info"] = record.exc_text
        if record.stack_info:
            entry["stack_info"] = record.stack_info
        return orjson.dumps(entry).decode()


def setup(level: str, fmt: str = "human") -> Redactor:
    """Configure the root logger for the command line; returns the redactor to give the secrets to."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(HUMAN_FORMAT))
    redactor = Redactor()
    handler.addFilter(redactor)
    root = logging.getLogger()
    for old in root.handlers[:]:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(getattr(logging, level.upper(), logging.INFO))
    return redactor


def secrets_of(config: ConnectorConfig) -> list[str]:
    """The secret values in a loaded configuration.

    A password that equals the user, database or host name is left out: those are shown by design (errors name
    the role), and masking them would hide the identifier while the value is no secret to anyone reading it."""
    from pgcdc.config import is_secret_property

    values = [config.database_password]
    values += [v for k, v in config.kafka.items() if is_secret_property(k)]
    shown = {config.database_user, config.database_dbname, config.database_hostname, config.topic_prefix,
             config.name}
    return [v for v in values if v not in shown]


def redactors() -> list[Redactor]:
    """The redactors installed on the root logger's handlers (by `setup`)."""
    return [f for h in logging.getLogger().handlers for f in h.filters if isinstance(f, Redactor)]


def protect(config: ConnectorConfig) -> None:
    """Make every installed redactor mask this configuration's secrets."""
    for r in redactors():
        r.add(secrets_of(config))


def is_json() -> bool:
    """Whether the root logger writes JSON lines (`setup(..., "json")`)."""
    return any(isinstance(h.formatter, JsonFormatter) for h in logging.getLogger().handlers)


def redact(text: str) -> str:
    """`text` with the secrets known to the installed redactors masked (for error messages printed directly)."""
    for r in redactors():
        text = r.redact(text)
    return text
