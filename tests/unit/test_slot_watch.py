"""The slot watcher says nothing once stopped: a connector's last log line is its own error, not the watcher's."""

from __future__ import annotations

import logging
import threading
from types import SimpleNamespace

import pytest

import pgcdc.source.connection
from pgcdc.errors import PgcdcError
from pgcdc.metrics import SlotWatch


def test_no_line_from_a_connect_that_fails_while_stopping(monkeypatch: pytest.MonkeyPatch,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    entered, release = threading.Event(), threading.Event()

    def connect(_config: object) -> None:
        entered.set()
        release.wait(10)
        raise PgcdcError("database.password: authentication failed")

    monkeypatch.setattr(pgcdc.source.connection, "connect", connect)
    connector = SimpleNamespace(config=SimpleNamespace(slot_name="s"))
    caplog.set_level(logging.DEBUG, logger="pgcdc")
    watch = SlotWatch(connector, 0.01, 0).start()  # type: ignore[arg-type]
    assert entered.wait(10)
    threading.Timer(0.2, release.set).start()  # the failure lands while stop() waits for the thread
    watch.stop(wait_s=5)
    assert not watch._thread.is_alive()
    assert [r.getMessage() for r in caplog.records if "slot watch" in r.getMessage()] == []


def test_a_failure_while_running_is_logged_at_debug(monkeypatch: pytest.MonkeyPatch,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    failed = threading.Event()

    def connect(_config: object) -> None:
        failed.set()
        raise PgcdcError("database.hostname: no route")

    monkeypatch.setattr(pgcdc.source.connection, "connect", connect)
    caplog.set_level(logging.DEBUG, logger="pgcdc")
    watch = SlotWatch(SimpleNamespace(config=SimpleNamespace(slot_name="s")), 0.01, 0).start()  # type: ignore[arg-type]
    assert failed.wait(10)
    for _ in range(100):
        if any("slot watch: database.hostname" in r.getMessage() for r in caplog.records):
            break
        threading.Event().wait(0.02)
    watch.stop()
    assert any(r.levelno == logging.DEBUG and "slot watch: database.hostname: no route" in r.getMessage()
               for r in caplog.records)
