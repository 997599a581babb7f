"""snapshot.mode: whether a start reads a snapshot and whether it streams afterwards, as Debezium decides."""

from __future__ import annotations

import logging
from typing import Any

from pgcdc.capture.position import ResumePoint, snapshot_in_progress
from pgcdc.config import ConnectorConfig

log = logging.getLogger(__name__)


def snapshot_decision(config: ConnectorConfig, stored: dict[str, Any] | None, existing: tuple[int, bool] | None
                      ) -> tuple[bool, bool]:
    """(read a snapshot now, stream afterwards) per snapshot.mode, as Debezium's snapshotters decide.

    An offset written while a snapshot ran (`snapshot_completed: false`) counts as no offset: the snapshot
    continues (pgcdc's cursor) or starts over (Debezium's offset). "Data error": the stored position is
    gone (the slot was dropped, or it confirmed past what was stored)."""
    c = config
    mode = c.snapshot_mode
    completed = stored is not None and not snapshot_in_progress(stored)
    lost = completed and stored is not None and (
        existing is None or ResumePoint.from_offset(stored).start_lsn < existing[0])
    if mode == "no_data":
        return False, True
    if mode == "always":
        return True, True
    if mode in ("initial", "initial_only"):
        return not completed, mode == "initial"
    if mode == "when_needed":
        if lost:
            log.warning("snapshot.mode=when_needed: the stored position is no longer available from slot %s; "
                        "taking a new snapshot", c.slot_name)
        return not completed or lost, True
    # configuration_based
    return c.snapshot_cb_data or (c.snapshot_cb_on_data_error and lost), c.snapshot_cb_stream
