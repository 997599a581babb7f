"""Debezium's offset.mismatch.strategy, for a stored offset behind the slot's confirmed position: trust_offset stops
(the slot moved past what was delivered), trust_slot and trust_greater_lsn stream on from the slot with a warning;
pgcdc.offset.behind.slot carries it out."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from pgcdc.errors import SourceError
from pgcdc.local import PostgresCluster
from pgcdc.offsets import offset_key
from pgcdc.offsets.file import FileOffsetStore
from pgcdc.runner import Connector
from pgcdc.sink.memory import MemorySink
from tests.harness import Running, make_config, wait_for


@pytest.mark.parametrize("strategy", ["trust_offset", "trust_slot", "trust_greater_lsn"])
def test_offset_behind_the_slot_as_the_strategy_says(pg: PostgresCluster, dbname: str, tmp_path: Path,
                                                     strategy: str, caplog: Any) -> None:
    pg.execute("CREATE TABLE t (id int PRIMARY KEY)", dbname)
    path = str(tmp_path / "offsets.dat")
    config = make_config(pg, dbname, **{"offset.storage": "file", "offset.storage.file.filename": path,
                                        "offset.mismatch.strategy": strategy})
    store = FileOffsetStore(path, offset_key(config.name, config.topic_prefix))
    with Running(config, sink=MemorySink()):
        pg.execute("INSERT INTO t VALUES (1)", dbname)
        wait_for(lambda: store.load() is not None, 20, "an offset")
    good = store.load() or {}
    store.store({**good, "lsn": good["lsn"] - 100, "lsn_proc": good["lsn"] - 100, "lsn_commit": good["lsn"] - 100})
    if strategy == "trust_offset":
        with pytest.raises(SourceError, match="100 bytes behind slot"):
            Connector(config, sink=MemorySink()).run()
    else:
        sink = MemorySink()
        with caplog.at_level(logging.WARNING), Running(config, sink=sink):
            pg.execute("INSERT INTO t VALUES (2)", dbname)
            wait_for(lambda: any(r["topic"] == "test.public.t" for r in sink.records), 20, "the next row")
        assert any("100 bytes behind slot" in r.getMessage() for r in caplog.records)
