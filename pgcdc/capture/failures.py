"""`event.processing.failure.handling.mode`: what a change event whose values cannot be written does.

Debezium's EventDispatcher catches a failure while it makes a change or snapshot record
(handleEventProcessingFailure): `fail` (the default) stops the connector, `warn` logs it, `skip` and `ignore` log
it at debug level; in all three the record is left out and capture goes on. pgcdc fails on the same values
(errors.ValueConversionError: a value no converter can write, or one a required field refuses, as Debezium does:
tests/conformance/test_not_null_vs_debezium.py), so the mode applies to those: streamed changes (ChangeCapture)
and initial-snapshot rows (Snapshot).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from pgcdc.errors import ValueConversionError

log = logging.getLogger("pgcdc.capture")

OnFailure = Callable[[ValueConversionError], None]


def failure_handler(mode: str) -> OnFailure | None:
    """None for `fail` (the error stops the connector), else what leaving a change out logs."""
    mode = mode.strip().lower()
    if mode == "fail":
        return None

    def left_out(exc: ValueConversionError) -> None:
        if mode == "warn":
            log.warning("a change was left out (event.processing.failure.handling.mode=warn): %s", exc)
        else:
            log.debug("a change was left out (event.processing.failure.handling.mode=%s): %s", mode, exc)
    return left_out
