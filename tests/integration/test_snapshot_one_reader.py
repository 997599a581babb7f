"""The chunked snapshot tests again with `snapshot.max.threads=1`, where the emitting thread reads each chunk
itself (no reader thread): exact under concurrent writes, and stopped mid-COPY it resumes after the last
stored row."""

from __future__ import annotations

import pytest

from pgcdc.local import PostgresCluster
from tests.integration import test_snapshot_chunks as chunks

ONE_READER = {**chunks.CHUNKED, "snapshot.max.threads": "1"}


def test_chunked_snapshot_on_the_emitting_thread_is_exact(pg: PostgresCluster, dbname: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chunks, "CHUNKED", ONE_READER)
    chunks.test_chunked_parallel_snapshot_under_concurrent_writes_is_exact(pg, dbname, 4)


def test_stop_mid_chunk_on_the_emitting_thread_resumes(pg: PostgresCluster, dbname: str,
                                                       caplog: pytest.LogCaptureFixture,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chunks, "CHUNKED", ONE_READER)
    chunks.test_stop_mid_snapshot_resumes_after_the_last_stored_row(pg, dbname, caplog)
